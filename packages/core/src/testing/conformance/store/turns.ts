import { expect } from 'vitest';
import type { StoreCase } from './harness.js';
import { job, turns, world } from './records.js';

/** Cases of the `turns` area. */
export function turnCases(test: StoreCase) {
  test('turns: get reads the named turns of several jobs in one call, each once, by job id then index', async ({ store }) => {
    const { thread: t } = await world(store);
    const a = job(t);
    const b = job(t);
    await store.jobs.insert({ job: a, turns: turns(a.id, 4), onlyIfIdle: false });
    await store.jobs.insert({ job: b, turns: turns(b.id, 3), onlyIfIdle: false });
    await store.turns.setStates({ jobId: b.id, turnIndexes: [2], state: 'committed' });
    const got = await store.turns.get({
      refs: [
        { jobId: b.id, turnIndex: 2 },
        { jobId: a.id, turnIndex: 3 },
        { jobId: a.id, turnIndex: 0 },
        { jobId: a.id, turnIndex: 3 },
        { jobId: a.id, turnIndex: 9 },
        { jobId: 'obs_missing', turnIndex: 0 },
      ],
    });
    const [first, second] = [a.id, b.id].sort();
    const expected = [
      ...(first === a.id ? [turns(a.id, 4)[0], turns(a.id, 4)[3]] : [{ ...turns(b.id, 3)[2], state: 'committed' }]),
      ...(second === a.id ? [turns(a.id, 4)[0], turns(a.id, 4)[3]] : [{ ...turns(b.id, 3)[2], state: 'committed' }]),
    ];
    expect(got).toEqual(expected);
    expect(await store.turns.get({ refs: [] })).toEqual([]);
    got[0]!.text = 'changed';
    expect((await store.turns.get({ refs: [{ jobId: got[0]!.jobId, turnIndex: got[0]!.turnIndex }] }))[0]!.text).not.toBe('changed');
  });

  test("turns: a job's turnsProcessed counts each turn once, whatever the states set before and repeated indexes", async ({ store }) => {
    const { agent: a, thread: t } = await world(store);
    const j = job(t, { turnsTotal: 5 });
    await store.jobs.insert({ job: j, turns: turns(j.id, 5), onlyIfIdle: false });
    const processed = async () => (await store.jobs.get({ agentId: a.id, jobId: j.id }))?.turnsProcessed;
    await store.turns.setStates({ jobId: j.id, turnIndexes: [0, 1, 1, 2], state: 'read' });
    expect(await processed()).toBe(3);
    await store.turns.setStates({ jobId: j.id, turnIndexes: [0, 1, 2, 3], state: 'committed' });
    expect(await processed()).toBe(4);
    await store.turns.setStates({ jobId: j.id, turnIndexes: [3, 4], state: 'failed', failureReason: 'generation_failed' });
    expect(await processed()).toBe(5);
    await store.turns.setStates({ jobId: j.id, turnIndexes: [4, 9], state: 'pending' });
    expect(await processed()).toBe(4);
    expect(await store.turns.counts({ jobId: j.id })).toEqual({ pending: 1, read: 0, committed: 3, failed: 1 });
  });

  test('turns: setStates records states and failure reasons and recounts turnsProcessed', async ({ store }) => {
    const { agent: a, thread: t } = await world(store);
    const stored = await store.jobs.insert({ job: job(t, { turnsTotal: 4 }), turns: turns('placeholder', 0), onlyIfIdle: false });
    await store.jobs.update({ jobId: stored!.id, patch: {} });
    const withTurns = await store.jobs.insert({ job: job(t, { turnsTotal: 4 }), turns: [], onlyIfIdle: false });
    const j = job(t, { turnsTotal: 4 });
    await store.jobs.insert({ job: j, turns: turns(j.id, 4), onlyIfIdle: false });
    expect(withTurns).not.toBeNull();
    await store.turns.setStates({ jobId: j.id, turnIndexes: [0, 1], state: 'read' });
    expect((await store.jobs.get({ agentId: a.id, jobId: j.id }))?.turnsProcessed).toBe(2);
    await store.turns.setStates({ jobId: j.id, turnIndexes: [0], state: 'committed' });
    await store.turns.setStates({ jobId: j.id, turnIndexes: [1], state: 'failed', failureReason: 'generation_timeout' });
    expect(await store.turns.counts({ jobId: j.id })).toEqual({ pending: 2, read: 0, committed: 1, failed: 1 });
    const listed = await store.turns.list({ jobId: j.id, fromIndex: 0, limit: 4 });
    expect(listed.map((turn) => [turn.state, turn.failureReason])).toEqual([
      ['committed', null],
      ['failed', 'generation_timeout'],
      ['pending', null],
      ['pending', null],
    ]);
    expect((await store.jobs.get({ agentId: a.id, jobId: j.id }))?.turnsProcessed).toBe(2);
    expect(await store.turns.countCommitted({ agentId: a.id })).toBe(1);
    expect(await store.turns.countCommitted({ agentId: 'agent_other' })).toBe(0);
  });
}
