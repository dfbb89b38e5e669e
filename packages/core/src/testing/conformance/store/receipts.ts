import { expect } from 'vitest';
import type { StoreCase } from './harness.js';
import { job, turns, world } from './records.js';

/** Cases of the `receipts` area. */
export function receiptCases(test: StoreCase) {
  test('receipts: recordSupersessions keeps each memory once per job, grouped by turn (null last), and goes with the job', async ({ store, reopen }) => {
    const { agent: a, thread: t } = await world(store);
    const j = job(t, { turnsTotal: 3 });
    await store.jobs.insert({ job: j, turns: turns(j.id, 3), onlyIfIdle: false });
    expect(await store.receipts.supersessions({ jobId: j.id })).toEqual([]);
    await store.receipts.recordSupersessions({ jobId: j.id, supersessions: [{ turnIndex: null, memoryIds: ['mem_z'] }, { turnIndex: 2, memoryIds: ['mem_b', 'mem_a'] }] });
    await store.receipts.recordSupersessions({ jobId: j.id, supersessions: [{ turnIndex: 0, memoryIds: ['mem_c', 'mem_a'] }, { turnIndex: 2, memoryIds: ['mem_d'] }] });
    await store.receipts.recordSupersessions({ jobId: 'obs_missing', supersessions: [{ turnIndex: 0, memoryIds: ['mem_x'] }] });
    const expected = [
      { turnIndex: 0, memoryIds: ['mem_c'] },
      { turnIndex: 2, memoryIds: ['mem_b', 'mem_a', 'mem_d'] },
      { turnIndex: null, memoryIds: ['mem_z'] },
    ];
    expect(await store.receipts.supersessions({ jobId: j.id })).toEqual(expected);
    expect(await store.receipts.supersessions({ jobId: 'obs_missing' })).toEqual([]);
    if (reopen) expect(await (await reopen()).receipts.supersessions({ jobId: j.id })).toEqual(expected);
    await store.jobs.delete({ agentId: a.id, jobIds: [j.id] });
    expect(await store.receipts.supersessions({ jobId: j.id })).toEqual([]);
  });

  test('receipts: recordMerges keeps the latest memory per turn, in turn order, and goes with the job', async ({ store, reopen }) => {
    const { agent: a, thread: t } = await world(store);
    const j = job(t, { turnsTotal: 3 });
    await store.jobs.insert({ job: j, turns: turns(j.id, 3), onlyIfIdle: false });
    expect(await store.receipts.merges({ jobId: j.id })).toEqual([]);
    await store.receipts.recordMerges({ jobId: j.id, merges: [{ turnIndex: 2, memoryId: 'mem_b' }, { turnIndex: 0, memoryId: 'mem_a' }] });
    await store.receipts.recordMerges({ jobId: j.id, merges: [{ turnIndex: 2, memoryId: 'mem_c' }] });
    await store.receipts.recordMerges({ jobId: 'obs_missing', merges: [{ turnIndex: 0, memoryId: 'mem_x' }] });
    const expected = [
      { turnIndex: 0, memoryId: 'mem_a' },
      { turnIndex: 2, memoryId: 'mem_c' },
    ];
    expect(await store.receipts.merges({ jobId: j.id })).toEqual(expected);
    expect(await store.receipts.merges({ jobId: 'obs_missing' })).toEqual([]);
    if (reopen) expect(await (await reopen()).receipts.merges({ jobId: j.id })).toEqual(expected);
    await store.jobs.delete({ agentId: a.id, jobIds: [j.id] });
    expect(await store.receipts.merges({ jobId: j.id })).toEqual([]);
  });

  test('receipts: recordPolicyDrops keeps the latest entries per turn, in turn order, and goes with the job (issue 44)', async ({ store, reopen }) => {
    const { agent: a, thread: t } = await world(store);
    const j = job(t, { turnsTotal: 3 });
    await store.jobs.insert({ job: j, turns: turns(j.id, 3), onlyIfIdle: false });
    expect(await store.receipts.policyDrops({ jobId: j.id })).toEqual([]);
    const drop = (turnIndex: number, category: string | null, rule: string) => ({ turnIndex, category, rule });
    await store.receipts.recordPolicyDrops({ jobId: j.id, drops: [drop(2, 'smalltalk', 'exclude[0]'), drop(0, null, 'only_categories'), drop(2, 'gossip', 'exclude[1]')] });
    await store.receipts.recordPolicyDrops({ jobId: j.id, drops: [drop(0, 'smalltalk', 'exclude[0]')] });
    await store.receipts.recordPolicyDrops({ jobId: 'obs_missing', drops: [drop(0, null, 'x')] });
    const expected = [drop(0, 'smalltalk', 'exclude[0]'), drop(2, 'smalltalk', 'exclude[0]'), drop(2, 'gossip', 'exclude[1]')];
    expect(await store.receipts.policyDrops({ jobId: j.id })).toEqual(expected);
    expect(await store.receipts.policyDrops({ jobId: 'obs_missing' })).toEqual([]);
    if (reopen) expect(await (await reopen()).receipts.policyDrops({ jobId: j.id })).toEqual(expected);
    await store.jobs.delete({ agentId: a.id, jobIds: [j.id] });
    expect(await store.receipts.policyDrops({ jobId: j.id })).toEqual([]);
  });

  test('receipts: recordModelUsage keeps one entry per batch, a re-run batch replaces the batches it overlaps, and goes with the job', async ({ store, reopen }) => {
    const { agent: a, thread: t } = await world(store);
    const j = job(t, { turnsTotal: 6 });
    await store.jobs.insert({ job: j, turns: turns(j.id, 6), onlyIfIdle: false });
    expect(await store.receipts.modelUsage({ jobId: j.id })).toEqual([]);
    const writer = (inputTokens: number, outputTokens: number) => ({ model: 'llm:small', inputTokens, outputTokens });
    const embedder = (inputTokens: number) => ({ model: 'emb:small:8', inputTokens, outputTokens: 0 });
    await store.receipts.recordModelUsage({ jobId: j.id, batch: { turnIndexes: [3, 4, 5], usage: [writer(300, 40), embedder(25)] } });
    await store.receipts.recordModelUsage({ jobId: j.id, batch: { turnIndexes: [0, 1], usage: [writer(1, 1)] } });
    // A re-run of turns 0..2 (after a crash, with other batch bounds) replaces the batch of 0..1.
    await store.receipts.recordModelUsage({ jobId: j.id, batch: { turnIndexes: [0, 1, 2], usage: [embedder(9_000_000_000), writer(120, 30)] } });
    await store.receipts.recordModelUsage({ jobId: 'obs_missing', batch: { turnIndexes: [0], usage: [writer(5, 5)] } });
    const expected = [
      { turnIndexes: [0, 1, 2], usage: [embedder(9_000_000_000), writer(120, 30)] },
      { turnIndexes: [3, 4, 5], usage: [writer(300, 40), embedder(25)] },
    ];
    expect(await store.receipts.modelUsage({ jobId: j.id })).toEqual(expected);
    expect(await store.receipts.modelUsage({ jobId: 'obs_missing' })).toEqual([]);
    if (reopen) expect(await (await reopen()).receipts.modelUsage({ jobId: j.id })).toEqual(expected);
    // A batch that used no model keeps nothing, and still replaces what an earlier run of its turns recorded.
    await store.receipts.recordModelUsage({ jobId: j.id, batch: { turnIndexes: [5], usage: [] } });
    expect(await store.receipts.modelUsage({ jobId: j.id })).toEqual([{ turnIndexes: [0, 1, 2], usage: [embedder(9_000_000_000), writer(120, 30)] }]);
    await store.jobs.delete({ agentId: a.id, jobIds: [j.id] });
    expect(await store.receipts.modelUsage({ jobId: j.id })).toEqual([]);
  });
}
