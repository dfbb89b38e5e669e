import { describe, expect, it } from 'vitest';
import { learningService } from '../__fixtures__/learning-service.js';
import { createMemoryService } from '../create-memory-service.js';
import { isServiceError } from '../errors/index.js';
import { inMemoryMemoryIndex } from '../in-memory/in-memory-memory-index.js';
import { inMemoryStore } from '../in-memory/store/index.js';
import { silentLogger } from '../service/logger.js';
import { inMemoryBlobs } from '../in-memory/in-memory-blobs.js';
import { sourceBlobKey } from '../sources/read-document.js';

const MARKER = 'zqmarkerzq';
const say = (text: string) => [{ speaker: 'ana', content: [{ type: 'text' as const, text }] }];
const file = (filename: string, text: string) => ({ file: { filename, mediaType: null, data: new TextEncoder().encode(text) }, fields: {} });

async function refusal(promise: Promise<unknown>) {
  const error = await promise.then(() => null, (caught: unknown) => caught);
  expect(isServiceError(error)).toBe(true);
  return error as { code: string; status: number; message: string };
}

describe('service.erasures', () => {
  it('erases a thread: memories, messages, jobs, replays and the original go; other threads stay', async () => {
    const blobs = inMemoryBlobs();
    const { service, owner, agentId, threadId, organizationId } = await learningService({ blobs });
    const other = (await service.threads.create({ caller: owner, agentId, body: {} })).thread_id;
    const accepted = await service.observe({ caller: owner, agentId, threadId, idempotencyKey: 'k-observe', body: { observations: say(`The vault code is ${MARKER} 4471.`) } });
    await service.idle();
    const upload = await service.observeFile({ caller: owner, agentId, threadId, ...file('vault.md', `# Vault\n\nThe ${MARKER} vault opens at dawn.\n`) });
    await service.idle();
    await service.observe({ caller: owner, agentId, threadId: other, body: { observations: say('The harbor opens at nine.') } });
    await service.idle();
    await service.idle();
    expect((await service.recall({ caller: owner, agentId, body: { query: `${MARKER} vault` } })).memory_context).toContain(MARKER);
    expect(await blobs.get({ key: sourceBlobKey(organizationId, upload.source_id) })).not.toBeNull();

    const erasure = await service.erasures.erase({ caller: owner, agentId, body: { thread_id: threadId } });
    expect(erasure).toMatchObject({ status: 'queued', target: { kind: 'thread', id: threadId } });
    await service.idle();
    const done = await service.erasures.get({ caller: owner, agentId, erasureId: erasure.erasure_id });
    expect(done).toMatchObject({ status: 'completed', counts: { threads: 1, originals: 1, replays: 1 } });
    expect(done.counts.memories).toBeGreaterThan(0);

    expect((await service.recall({ caller: owner, agentId, body: { query: `${MARKER} vault` } })).memory_context).not.toContain(MARKER);
    expect((await refusal(service.threads.get({ caller: owner, agentId, threadId }))).code).toBe('thread_not_found');
    expect((await refusal(service.observationStatus({ caller: owner, agentId, threadId, observationId: accepted.observation_id }))).status).toBe(404);
    expect(await blobs.get({ key: sourceBlobKey(organizationId, upload.source_id) })).toBeNull();
    expect((await service.recall({ caller: owner, agentId, body: { query: 'harbor' } })).memory_context).toContain('harbor');
    await service.stop();
  });

  it('erases by observation and by source: the job, its memories and the stored original go, other observations stay', async () => {
    const blobs = inMemoryBlobs();
    const { service, owner, agentId, threadId, organizationId } = await learningService({ blobs });
    const kept = await service.observe({ caller: owner, agentId, threadId, body: { observations: say('The harbor opens at nine.') } });
    await service.idle();
    const gone = await service.observe({ caller: owner, agentId, threadId, body: { observations: say(`Observation ${MARKER} secret.`) } });
    await service.idle();
    await service.idle();
    const byObservation = await service.erasures.erase({ caller: owner, agentId, body: { observation_id: gone.observation_id } });
    await service.idle();
    expect(await service.erasures.get({ caller: owner, agentId, erasureId: byObservation.erasure_id })).toMatchObject({ status: 'completed', counts: { observations: 1 } });
    expect((await service.recall({ caller: owner, agentId, body: { query: `${MARKER} secret` } })).memory_context).not.toContain(MARKER);
    expect((await service.observationStatus({ caller: owner, agentId, threadId, observationId: kept.observation_id })).status).toBe('committed');

    const upload = await service.observeFile({ caller: owner, agentId, threadId, ...file('doc.md', `# Doc\n\nThe ${MARKER} document text.\n`) });
    await service.idle();
    await service.idle();
    const bySource = await service.erasures.erase({ caller: owner, agentId, body: { source_id: upload.source_id } });
    await service.idle();
    expect(await service.erasures.get({ caller: owner, agentId, erasureId: bySource.erasure_id })).toMatchObject({ status: 'completed', counts: { observations: 1, originals: 1 } });
    expect((await service.recall({ caller: owner, agentId, body: { query: `${MARKER} document` } })).memory_context).not.toContain(MARKER);
    expect(await blobs.get({ key: sourceBlobKey(organizationId, upload.source_id) })).toBeNull();
    expect((await service.sources.list({ caller: owner, agentId, threadId })).sources ?? []).toEqual([]);
    await service.stop();
  });

  it('erases an end user\'s threads only; tenancy and bad input are refused without a hint', async () => {
    const { service, caller, owner, agentId, organizationId } = await learningService();
    const ana = await caller('ana');
    const bob = await caller('bob');
    const anaThread = (await service.threads.create({ caller: ana, agentId, body: {} })).thread_id;
    const bobThread = (await service.threads.create({ caller: bob, agentId, body: {} })).thread_id;
    await service.observe({ caller: ana, agentId, threadId: anaThread, body: { observations: say(`Ana says ${MARKER}.`) } });
    await service.idle();
    await service.observe({ caller: bob, agentId, threadId: bobThread, body: { observations: say('Bob likes the harbor.') } });
    await service.idle();
    await service.idle();

    // Bob cannot reach Ana's thread, nor erase Ana; another organization reaches nothing.
    expect((await refusal(service.erasures.erase({ caller: bob, agentId, body: { thread_id: anaThread } }))).code).toBe('thread_not_found');
    expect((await refusal(service.erasures.erase({ caller: bob, agentId, body: { end_user_id: 'ana' } }))).status).toBe(404);
    const stranger = await service.as((await service.admin.createOrganization({ name: 'Other' })).organizationId);
    expect((await refusal(service.erasures.erase({ caller: stranger, agentId, body: { end_user_id: 'ana' } }))).code).toBe('agent_not_found');

    const erasure = await service.erasures.erase({ caller: ana, agentId, body: { end_user_id: 'ana' } });
    await service.idle();
    expect(await service.erasures.get({ caller: ana, agentId, erasureId: erasure.erasure_id })).toMatchObject({ status: 'completed', counts: { threads: 1 } });
    expect((await refusal(service.erasures.get({ caller: bob, agentId, erasureId: erasure.erasure_id }))).code).toBe('not_found');
    expect((await refusal(service.erasures.get({ caller: stranger, agentId, erasureId: erasure.erasure_id }))).code).toBe('agent_not_found');
    expect((await refusal(service.erasures.get({ caller: owner, agentId, erasureId: 'era_nope' }))).code).toBe('not_found');
    expect((await service.recall({ caller: owner, agentId, body: { query: MARKER } })).memory_context).not.toContain(MARKER);
    expect((await service.threads.get({ caller: bob, agentId, threadId: bobThread })).thread_id).toBe(bobThread);

    for (const body of [{}, { thread_id: bobThread, end_user_id: 'bob' }, { thread_id: 'thread_bad' }, { source_id: 'src_1' }, { end_user_id: 'x', extra: 1 }, { end_user_id: '' }]) {
      const error = await refusal(service.erasures.erase({ caller: owner, agentId, body: body as never }));
      expect([error.code, error.status]).toEqual(['invalid_request', 422]);
    }
    expect(organizationId).toMatch(/^org_/);
    await service.stop();
  });
});

