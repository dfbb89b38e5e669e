import { expect } from 'vitest';
import type { UploadRecord } from '../../../ports/store/index.js';
import type { StoreCase } from './harness.js';
import { iso, T0 } from './harness.js';
import { agent, organization, thread, world } from './records.js';

function ingest(jobId: string, t: { id: string; agentId: string; organizationId: string }, overrides: Partial<UploadRecord> = {}): UploadRecord {
  return {
    jobId,
    organizationId: t.organizationId,
    agentId: t.agentId,
    threadId: t.id,
    sourceId: `src_${'a'.repeat(32)}`,
    stored: true,
    filename: 'paper.pdf',
    docFormat: 'pdf',
    mediaType: 'application/pdf',
    bytes: 1234,
    chunking: { strategy: 'auto', maxChars: 2000, overlapChars: 200 },
    turnsTotal: 3,
    figures: 1,
    figuresDropped: 0,
    wordsTotal: 42,
    deferred: false,
    resumes: null,
    createdAt: iso(T0),
    ...overrides,
  };
}

/** Conformance cases of the `documents` area. */
export function documentCases(test: StoreCase) {
  test('uploads: insert, get, update and the listings by source, thread and organization', async ({ store, reopen }) => {
    const { agent: a, thread: t } = await world(store);
    const other = thread(a);
    await store.threads.insert({ thread: other });
    const first = ingest('obs_1', t);
    const second = ingest('obs_2', other, { createdAt: iso(T0 + 1000), stored: false });
    const elsewhere = ingest('obs_3', t, { sourceId: `src_${'b'.repeat(32)}`, createdAt: iso(T0 + 2000) });
    for (const record of [first, second, elsewhere]) await store.uploads.insert({ record });
    expect(await store.uploads.get({ agentId: a.id, jobId: 'obs_1' })).toEqual(first);
    expect(await store.uploads.get({ agentId: 'agent_other', jobId: 'obs_1' })).toBeNull();
    expect((await store.uploads.listBySource({ agentId: a.id, sourceId: first.sourceId })).map((r) => r.jobId)).toEqual(['obs_1', 'obs_2']);
    expect((await store.uploads.listByThread({ agentId: a.id, threadId: t.id })).map((r) => r.jobId)).toEqual(['obs_3', 'obs_1']);
    expect((await store.uploads.findStored({ organizationId: t.organizationId, sourceId: first.sourceId }))?.jobId).toBe('obs_1');
    expect(await store.uploads.findStored({ organizationId: 'org_other', sourceId: first.sourceId })).toBeNull();
    const updated = await store.uploads.update({ jobId: 'obs_2', patch: { turnsTotal: 9, wordsTotal: 100, deferred: true } });
    expect(updated).toEqual({ ...second, turnsTotal: 9, wordsTotal: 100, deferred: true });
    if (reopen) expect(await (await reopen()).uploads.get({ agentId: a.id, jobId: 'obs_2' })).toEqual(updated);
  });

  test('uploads: deleting the thread or the agent forgets its ingests', async ({ store }) => {
    const { agent: a, thread: t } = await world(store);
    const other = thread(a);
    await store.threads.insert({ thread: other });
    await store.uploads.insert({ record: ingest('obs_1', t) });
    await store.uploads.insert({ record: ingest('obs_2', other) });
    await store.threads.delete({ agentId: a.id, threadId: t.id });
    expect((await store.uploads.listBySource({ agentId: a.id, sourceId: `src_${'a'.repeat(32)}` })).map((r) => r.jobId)).toEqual(['obs_2']);
    await store.agents.delete({ organizationId: a.organizationId, agentId: a.id });
    expect(await store.uploads.listBySource({ agentId: a.id, sourceId: `src_${'a'.repeat(32)}` })).toEqual([]);
  });
}
