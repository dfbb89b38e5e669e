import { describe, expect, it } from 'vitest';
import { inMemoryStore } from '../in-memory/store/index.js';
import type { MemoryHitRecord } from '../ports/memory-index.js';
import type { Store } from '../ports/store/index.js';
import type { ServiceContext } from '../service/context.js';
import { agent, job, organization, thread, turns } from '../testing/conformance/store/records.js';
import { citationOf, citationsOf } from './citations.js';

/** The in-memory store with its turn reads (`listTurns`, `getTurns`) counted. */
async function storeWithTurns() {
  const inner = inMemoryStore();
  await inner.init();
  const org = organization();
  await inner.organizations.insert({ organization: org });
  const a = agent(org.id);
  await inner.agents.insert({ agent: a, maxLive: 10 });
  const t = thread(a);
  await inner.threads.insert({ thread: t });
  const first = job(t);
  await inner.jobs.insert({ job: first, turns: turns(first.id, 200), onlyIfIdle: false });
  const second = job(t);
  await inner.jobs.insert({ job: second, turns: turns(second.id, 3), onlyIfIdle: false });
  let reads = 0;
  const store: Store = Object.create(inner) as Store;
  Object.defineProperty(store, 'turns', {
    get: () => ({
      ...inner.turns,
      list: (r: Parameters<Store['turns']['list']>[0]) => (reads++, inner.turns.list(r)),
      get: (r: Parameters<Store['turns']['get']>[0]) => (reads++, inner.turns.get(r)),
    }),
  });
  const context = { store } as unknown as ServiceContext;
  const memory = (jobId: string, turnIndex: number, text = `turn ${turnIndex} text`): MemoryHitRecord => ({
    id: `mem_${jobId}_${turnIndex}`,
    organizationId: org.id,
    agentId: a.id,
    text,
    keywords: '',
    speaker: 'user',
    occurredAt: null,
    source: { kind: 'turn', threadId: t.id, observationId: jobId, turnIndex },
    createdAt: '2026-01-01T00:00:00.000Z',
    provenance: { writer: 'unknown', jobId: null, span: null }, alsoFrom: [], validFrom: null, validTo: null, supersededBy: null, suspicious: false, expiresAt: null,
  });
  return { context, memory, first: first.id, second: second.id, reads: () => reads };
}

describe('citationsOf', () => {
  it('checks each memory against its own turn, reading every cited turn in one store call', async () => {
    const { context, memory, first, second, reads } = await storeWithTurns();
    const records = [
      memory(first, 7),
      memory(first, 3, 'not what turn 3 said'),
      memory(first, 40),
      memory(second, 2),
      memory(first, 150),
      memory(second, 9), // no such turn
    ];
    const citations = await citationsOf(context, records);
    expect(citations.map((citation) => citation.verified)).toEqual([true, false, true, true, true, false]);
    expect(citations.map((citation) => citation.source_id)).toEqual([first, first, first, second, first, second]);
    expect(reads()).toBe(1);
    // One at a time gives the same citations.
    for (const [i, record] of records.entries()) expect(await citationOf(context, record)).toEqual(citations[i]);
  });
});
