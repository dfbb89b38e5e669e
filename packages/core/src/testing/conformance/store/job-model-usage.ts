import { expect } from 'vitest';
import type { StoreCase } from './harness.js';
import { job, turns, world } from './records.js';

/** Conformance cases of the `jobs` area's model usage (issue 33, receipts). */
export function jobModelUsageCases(test: StoreCase) {
  test('jobs: recordModelUsage keeps one entry per batch, a re-run batch replaces the batches it overlaps, and goes with the job', async ({ store, reopen }) => {
    const { agent: a, thread: t } = await world(store);
    const j = job(t, { turnsTotal: 6 });
    await store.jobs.insert({ job: j, turns: turns(j.id, 6), onlyIfIdle: false });
    expect(await store.jobs.modelUsage({ jobId: j.id })).toEqual([]);
    const writer = (inputTokens: number, outputTokens: number) => ({ model: 'llm:small', inputTokens, outputTokens });
    const embedder = (inputTokens: number) => ({ model: 'emb:small:8', inputTokens, outputTokens: 0 });
    await store.jobs.recordModelUsage({ jobId: j.id, batch: { turnIndexes: [3, 4, 5], usage: [writer(300, 40), embedder(25)] } });
    await store.jobs.recordModelUsage({ jobId: j.id, batch: { turnIndexes: [0, 1], usage: [writer(1, 1)] } });
    // A re-run of turns 0..2 (after a crash, with other batch bounds) replaces the batch of 0..1.
    await store.jobs.recordModelUsage({ jobId: j.id, batch: { turnIndexes: [0, 1, 2], usage: [embedder(9_000_000_000), writer(120, 30)] } });
    await store.jobs.recordModelUsage({ jobId: 'obs_missing', batch: { turnIndexes: [0], usage: [writer(5, 5)] } });
    const expected = [
      { turnIndexes: [0, 1, 2], usage: [embedder(9_000_000_000), writer(120, 30)] },
      { turnIndexes: [3, 4, 5], usage: [writer(300, 40), embedder(25)] },
    ];
    expect(await store.jobs.modelUsage({ jobId: j.id })).toEqual(expected);
    expect(await store.jobs.modelUsage({ jobId: 'obs_missing' })).toEqual([]);
    if (reopen) expect(await (await reopen()).jobs.modelUsage({ jobId: j.id })).toEqual(expected);
    // A batch that used no model keeps nothing, and still replaces what an earlier run of its turns recorded.
    await store.jobs.recordModelUsage({ jobId: j.id, batch: { turnIndexes: [5], usage: [] } });
    expect(await store.jobs.modelUsage({ jobId: j.id })).toEqual([{ turnIndexes: [0, 1, 2], usage: [embedder(9_000_000_000), writer(120, 30)] }]);
    await store.jobs.delete({ agentId: a.id, jobIds: [j.id] });
    expect(await store.jobs.modelUsage({ jobId: j.id })).toEqual([]);
  });
}
