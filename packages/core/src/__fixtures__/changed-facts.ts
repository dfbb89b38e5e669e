import { expect } from 'vitest';
import type { Caller } from '../auth/caller.js';
import type { MemoryService } from '../memory-service.js';
import type { ChangedFact } from './changed-facts-data.js';

export { CHANGED_FACTS, type ChangedFact } from './changed-facts-data.js';

/** A new agent that learned `fact`'s early turns at `before`, then its late turns at `after`. */
export async function learnChangedFact(service: MemoryService, owner: Caller, fact: ChangedFact): Promise<{ agentId: string; threadId: string }> {
  const agent = await service.agents.create({ caller: owner, body: { agent_config: { role: 'assistant', objective: 'remember' } } });
  await service.idle();
  const agentId = agent.agent_id;
  const { thread_id: threadId } = await service.threads.create({ caller: owner, agentId, body: {} });
  for (const [turns, timestamp] of [[fact.early, fact.before], [fact.late, fact.after]] as const) {
    await service.observe({ caller: owner, agentId, threadId, body: { observations: turns.map(([speaker, text]) => ({ content: [{ type: 'text' as const, text }], speaker, timestamp })) } });
    await service.idle();
  }
  return { agentId, threadId };
}

/**
 * Learns `fact` on a new agent and checks, through the public API, that recall and chat give the new
 * value first (the old one only as marked history) and `as_of` an instant before the change gives
 * the old value. Resolves the current answer, for checks of its own.
 */
export async function expectCurrentTruth(service: MemoryService, owner: Caller, fact: ChangedFact): Promise<{ answer: string }> {
  const { agentId, threadId } = await learnChangedFact(service, owner, fact);
  const now = await service.recall({ caller: owner, agentId, body: { query: fact.question } });
  const lines = now.memory_context.split('\n');
  expect(lines[0]).toContain(fact.newValue);
  expect(lines[0]).not.toContain(fact.oldValue);
  // The old value appears only as history, marked and pointing at what replaced it.
  for (const line of lines) if (line.includes(fact.oldValue)) expect(line).toMatch(/no longer current, replaced by \[\d+\]/);

  const then = await service.recall({ caller: owner, agentId, body: { query: fact.question, as_of: fact.asOf } });
  expect(then.memory_context).toContain(fact.oldValue);
  expect(then.memory_context).not.toContain(fact.newValue);

  const answer = await service.chat({ caller: owner, agentId, threadId, body: { turn_id: 'now', message: fact.question } });
  expect(answer.message).toContain(fact.newValue);
  const past = await service.chat({ caller: owner, agentId, threadId, body: { turn_id: 'then', message: fact.question, as_of: fact.asOf } });
  expect(past.message).toContain(fact.oldValue);
  expect(past.message).not.toContain(fact.newValue);
  return { answer: answer.message };
}
