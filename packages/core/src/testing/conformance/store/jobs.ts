import { expect } from 'vitest';
import type { StoreCase } from './harness.js';
import { iso, T0 } from './harness.js';
import { job, learningRecord, thread, turns, world } from './records.js';

/** Conformance cases of the `jobs` area. */
export function jobCases(test: StoreCase) {
  test('jobs: insert stores the job and its turns and assigns increasing seq', async ({ store, reopen }) => {
    const { agent: a, thread: t } = await world(store);
    const first = job(t, { learning: null, kind: 'document', details: { sourceId: 'src_x', filename: 'paper.pdf', converting: true, scannedPages: 4 } });
    const stored = await store.jobs.insert({ job: first, turns: turns(first.id, 3), onlyIfIdle: false });
    expect(stored).toMatchObject({ ...first, seq: expect.any(Number) });
    const second = await store.jobs.insert({ job: job(t), turns: [], onlyIfIdle: false });
    expect(second!.seq).toBeGreaterThan(stored!.seq);
    expect(await store.jobs.get({ agentId: a.id, jobId: first.id })).toEqual(stored);
    expect(await store.jobs.get({ agentId: 'agent_other', jobId: first.id })).toBeNull();
    const listed = await store.turns.list({ jobId: first.id, fromIndex: 1, limit: 10 });
    expect(listed.map((turn) => turn.turnIndex)).toEqual([1, 2]);
    expect((await store.turns.list({ jobId: first.id, fromIndex: 0, limit: 1 }))[0]).toEqual(turns(first.id, 1)[0]);
    if (reopen) expect(await (await reopen()).jobs.get({ agentId: a.id, jobId: first.id })).toEqual(stored);
  });

  test('jobs: a said turn keeps the expiresAt of its details (issue 42), a document turn too', async ({ store, reopen }) => {
    const { thread: t } = await world(store);
    const said = job(t);
    const [plain, expiring, piece] = turns(said.id, 3);
    const until = iso(T0 + 86_400_000);
    const written = [{ ...plain!, details: {} }, { ...expiring!, details: { expiresAt: until } }, { ...piece!, details: { ...piece!.details, expiresAt: until } }];
    await store.jobs.insert({ job: said, turns: written, onlyIfIdle: false });
    expect((await store.turns.list({ jobId: said.id, fromIndex: 0, limit: 10 })).map((turn) => turn.details)).toEqual(written.map((turn) => turn.details));
    if (reopen) expect((await (await reopen()).turns.get({ refs: [{ jobId: said.id, turnIndex: 1 }] }))[0]?.details).toEqual({ expiresAt: iso(T0 + 86_400_000) });
  });

  test('jobs: onlyIfIdle admits exactly one of many concurrent inserts for an agent', async ({ store }) => {
    const { thread: t } = await world(store);
    const results = await Promise.all(Array.from({ length: 6 }, () => store.jobs.insert({ job: job(t), turns: [], onlyIfIdle: true })));
    expect(results.filter((r) => r !== null)).toHaveLength(1);
    // Not idle until that job is final; then admitted again.
    const winner = results.find((r) => r !== null)!;
    expect(await store.jobs.insert({ job: job(t), turns: [], onlyIfIdle: true })).toBeNull();
    expect(await store.jobs.insert({ job: job(t), turns: [], onlyIfIdle: false })).not.toBeNull();
    await store.jobs.update({ jobId: winner.id, patch: { status: 'committed' } });
    expect(await store.jobs.insert({ job: job(t), turns: [], onlyIfIdle: true })).toBeNull();
  });

  test('jobs: an interrupted job still holds the slot; committed, failed and cancelled ones do not', async ({ store }) => {
    const { thread: t } = await world(store);
    const held = await store.jobs.insert({ job: job(t, { status: 'interrupted' }), turns: [], onlyIfIdle: true });
    expect(held).not.toBeNull();
    expect(await store.jobs.insert({ job: job(t), turns: [], onlyIfIdle: true })).toBeNull();
    for (const status of ['committed', 'failed', 'cancelled'] as const) {
      await store.jobs.update({ jobId: held!.id, patch: { status } });
      expect(await store.jobs.nextForAgent({ agentId: t.agentId })).toBeNull();
    }
  });

  test('jobs: nextForAgent is the oldest unfinished job; countAhead counts unfinished jobs ahead on the thread', async ({ store }) => {
    const { agent: a, thread: t } = await world(store);
    const other = thread(a);
    await store.threads.insert({ thread: other });
    const j1 = await store.jobs.insert({ job: job(t), turns: [], onlyIfIdle: false });
    const j2 = await store.jobs.insert({ job: job(other), turns: [], onlyIfIdle: false });
    const j3 = await store.jobs.insert({ job: job(t), turns: [], onlyIfIdle: false });
    expect((await store.jobs.nextForAgent({ agentId: a.id }))?.id).toBe(j1!.id);
    expect(await store.jobs.countAhead({ threadId: t.id, seq: j3!.seq })).toBe(1);
    expect(await store.jobs.countAhead({ threadId: other.id, seq: j2!.seq })).toBe(0);
    await store.jobs.update({ jobId: j1!.id, patch: { status: 'failed' } });
    expect((await store.jobs.nextForAgent({ agentId: a.id }))?.id).toBe(j2!.id);
    expect(await store.jobs.countAhead({ threadId: t.id, seq: j3!.seq })).toBe(0);
    expect(await store.jobs.agentsWithUnfinishedJobs()).toContain(a.id);
    await store.jobs.update({ jobId: j2!.id, patch: { status: 'committed' } });
    await store.jobs.update({ jobId: j3!.id, patch: { status: 'cancelled' } });
    expect(await store.jobs.agentsWithUnfinishedJobs()).not.toContain(a.id);
    // allForThread: every job of the thread, final or not, oldest first; none of another thread.
    expect((await store.jobs.allForThread({ threadId: t.id })).map((j) => [j.id, j.status])).toEqual([
      [j1!.id, 'failed'],
      [j3!.id, 'cancelled'],
    ]);
    expect((await store.jobs.allForThread({ threadId: other.id })).map((j) => j.id)).toEqual([j2!.id]);
    expect(await store.jobs.allForThread({ threadId: 'thread_none' })).toEqual([]);
  });

  test('jobs: update patches fields and keeps the rest', async ({ store }) => {
    const { agent: a, thread: t } = await world(store);
    const stored = await store.jobs.insert({ job: job(t, { kind: 'document', details: { sourceId: 'src_x', filename: 'paper.pdf', converting: true } }), turns: [], onlyIfIdle: false });
    const learning = { ranges: [{ first: 1, last: 2 }], reason: 'generation_failed' as const, message: 'm', refundedCredits: '1.5' };
    const details = { sourceId: 'src_x', filename: 'paper.pdf', converting: false };
    const updated = await store.jobs.update({
      jobId: stored!.id,
      patch: { status: 'failed', error: 'boom', learning, resumedAt: iso(T0 + 5), queued: true, updatedAt: iso(T0 + 6), details },
    });
    expect(updated).toEqual({ ...stored, status: 'failed', error: 'boom', learning, resumedAt: iso(T0 + 5), queued: true, updatedAt: iso(T0 + 6), details });
    expect(await store.jobs.get({ agentId: a.id, jobId: stored!.id })).toEqual(updated);
    expect(await store.jobs.update({ jobId: 'obs_missing', patch: { status: 'failed' } })).toBeNull();
  });

  test('jobs: update with ifStatus patches only a job in one of those statuses', async ({ store }) => {
    const { agent: a, thread: t } = await world(store);
    const stored = await store.jobs.insert({ job: job(t, { status: 'processing' }), turns: [], onlyIfIdle: false });
    const settled = await store.jobs.update({ jobId: stored!.id, patch: { status: 'committed', updatedAt: iso(T0 + 7) }, ifStatus: ['processing'] });
    expect(settled).toEqual({ ...stored, status: 'committed', updatedAt: iso(T0 + 7) });
    // A cancelled job is not overwritten by a worker settling it late.
    await store.jobs.update({ jobId: stored!.id, patch: { status: 'cancelled' } });
    expect(await store.jobs.update({ jobId: stored!.id, patch: { status: 'committed' }, ifStatus: ['processing', 'interrupted'] })).toBeNull();
    expect((await store.jobs.get({ agentId: a.id, jobId: stored!.id }))?.status).toBe('cancelled');
    expect(await store.jobs.update({ jobId: stored!.id, patch: {}, ifStatus: ['cancelled'] })).toMatchObject({ status: 'cancelled' });
    expect(await store.jobs.update({ jobId: stored!.id, patch: {}, ifStatus: ['queued'] })).toBeNull();
    expect(await store.jobs.update({ jobId: 'obs_missing', patch: { status: 'failed' }, ifStatus: ['queued'] })).toBeNull();
  });

  test('jobs: cancelForThread cancels only unfinished jobs of that thread', async ({ store }) => {
    const { agent: a, thread: t } = await world(store);
    const other = thread(a);
    await store.threads.insert({ thread: other });
    const running = await store.jobs.insert({ job: job(t, { status: 'processing' }), turns: [], onlyIfIdle: false });
    const done = await store.jobs.insert({ job: job(t, { status: 'committed' }), turns: [], onlyIfIdle: false });
    const elsewhere = await store.jobs.insert({ job: job(other), turns: [], onlyIfIdle: false });
    expect(await store.jobs.cancelForThread({ threadId: t.id, at: iso(T0 + 1) })).toEqual([running!.id]);
    expect((await store.jobs.get({ agentId: a.id, jobId: running!.id }))?.status).toBe('cancelled');
    expect((await store.jobs.get({ agentId: a.id, jobId: done!.id }))?.status).toBe('committed');
    expect((await store.jobs.get({ agentId: a.id, jobId: elsewhere!.id }))?.status).toBe('queued');
  });

  test('jobs: deleting the thread or the agent removes its jobs, turns and learning records', async ({ store }) => {
    const { org, agent: a, thread: t } = await world(store);
    const j = job(t);
    await store.jobs.insert({ job: j, turns: turns(j.id, 2), onlyIfIdle: false });
    await store.notLearned.insert({ record: learningRecord(org.id, a.id, t.id, j.id) });
    await store.threads.delete({ agentId: a.id, threadId: t.id });
    expect(await store.jobs.get({ agentId: a.id, jobId: j.id })).toBeNull();
    expect(await store.turns.list({ jobId: j.id, fromIndex: 0, limit: 10 })).toEqual([]);
    expect(await store.notLearned.list({ threadId: t.id, limit: 10 })).toEqual([]);
    const t2 = thread(a);
    await store.threads.insert({ thread: t2 });
    const j2 = job(t2);
    await store.jobs.insert({ job: j2, turns: turns(j2.id, 1), onlyIfIdle: false });
    await store.agents.delete({ organizationId: org.id, agentId: a.id });
    expect(await store.jobs.get({ agentId: a.id, jobId: j2.id })).toBeNull();
    expect(await store.jobs.agentsWithUnfinishedJobs()).not.toContain(a.id);
  });

  test('jobs: listForThread pages the thread jobs newest first, whatever their status', async ({ store }) => {
    const { thread: t } = await world(store);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await store.jobs.insert({ job: job(t), turns: [], onlyIfIdle: false }))!.id);
    await store.jobs.update({ jobId: ids[0]!, patch: { status: 'committed' } });
    const first = await store.jobs.listForThread({ threadId: t.id, limit: 2 });
    expect(first.map((j) => j.id)).toEqual([ids[2], ids[1]]);
    const rest = await store.jobs.listForThread({ threadId: t.id, beforeSeq: first[1]!.seq, limit: 2 });
    expect(rest.map((j) => [j.id, j.status])).toEqual([[ids[0], 'committed']]);
    expect(await store.jobs.listForThread({ threadId: t.id, beforeSeq: rest[0]!.seq, limit: 2 })).toEqual([]);
    expect(await store.jobs.listForThread({ threadId: 'thr_other', limit: 2 })).toEqual([]);
  });

  test('jobs: listUnfinished lists the organization unfinished jobs by seq; appendTurns adds turns and counts them', async ({ store }) => {
    const { thread: t } = await world(store);
    const j1 = await store.jobs.insert({ job: job(t), turns: [], onlyIfIdle: false });
    const j2 = await store.jobs.insert({ job: job(t, { status: 'converting', turnsTotal: 0 }), turns: [], onlyIfIdle: false });
    const j3 = await store.jobs.insert({ job: job(t), turns: [], onlyIfIdle: false });
    await store.jobs.update({ jobId: j3!.id, patch: { status: 'committed' } });
    expect((await store.jobs.listUnfinished({ organizationId: t.organizationId })).map((j) => j.id)).toEqual([j1!.id, j2!.id]);
    expect(await store.jobs.listUnfinished({ organizationId: 'org_other' })).toEqual([]);
    const appended = await store.jobs.appendTurns({ jobId: j2!.id, turns: turns(j2!.id, 4) });
    expect(appended!.turnsTotal).toBe(4);
    expect((await store.turns.list({ jobId: j2!.id, fromIndex: 0, limit: 10 })).map((turn) => turn.turnIndex)).toEqual([0, 1, 2, 3]);
    expect(await store.jobs.appendTurns({ jobId: 'obs_missing', turns: [] })).toBeNull();
  });
}
