import type { Caller } from '../auth/caller.js';
import { createMemoryService, type MemoryService, type MemoryServiceOptions } from '../create-memory-service.js';
import { inMemoryMemoryIndex } from '../in-memory/in-memory-memory-index.js';
import { inMemoryStore } from '../in-memory/store/index.js';
import type { MemoryIndex } from '../ports/memory-index.js';
import { silentLogger } from '../service/logger.js';

export const say = (text: string, timestamp = '2025-01-01T10:00:00Z') => ({ speaker: 'Alice', timestamp, content: [{ type: 'text' as const, text }] });

/** The index as it was before write-time merging existed: no `findDuplicates`. */
export function withoutWriteTimeMerges(index: MemoryIndex): MemoryIndex {
  return new Proxy(index, { get: (target, name, receiver) => (name === 'findDuplicates' ? undefined : Reflect.get(target, name, receiver)) });
}

type Reuse = { organizationId: string; agentId: string; threadId: string; clock: { now: () => number; advance: (ms: number) => void } };

/**
 * A started service with one agent and thread whose memories were learned "before maintenance":
 * restatements are not merged when learned (the index hides `findDuplicates`), `unsupersedeAll`
 * makes history look as it did before supersession existed. `reuse` starts another service on the
 * same store and index (a restart).
 */
export async function maintenanceFixture(options: Partial<MemoryServiceOptions> & { reuse?: Reuse; credits?: string } = {}) {
  const { reuse, credits, ...rest } = options;
  let time = Date.parse('2026-01-01T00:00:00Z');
  const clock = reuse?.clock ?? { now: () => time, advance: (ms: number) => void (time += ms) };
  const store = rest.store ?? inMemoryStore();
  const index = rest.index ?? inMemoryMemoryIndex();
  const service: MemoryService = createMemoryService({ logger: silentLogger, clock, ...rest, store, index: withoutWriteTimeMerges(index) });
  await service.start();
  let organizationId: string;
  let agentId: string;
  let threadId: string;
  if (reuse) ({ organizationId, agentId, threadId } = reuse);
  else {
    organizationId = (await service.admin.createOrganization({ name: 'Acme', ...(credits === undefined ? {} : { credits }) })).organizationId;
    const owner = await service.as(organizationId);
    agentId = (await service.agents.create({ caller: owner, body: { agent_config: { role: 'assistant', objective: 'remember' } } })).agent_id;
    await service.idle();
    threadId = (await service.threads.create({ caller: owner, agentId, body: {} })).thread_id;
  }
  const owner = await service.as(organizationId);
  const caller = (endUser?: string): Promise<Caller> => service.as(organizationId, endUser === undefined ? {} : { endUser });
  const list = async () => (await service.memories.list({ caller: owner, agentId, query: { limit: '100' } })).memories;
  return {
    service,
    store,
    index,
    owner,
    caller,
    organizationId,
    agentId,
    threadId,
    clock,
    now: () => clock.now(),
    advance: (ms: number) => clock.advance(ms),
    list,
    /** The texts of the agent's current memories, sorted. */
    currentTexts: async () => (await list()).map((memory) => memory.text).sort(),
    /** Learns each text as a turn of its own observation, waiting for each. */
    async learn(texts: string[], timestamp?: string, speaker = 'Alice') {
      for (const text of texts) {
        await service.observe({ caller: owner, agentId, threadId, body: { observations: [{ ...say(text, timestamp), speaker }] } });
        await service.idle();
      }
    },
    /** Every memory made current again, as if learned before supersession existed. */
    async unsupersedeAll() {
      const { records } = await index.list({ agentId, limit: 1000, includeHistory: true });
      await index.update({ agentId, patches: records.map((record) => ({ id: record.id, validTo: null, supersededBy: null })) });
    },
  };
}
