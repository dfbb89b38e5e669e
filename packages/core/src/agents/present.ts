import type { AgentOutput, ThreadOutput } from '../schemas/outputs.js';
import type { MessageBody } from '../schemas/threads.js';
import type { AgentRecord, MessageRecord, ThreadRecord } from '../ports/store/index.js';

/** Wire shape of an agent (spec "Agent"). */
export function presentAgent(agent: AgentRecord, threads: ThreadRecord[]): AgentOutput {
  return {
    agent_id: agent.id,
    // An agent being imported is never presented (it is hidden); were it, it reads as not ready yet.
    status: agent.status === 'importing' ? 'initializing' : agent.status,
    created_at: agent.createdAt,
    updated_at: agent.updatedAt,
    access: 'owner',
    agent_config: agent.config,
    expires_at: null,
    resumed_from_turn: agent.resumedFromTurn,
    visibility: agent.visibility,
    threads: threads.map((thread) => presentThread(thread)),
  };
}

/** Wire shape of a thread (spec "Thread"); `messages` only when one thread is read. */
export function presentThread(thread: ThreadRecord, messages?: MessageRecord[]): ThreadOutput {
  const body: ThreadOutput = {
    agent_id: thread.agentId,
    thread_id: thread.id,
    status: thread.status,
    created_at: thread.createdAt,
    updated_at: thread.updatedAt,
    title: thread.title,
    metadata: thread.metadata,
  };
  if (messages) body.messages = messages.map(presentMessage);
  return body;
}

export function presentMessage(message: MessageRecord): MessageBody {
  return { speaker: message.speaker, text: message.text, timestamp: message.timestamp, source_ids: message.sourceIds };
}
