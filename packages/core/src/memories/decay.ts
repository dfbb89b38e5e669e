import type { MemoryHitRecord } from '../ports/memory-index.js';
import type { AgentRecord } from '../ports/store/index.js';
import type { ServiceContext } from '../service/context.js';
import { markSourceOf } from './find.js';

const DAY_MS = 86_400_000;

/**
 * The agent's memory decay (agent config `memory_decay`, issue 42) as retrieval's `decay`: each
 * candidate's rank multiplier `0.5 ^ (age / half-life)`, its age counted from when it was learned or
 * last cited in an answer, whichever is later; pinned memories and kinds without a half-life keep 1.
 * Undefined when the agent has no decay (nothing is read then). Never changes a memory.
 */
export function decayFor(context: ServiceContext, agent: AgentRecord): ((records: readonly MemoryHitRecord[]) => Promise<ReadonlyMap<string, number>>) | undefined {
  const config = agent.config.memory_decay;
  const halfLife = { turn: config?.turn_half_life_days, document: config?.document_half_life_days };
  if (halfLife.turn === undefined && halfLife.document === undefined) return undefined;
  return async (records) => {
    const decaying = records.filter((record) => halfLife[record.source.kind] !== undefined);
    const marks = decaying.length === 0 ? [] : await context.store.memoryMarks.get({ agentId: agent.id, memoryIds: decaying.map((record) => record.id) });
    const byId = new Map(marks.map((mark) => [mark.memoryId, mark]));
    const now = context.clock.now();
    const multipliers = new Map<string, number>();
    for (const record of decaying) {
      const mark = byId.get(record.id);
      if (mark?.pinned) continue;
      const since = Math.max(Date.parse(record.createdAt), mark?.citedAt ? Date.parse(mark.citedAt) : 0);
      const ageDays = Math.max(0, now - since) / DAY_MS;
      multipliers.set(record.id, 0.5 ** (ageDays / halfLife[record.source.kind]!));
    }
    return multipliers;
  };
}

/** `decay` as a spread into a retrieve request: nothing when the agent has none. */
export function withDecay(decay: ReturnType<typeof decayFor>): { decay?: NonNullable<ReturnType<typeof decayFor>> } {
  return decay === undefined ? {} : { decay };
}

/** Records that an answer cited these memories (decay's reinforcement), for an agent with decay only. */
export async function reinforce(context: ServiceContext, agent: AgentRecord, records: readonly MemoryHitRecord[]): Promise<void> {
  if (agent.config.memory_decay === undefined || records.length === 0) return;
  await context.store.memoryMarks.cite({
    organizationId: agent.organizationId,
    agentId: agent.id,
    memories: records.map(markSourceOf),
    at: context.nowIso(),
  });
}
