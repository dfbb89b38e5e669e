import type { Caller } from '../auth/caller.js';
import { ServiceError } from '../errors/index.js';
import { ID_PATTERNS } from '../ids/index.js';
import type { AgentRecord, ThreadRecord } from '../ports/store/index.js';
import type { ServiceContext } from '../service/context.js';

/** Deleted, being deleted, or still being imported: answered as if it did not exist. */
export const isHiddenAgent = (agent: AgentRecord | null): boolean => !agent || agent.status === 'importing' || agent.status === 'deleting' || agent.status === 'deleted';

/**
 * The caller's live agent, or 404 `agent_not_found` exactly as for an id that does not exist
 * (spec "Ownership": ids of another organization never reveal that they exist).
 */
export async function findAgent(context: ServiceContext, caller: Caller, agentId: string): Promise<AgentRecord> {
  const agent = ID_PATTERNS.agent.test(agentId)
    ? await context.store.agents.get({ organizationId: caller.organizationId, agentId })
    : null;
  if (!agent || isHiddenAgent(agent)) {
    throw new ServiceError('agent_not_found', `Agent ${agentId} was not found.`);
  }
  return agent;
}

/** Like `findAgent`, and 409 `agent_not_ready` unless the agent is `ready`. */
export async function findReadyAgent(context: ServiceContext, caller: Caller, agentId: string): Promise<AgentRecord> {
  const agent = await findAgent(context, caller, agentId);
  if (agent.status !== 'ready') {
    throw new ServiceError(
      'agent_not_ready',
      agent.status === 'failed'
        ? `Agent ${agentId} failed to initialize; delete it and create a new one.`
        : `Agent ${agentId} is still initializing; poll GET /v1/agents/${agentId} until it is ready.`,
    );
  }
  return agent;
}

/**
 * A thread the caller reaches: with `X-SP-End-User`, only threads that person created; without
 * it, every thread of the agent. Anything else is 404 `thread_not_found`.
 */
export async function findThread(context: ServiceContext, caller: Caller, agent: AgentRecord, threadId: string): Promise<ThreadRecord> {
  const thread = ID_PATTERNS.thread.test(threadId) ? await context.store.threads.get({ agentId: agent.id, threadId }) : null;
  if (
    !thread ||
    thread.organizationId !== caller.organizationId ||
    thread.status === 'deleting' ||
    thread.status === 'deleted' ||
    (caller.endUserId !== null && thread.endUserId !== caller.endUserId)
  ) {
    throw new ServiceError('thread_not_found', `Thread ${threadId} was not found.`);
  }
  return thread;
}
