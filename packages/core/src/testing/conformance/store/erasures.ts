import { expect } from 'vitest';
import type { ErasureRecord } from '../../../ports/store/index.js';
import type { StoreCase } from './harness.js';
import { iso, T0 } from './harness.js';
import { job, learningRecord, turns, world } from './records.js';

const ZERO = { memories: 0, threads: 0, observations: 0, originals: 0, replays: 0 };

/** Conformance cases of the `erasures` area, and of the erasure methods of `jobs` and `idempotency`. */
export function erasureCases(test: StoreCase) {
  test('erasures: insert, get scoped to the agent, update, listByStatus oldest first, reclaim', async ({ store, reopen }) => {
    const { org, agent } = await world(store);
    const erasure = (id: string, at: number): ErasureRecord => ({
      id, organizationId: org.id, agentId: agent.id, endUserId: null, target: { kind: 'thread', id: 'thread_x' }, status: 'queued',
      counts: ZERO, error: null, createdAt: iso(at), updatedAt: iso(at), startedAt: null, completedAt: null,
    });
    await store.erasures.insert({ erasure: erasure('era_2', T0 + 1) });
    await store.erasures.insert({ erasure: { ...erasure('era_1', T0), endUserId: 'eu_1', target: { kind: 'end_user', id: 'eu_1' } } });
    expect(await store.erasures.get({ agentId: agent.id, erasureId: 'era_2' })).toEqual(erasure('era_2', T0 + 1));
    expect(await store.erasures.get({ agentId: 'agent_other', erasureId: 'era_2' })).toBeNull();
    expect((await store.erasures.listByStatus({ statuses: ['queued', 'running'] })).map((e) => e.id)).toEqual(['era_1', 'era_2']);
    const counts = { ...ZERO, memories: 3, threads: 1 };
    const updated = await store.erasures.update({ erasureId: 'era_2', patch: { status: 'completed', counts, startedAt: iso(T0 + 2), completedAt: iso(T0 + 3) }, updatedAt: iso(T0 + 3) });
    expect(updated).toEqual({ ...erasure('era_2', T0 + 1), status: 'completed', counts, startedAt: iso(T0 + 2), completedAt: iso(T0 + 3), updatedAt: iso(T0 + 3) });
    expect(await store.erasures.update({ erasureId: 'era_none', patch: { status: 'failed' }, updatedAt: iso(T0) })).toBeNull();
    expect((await store.erasures.listByStatus({ statuses: ['queued', 'running'] })).map((e) => e.id)).toEqual(['era_1']);
    await store.erasures.reclaim();
    if (reopen) expect((await (await reopen()).erasures.get({ agentId: agent.id, erasureId: 'era_1' }))?.target).toEqual({ kind: 'end_user', id: 'eu_1' });
  });

  test('jobs: delete removes the agent\'s named jobs with their turns, learning records and uploads', async ({ store }) => {
    const { org, agent, thread } = await world(store);
    const gone = job(thread);
    const kept = job(thread);
    for (const j of [gone, kept]) await store.jobs.insert({ job: j, turns: turns(j.id, 2), onlyIfIdle: false });
    await store.notLearned.insert({ record: learningRecord(org.id, agent.id, thread.id, gone.id) });
    await store.uploads.insert({
      record: {
        jobId: gone.id, organizationId: org.id, agentId: agent.id, threadId: thread.id, sourceId: `src_${'a'.repeat(32)}`, stored: true,
        filename: 'a.txt', docFormat: 'txt', mediaType: 'text/plain', bytes: 3, chunking: { strategy: 'auto', maxChars: 100, overlapChars: 0 },
        turnsTotal: 2, figures: 0, figuresDropped: 0, wordsTotal: 2, deferred: false, resumes: null, createdAt: iso(T0),
      },
    });
    expect(await store.jobs.delete({ agentId: 'agent_other', jobIds: [gone.id] })).toBe(0);
    expect(await store.jobs.delete({ agentId: agent.id, jobIds: [gone.id, 'obs_missing'] })).toBe(1);
    expect(await store.jobs.get({ agentId: agent.id, jobId: gone.id })).toBeNull();
    expect(await store.turns.list({ jobId: gone.id, fromIndex: 0, limit: 10 })).toEqual([]);
    expect(await store.notLearned.list({ threadId: thread.id, limit: 10 })).toEqual([]);
    expect(await store.uploads.get({ agentId: agent.id, jobId: gone.id })).toBeNull();
    expect(await store.turns.list({ jobId: kept.id, fromIndex: 0, limit: 10 })).toHaveLength(2);
    expect(await store.jobs.delete({ agentId: agent.id, jobIds: [] })).toBe(0);
  });

  test('idempotency: forget removes the organization\'s records whose response mentions an id', async ({ store }) => {
    const record = (organizationId: string, key: string) => ({ organizationId, key, fingerprint: 'f', createdAt: iso(T0) });
    for (const [organizationId, key, response] of [['org_1', 'a', '{"thread_id":"thread_A"}'], ['org_1', 'b', '{"thread_id":"thread_B"}'], ['org_2', 'c', '{"thread_id":"thread_A"}']] as const) {
      await store.idempotency.claim({ record: record(organizationId, key), notBefore: iso(T0 - 1) });
      await store.idempotency.complete({ organizationId, key, status: 200, response });
    }
    expect(await store.idempotency.forget({ organizationId: 'org_1', mentioning: ['thread_A', 'obs_none'] })).toBe(1);
    expect(await store.idempotency.claim({ record: record('org_1', 'a'), notBefore: iso(T0 - 1) })).toBeNull();
    expect((await store.idempotency.claim({ record: record('org_1', 'b'), notBefore: iso(T0 - 1) }))?.state).toBe('completed');
    expect((await store.idempotency.claim({ record: record('org_2', 'c'), notBefore: iso(T0 - 1) }))?.state).toBe('completed');
    expect(await store.idempotency.forget({ organizationId: 'org_1', mentioning: [] })).toBe(0);
  });
}