describe('service.erasures by a person\'s eu_ id (person_id, issue 45)', () => {
  it('erases the person the activity log names, as the header value would; another person and bad ids are refused', async () => {
    const { service, caller, owner, agentId } = await learningService();
    const ana = await caller('ana');
    const bob = await caller('bob');
    const anaThread = (await service.threads.create({ caller: ana, agentId, body: {} })).thread_id;
    const bobThread = (await service.threads.create({ caller: bob, agentId, body: {} })).thread_id;
    await service.observe({ caller: ana, agentId, threadId: anaThread, body: { observations: say(`Ana says ${MARKER}.`) } });
    await service.idle();
    await service.observe({ caller: bob, agentId, threadId: bobThread, body: { observations: say('Bob likes the harbor.') } });
    await service.idle();
    await service.idle();
    // The eu_ id as the organization sees it: in the agent's activity log (the header value is never stored).
    const logged = (await service.logs({ caller: owner, agentId, query: { limit: 100 } })).entries.find((entry) => entry.thread_id === anaThread)!;
    const anaId = logged.user_id;
    expect(anaId).toMatch(/^eu_[0-9a-f]{32}$/);
    // Bob may erase only himself.
    expect((await refusal(service.erasures.erase({ caller: bob, agentId, body: { person_id: anaId } }))).status).toBe(404);

    const erasure = await service.erasures.erase({ caller: owner, agentId, body: { person_id: anaId } });
    expect(erasure.target).toEqual({ kind: 'end_user', id: anaId });
    await service.idle();
    expect(await service.erasures.get({ caller: owner, agentId, erasureId: erasure.erasure_id })).toMatchObject({ status: 'completed', counts: { threads: 1 } });
    expect((await service.recall({ caller: owner, agentId, body: { query: MARKER } })).memory_context).not.toContain(MARKER);
    expect((await service.threads.get({ caller: bob, agentId, threadId: bobThread })).thread_id).toBe(bobThread);

    for (const body of [{ person_id: 'ana' }, { person_id: 'eu_XYZ' }, { person_id: anaId, end_user_id: 'ana' }]) {
      const error = await refusal(service.erasures.erase({ caller: owner, agentId, body: body as never }));
      expect([error.code, error.status]).toEqual(['invalid_request', 422]);
    }
    expect((await refusal(service.erasures.erase({ caller: owner, agentId, body: { person_id: 'eu_x' } }))).message).toContain('person_id');
    await service.stop();
  });
});

