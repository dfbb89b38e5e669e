import { expect } from 'vitest';
import type { StoreCase } from './harness.js';
import { iso, T0 } from './harness.js';
import { job, turns, world } from './records.js';
import type { JobRepoint } from '../../../ports/store/index.js';

/** Cases of the `repoints` area. */
export function repointCases(test: StoreCase) {
  test('repoints: record replaces per memory, list reads by memory id, clear forgets, all go with the job', async ({ store, reopen }) => {
    const { org, agent, thread } = await world(store);
    const j = job(thread);
    await store.jobs.insert({ job: j, turns: turns(j.id, 1), onlyIfIdle: false });
    const repoint = (memoryId: string, overrides: Partial<JobRepoint> = {}): JobRepoint => ({
      memoryId, organizationId: org.id, agentId: agent.id, createdAt: iso(T0), writer: 'default', validTo: null, supersededBy: null, suspicious: false,
      remaining: [
        { kind: 'turn', threadId: 'thread_k', observationId: 'obs_k', turnIndex: 2 },
        { kind: 'document', threadId: 'thread_d', observationId: 'obs_d', turnIndex: 0, sourceId: 'src_d', page: 3, filename: 'd.pdf' },
      ],
      ...overrides,
    });
    expect(await store.repoints.list({ jobId: j.id })).toEqual([]);
    await store.repoints.record({ jobId: j.id, repoint: repoint('mem_b') });
    await store.repoints.record({ jobId: j.id, repoint: repoint('mem_a', { remaining: [] }) });
    const latest = repoint('mem_a', { validTo: iso(T0 + 5), supersededBy: 'mem_z', suspicious: true, writer: 'llm' });
    await store.repoints.record({ jobId: j.id, repoint: latest });
    await store.repoints.record({ jobId: 'obs_missing', repoint: repoint('mem_x') });
    const expected = [latest, repoint('mem_b')];
    expect(await store.repoints.list({ jobId: j.id })).toEqual(expected);
    expect(await store.repoints.list({ jobId: 'obs_missing' })).toEqual([]);
    if (reopen) expect(await (await reopen()).repoints.list({ jobId: j.id })).toEqual(expected);
    await store.repoints.clear({ jobId: j.id, memoryId: 'mem_a' });
    await store.repoints.clear({ jobId: j.id, memoryId: 'mem_none' });
    expect(await store.repoints.list({ jobId: j.id })).toEqual([repoint('mem_b')]);
    await store.jobs.delete({ agentId: agent.id, jobIds: [j.id] });
    expect(await store.repoints.list({ jobId: j.id })).toEqual([]);
  });
}
