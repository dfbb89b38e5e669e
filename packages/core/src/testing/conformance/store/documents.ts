import { expect } from 'vitest';
import type { StoreAreas } from '../../../ports/store/index.js';
import type { DocumentIngestRecord } from '../../../ports/store/index.js';
import type { storeCase } from './harness.js';
import { iso, T0 } from './harness.js';
import { agent, job, organization, thread, turns } from './records.js';

async function world(store: StoreAreas) {
  const org = organization();
  await store.organizations.insert({ organization: org });
  const a = agent(org.id);
  await store.agents.insert({ agent: a, maxLive: 10 });
  const t = thread(a);
  await store.threads.insert({ thread: t });
  return { org, agent: a, thread: t };
}

function ingest(jobId: string, t: { id: string; agentId: string; organizationId: string }, overrides: Partial<DocumentIngestRecord> = {}): DocumentIngestRecord {
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

export function documentCases(test: ReturnType<typeof storeCase>) {
  test('documents: insert, get, update and the listings by source, thread and organization', async ({ store, reopen }) => {
    const { agent: a, thread: t } = await world(store);
    const other = thread(a);
    await store.threads.insert({ thread: other });
    const first = ingest('obs_1', t);
    const second = ingest('obs_2', other, { createdAt: iso(T0 + 1000), stored: false });
    const elsewhere = ingest('obs_3', t, { sourceId: `src_${'b'.repeat(32)}`, createdAt: iso(T0 + 2000) });
    for (const record of [first, second, elsewhere]) await store.documents.insert({ record });
    expect(await store.documents.get({ agentId: a.id, jobId: 'obs_1' })).toEqual(first);
    expect(await store.documents.get({ agentId: 'agent_other', jobId: 'obs_1' })).toBeNull();
    expect((await store.documents.listBySource({ agentId: a.id, sourceId: first.sourceId })).map((r) => r.jobId)).toEqual(['obs_1', 'obs_2']);
    expect((await store.documents.listByThread({ agentId: a.id, threadId: t.id })).map((r) => r.jobId)).toEqual(['obs_3', 'obs_1']);
    expect((await store.documents.findStored({ organizationId: t.organizationId, sourceId: first.sourceId }))?.jobId).toBe('obs_1');
    expect(await store.documents.findStored({ organizationId: 'org_other', sourceId: first.sourceId })).toBeNull();
    const updated = await store.documents.update({ jobId: 'obs_2', patch: { turnsTotal: 9, wordsTotal: 100, deferred: true } });
    expect(updated).toEqual({ ...second, turnsTotal: 9, wordsTotal: 100, deferred: true });
    if (reopen) expect(await (await reopen()).documents.get({ agentId: a.id, jobId: 'obs_2' })).toEqual(updated);
  });

  test('documents: deleting the thread or the agent forgets its ingests', async ({ store }) => {
    const { agent: a, thread: t } = await world(store);
    const other = thread(a);
    await store.threads.insert({ thread: other });
    await store.documents.insert({ record: ingest('obs_1', t) });
    await store.documents.insert({ record: ingest('obs_2', other) });
    await store.threads.delete({ agentId: a.id, threadId: t.id });
    expect((await store.documents.listBySource({ agentId: a.id, sourceId: `src_${'a'.repeat(32)}` })).map((r) => r.jobId)).toEqual(['obs_2']);
    await store.agents.delete({ organizationId: a.organizationId, agentId: a.id });
    expect(await store.documents.listBySource({ agentId: a.id, sourceId: `src_${'a'.repeat(32)}` })).toEqual([]);
  });

  test('idempotency: exactly one of concurrent claims wins; completed keys replay; expired keys are replaced', async ({ store }) => {
    const record = { organizationId: 'org_1', key: 'k1', fingerprint: 'f1', createdAt: iso(T0) };
    const results = await Promise.all(Array.from({ length: 5 }, () => store.idempotency.claim({ record, notBefore: iso(T0 - 1000) })));
    expect(results.filter((r) => r === null)).toHaveLength(1);
    expect(results.filter((r) => r !== null).every((r) => r!.state === 'in_flight' && r!.fingerprint === 'f1')).toBe(true);
    await store.idempotency.complete({ organizationId: 'org_1', key: 'k1', status: 202, response: '{"a":1}' });
    expect(await store.idempotency.claim({ record: { ...record, fingerprint: 'f2' }, notBefore: iso(T0 - 1000) })).toEqual({ ...record, state: 'completed', status: 202, response: '{"a":1}' });
    // Another organization's key of the same name is separate.
    expect(await store.idempotency.claim({ record: { ...record, organizationId: 'org_2' }, notBefore: iso(T0 - 1000) })).toBeNull();
    // Once older than notBefore, a claim replaces it.
    expect(await store.idempotency.claim({ record: { ...record, fingerprint: 'f3', createdAt: iso(T0 + 5000) }, notBefore: iso(T0 + 1) })).toBeNull();
    expect((await store.idempotency.claim({ record, notBefore: iso(T0) }))?.fingerprint).toBe('f3');
    await store.idempotency.release({ organizationId: 'org_1', key: 'k1' });
    expect(await store.idempotency.claim({ record, notBefore: iso(T0) })).toBeNull();
  });

  test('idempotency: an in-flight key claimed before inFlightNotBefore is taken over; a completed one is kept', async ({ store }) => {
    const record = { organizationId: 'org_1', key: 'k1', fingerprint: 'f1', createdAt: iso(T0) };
    const notBefore = iso(T0 - 60_000);
    expect(await store.idempotency.claim({ record, notBefore })).toBeNull();
    // Claimed at or after inFlightNotBefore: still running, returned untouched.
    expect(await store.idempotency.claim({ record: { ...record, fingerprint: 'f2', createdAt: iso(T0 + 10) }, notBefore, inFlightNotBefore: iso(T0) })).toMatchObject({
      fingerprint: 'f1',
      state: 'in_flight',
    });
    // Claimed before it: abandoned by a stopped process, replaced by the new claim.
    expect(await store.idempotency.claim({ record: { ...record, fingerprint: 'f2', createdAt: iso(T0 + 10) }, notBefore, inFlightNotBefore: iso(T0 + 1) })).toBeNull();
    expect(await store.idempotency.claim({ record, notBefore })).toMatchObject({ fingerprint: 'f2', state: 'in_flight', createdAt: iso(T0 + 10) });
    await store.idempotency.complete({ organizationId: 'org_1', key: 'k1', status: 202, response: '{"b":2}' });
    expect(await store.idempotency.claim({ record: { ...record, fingerprint: 'f3' }, notBefore, inFlightNotBefore: iso(T0 + 1_000_000) })).toMatchObject({
      fingerprint: 'f2',
      state: 'completed',
      response: '{"b":2}',
    });
  });

  test('idempotency: a claim and its completion in one transaction commit together, and a rejected transaction leaves the key free', async ({ store, reopen }) => {
    const record = { organizationId: 'org_1', key: 'k-tx', fingerprint: 'f1', createdAt: iso(T0) };
    const notBefore = iso(T0 - 1000);
    await expect(
      store.transaction(async (tx) => {
        expect(await tx.idempotency.claim({ record, notBefore })).toBeNull();
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    await store.transaction(async (tx) => {
      expect(await tx.idempotency.claim({ record, notBefore })).toBeNull();
      await tx.idempotency.complete({ organizationId: 'org_1', key: 'k-tx', status: 202, response: '{"c":3}' });
    });
    const expected = { ...record, state: 'completed', status: 202, response: '{"c":3}' };
    expect(await store.idempotency.claim({ record: { ...record, fingerprint: 'other' }, notBefore })).toEqual(expected);
    if (reopen) expect(await (await reopen()).idempotency.claim({ record: { ...record, fingerprint: 'other' }, notBefore })).toEqual(expected);
  });

  test('images: insert keeps the first copy; get is scoped to the organization', async ({ store, reopen }) => {
    const image = { id: `img_${'c'.repeat(32)}`, organizationId: 'org_1', mediaType: 'image/png', bytes: 10, width: 2, height: 3, createdAt: iso(T0) };
    await store.images.insert({ image });
    await store.images.insert({ image: { ...image, createdAt: iso(T0 + 1) } });
    expect(await store.images.get({ organizationId: 'org_1', imageId: image.id })).toEqual(image);
    expect(await store.images.get({ organizationId: 'org_2', imageId: image.id })).toBeNull();
    if (reopen) expect(await (await reopen()).images.get({ organizationId: 'org_1', imageId: image.id })).toEqual(image);
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
    expect((await store.jobs.listTurns({ jobId: j2!.id, fromIndex: 0, limit: 10 })).map((turn) => turn.turnIndex)).toEqual([0, 1, 2, 3]);
    expect(await store.jobs.appendTurns({ jobId: 'obs_missing', turns: [] })).toBeNull();
  });
}