describe('stored originals shared within the organization', () => {
  it('an original another agent of the organization still uses stays when one thread is erased', async () => {
    const blobs = inMemoryBlobs();
    const { service, owner, agentId, threadId, organizationId } = await learningService({ blobs });
    const other = (await service.agents.create({ caller: owner, body: { agent_config: { role: 'assistant', objective: 'remember' } } })).agent_id;
    await service.idle();
    const otherThread = (await service.threads.create({ caller: owner, agentId: other, body: {} })).thread_id;
    const bytes = `# Shared\n\nThe shared ${MARKER} handbook.\n`;
    const first = await service.observeFile({ caller: owner, agentId, threadId, ...file('shared.md', bytes) });
    await service.idle();
    const second = await service.observeFile({ caller: owner, agentId: other, threadId: otherThread, ...file('shared.md', bytes) });
    await service.idle();
    expect(second.source_id).toBe(first.source_id);
    const erasure = await service.erasures.erase({ caller: owner, agentId, body: { thread_id: threadId } });
    await service.idle();
    expect((await service.erasures.get({ caller: owner, agentId, erasureId: erasure.erasure_id })).counts.originals).toBe(0);
    expect(await blobs.get({ key: sourceBlobKey(organizationId, first.source_id) })).not.toBeNull();
    // Once the last use goes, so does the original.
    await service.threads.delete({ caller: owner, agentId: other, threadId: otherThread });
    await service.idle();
    expect(await blobs.get({ key: sourceBlobKey(organizationId, first.source_id) })).toBeNull();
    await service.stop();
  });
});

describe('erasing an observation still being learned', () => {
  it('is not learned again: its job is gone before or after the batch in flight', async () => {
    const { service, owner, agentId, threadId } = await learningService();
    const accepted = await service.observe({ caller: owner, agentId, threadId, body: { observations: say(`In flight ${MARKER} secret.`) } });
    const erasure = await service.erasures.erase({ caller: owner, agentId, body: { observation_id: accepted.observation_id } });
    await service.idle();
    expect((await service.erasures.get({ caller: owner, agentId, erasureId: erasure.erasure_id })).status).toBe('completed');
    expect((await service.recall({ caller: owner, agentId, body: { query: `${MARKER} secret flight` } })).memory_context).not.toContain(MARKER);
    expect((await refusal(service.observationStatus({ caller: owner, agentId, threadId, observationId: accepted.observation_id }))).status).toBe(404);
    // The agent learns on afterwards.
    await service.observe({ caller: owner, agentId, threadId, body: { observations: say('The harbor opens at nine.') } });
    await service.idle();
    expect((await service.recall({ caller: owner, agentId, body: { query: 'harbor' } })).memory_context).toContain('harbor');
    await service.stop();
  });
});

describe('erasure jobs across a restart', () => {
  it('an erasure left queued by a stopped process runs when the next one starts', async () => {
    const store = inMemoryStore();
    const index = inMemoryMemoryIndex();
    const blobs = inMemoryBlobs();
    const first = await learningService({ store, index, blobs });
    const { service, owner, agentId, threadId, organizationId } = first;
    await service.observe({ caller: owner, agentId, threadId, body: { observations: say(`Restart ${MARKER} secret.`) } });
    await service.idle();
    await service.stop();
    // What `erase` stores before its background work starts: the process stopped right there.
    const now = new Date().toISOString();
    await store.erasures.insert({
      erasure: {
        id: 'era_01J00000000000000000000000', organizationId, agentId, endUserId: null, target: { kind: 'thread', id: threadId }, status: 'queued',
        counts: { memories: 0, threads: 0, observations: 0, originals: 0, replays: 0 }, error: null, createdAt: now, updatedAt: now, startedAt: null, completedAt: null,
      },
    });
    const second = createMemoryService({ store, index, blobs, logger: silentLogger });
    await second.start();
    await second.idle();
    const caller = await second.as(organizationId);
    expect(await second.erasures.get({ caller, agentId, erasureId: 'era_01J00000000000000000000000' })).toMatchObject({ status: 'completed', counts: { threads: 1 } });
    expect((await second.recall({ caller, agentId, body: { query: `${MARKER} secret` } })).memory_context).not.toContain(MARKER);
    await second.stop();
  });
});
