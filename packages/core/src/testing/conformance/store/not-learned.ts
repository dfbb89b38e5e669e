import { expect } from 'vitest';
import type { StoreCase } from './harness.js';
import { agent, learningRecord, thread, world } from './records.js';

/** Conformance cases of the `learning` area. */
export function learningCases(test: StoreCase) {
  test('not learned: list newest first with paging; takeUnreported hands each record out exactly once', async ({ store }) => {
    const { org, agent: a, thread: t } = await world(store);
    const ids: number[] = [];
    for (let i = 0; i < 4; i++) ids.push(await store.notLearned.insert({ record: learningRecord(org.id, a.id, t.id, `obs_${i}`, i === 0 ? null : '2.25') }));
    const page = await store.notLearned.list({ threadId: t.id, limit: 2 });
    expect(page.map((r) => r.id)).toEqual([ids[3], ids[2]]);
    expect(page[0]).toMatchObject({ ranges: [{ first: 2, last: 3 }], reason: 'generation_failed', refundedCredits: '2.25', reported: false, jobId: 'obs_3' });
    expect((await store.notLearned.list({ threadId: t.id, limit: 10, beforeId: ids[2] })).map((r) => r.id)).toEqual([ids[1], ids[0]]);
    const takes = await Promise.all([store.notLearned.takeUnreported({ threadId: t.id }), store.notLearned.takeUnreported({ threadId: t.id })]);
    const taken = takes.flat().map((r) => r.id).sort((x, y) => x - y);
    expect(taken).toEqual([...ids].sort((x, y) => x - y));
    expect(await store.notLearned.takeUnreported({ threadId: t.id })).toEqual([]);
    expect((await store.notLearned.list({ threadId: t.id, limit: 10 }))[3]).toMatchObject({ reported: true, refundedCredits: null });
  });
}
