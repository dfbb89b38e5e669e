import { describe, expect, it } from 'vitest';
import { createMemoryService } from './create-memory-service.js';
import { inMemoryMemoryIndex } from './in-memory/in-memory-memory-index.js';
import { inMemoryStore } from './in-memory/store/index.js';
import { KEY_LIFETIME_MS } from './organizations/admin.js';
import { silentLogger } from './service/logger.js';

function setup() {
  let now = Date.parse('2026-01-01T00:00:00.000Z');
  const clock = { now: () => now };
  const service = createMemoryService({ store: inMemoryStore(), clock, logger: silentLogger });
  const advance = (ms: number) => {
    now += ms;
  };
  return { service, advance };
}

const auth = (key: string, extra: { endUser?: string } = {}) => ({
  authorization: `Bearer ${key}`,
  endUser: extra.endUser,
  secFetchSite: undefined,
  requestId: 'req_test',
});

describe('createMemoryService', () => {
  it('refuses retrieval weights that name no signal or are not finite numbers >= 0, and takes the edge values', () => {
    const make = (weights: Record<string, unknown>) => () => createMemoryService({ store: inMemoryStore(), logger: silentLogger, retrieval: { weights: weights as never } });
    expect(make({ speakr: 0.2 })).toThrow(new TypeError('retrieval.weights.speakr is not a retrieval signal; the signals are semantic, speaker, self, time, episode, hyponyms, suspicious'));
    expect(make({ speaker: -0.1 })).toThrow(new RangeError('retrieval.weights.speaker must be a finite number >= 0 (0 switches the signal off), got -0.1'));
    for (const bad of [Number.NaN, Number.POSITIVE_INFINITY, '0.2', null]) expect(make({ time: bad })).toThrow(RangeError);
    for (const edge of [0, Number.MIN_VALUE, 1e6]) expect(make({ episode: edge })).not.toThrow();
    expect(make({ episode: undefined })).not.toThrow();
  });

  it('acts for an organization in process with service.as: no key, the same tenancy, end-user narrowing and limits', async () => {
    const { service } = setup();
    await service.start();
    const acme = await service.admin.createOrganization({ name: 'Acme' });
    const other = await service.admin.createOrganization({ name: 'Other' });
    await service.admin.setLimits({ organizationId: acme.organizationId, limits: { maxAgents: 1 } });

    const org = await service.as(acme.organizationId);
    expect(org).toMatchObject({ organizationId: acme.organizationId, organizationName: 'Acme', endUserId: null, subjectId: acme.organizationId, keyId: 'in_process' });
    expect(org.limits.maxAgents).toBe(1);
    const agent = await service.agents.create({ caller: org, body: { agent_config: { role: 'assistant', objective: 'remember' } } });
    await service.idle();
    await expect(service.agents.create({ caller: org, body: { agent_config: { role: 'assistant', objective: 'a second one' } } })).rejects.toMatchObject({ code: 'agent_quota_exceeded' });

    const alice = await service.as(acme.organizationId, { endUser: 'alice@example.com' });
    const bob = await service.as(acme.organizationId, { endUser: 'bob@example.com' });
    expect(alice.endUserId).toMatch(/^eu_/);
    expect(alice.subjectId).toBe(alice.endUserId);
    const thread = await service.threads.create({ caller: alice, agentId: agent.agent_id, body: { title: 'Alice only' } });
    await expect(service.threads.get({ caller: alice, agentId: agent.agent_id, threadId: thread.thread_id })).resolves.toMatchObject({ title: 'Alice only' });
    await expect(service.threads.get({ caller: bob, agentId: agent.agent_id, threadId: thread.thread_id })).rejects.toMatchObject({ code: 'thread_not_found' });
    await expect(service.agents.get({ caller: await service.as(other.organizationId), agentId: agent.agent_id })).rejects.toMatchObject({ code: 'agent_not_found' });

    // The public surface is typed (a wrong shape does not compile) and still validated at run time.
    // @ts-expect-error role and objective are required
    await expect(service.agents.create({ caller: org, body: { agent_config: {} } })).rejects.toMatchObject({ code: 'invalid_request', status: 422 });
    // @ts-expect-error observations must be a list of turns
    await expect(service.observe({ caller: org, agentId: agent.agent_id, threadId: thread.thread_id, body: { observations: 'hello' } })).rejects.toMatchObject({ code: 'invalid_request' });

    await expect(service.as('org_missing')).rejects.toMatchObject({ code: 'not_found', status: 404 });
    await expect(service.as(acme.organizationId, { endUser: '  ' })).rejects.toMatchObject({ code: 'invalid_request', status: 400 });
    await expect(service.as(acme.organizationId, { endUser: 'x'.repeat(256) })).rejects.toMatchObject({ code: 'invalid_request' });
    await expect(service.as(acme.organizationId, { endUser: 'x'.repeat(255) })).resolves.toBeDefined();
    await service.stop();
  });

  it('expires keys after one year (then 401) and marks them expiring during the last month', async () => {
    const { service, advance } = setup();
    await service.start();
    const org = await service.admin.createOrganization({ name: 'Acme' });
    const { key, keyId } = await service.admin.createKey({ organizationId: org.organizationId });
    await expect(service.authenticate(auth(key))).resolves.toMatchObject({ organizationId: org.organizationId, keyId });
    advance(KEY_LIFETIME_MS - 31 * 86_400_000);
    expect((await service.admin.listKeys({ organizationId: org.organizationId }))[0]).toMatchObject({ status: 'live', expiringSoon: false });
    advance(2 * 86_400_000);
    expect((await service.admin.listKeys({ organizationId: org.organizationId }))[0]).toMatchObject({ status: 'live', expiringSoon: true });
    await expect(service.authenticate(auth(key))).resolves.toBeDefined();
    advance(29 * 86_400_000);
    await expect(service.authenticate(auth(key))).rejects.toMatchObject({ code: 'unauthorized', status: 401 });
    expect((await service.admin.listKeys({ organizationId: org.organizationId }))[0]).toMatchObject({ status: 'expired', expiringSoon: false });
    // An expired key frees its place under the live-key ceiling.
    for (let i = 0; i < 5; i++) await service.admin.createKey({ organizationId: org.organizationId });
    await expect(service.admin.createKey({ organizationId: org.organizationId })).rejects.toMatchObject({ code: 'conflict', status: 409 });
  });

  it('reports per-organization limit overrides in the session, keeping image bytes per turn >= image bytes', async () => {
    const { service } = setup();
    const org = await service.admin.createOrganization({ name: 'Small', limits: { maxUploadBytes: 1024 } });
    const { key } = await service.admin.createKey({ organizationId: org.organizationId });
    const caller = await service.authenticate(auth(key));
    expect(await service.session({ caller })).toMatchObject({ max_upload_bytes: 1024, max_image_bytes: 10485760, max_image_bytes_per_turn: 33554432 });
    await service.admin.setLimits({ organizationId: org.organizationId, limits: { maxImageBytes: 40_000_000, maxImagesPerTurn: 2 } });
    const after = await service.authenticate(auth(key));
    expect(await service.session({ caller: after })).toMatchObject({ max_upload_bytes: 10485760, max_image_bytes: 40_000_000, max_image_bytes_per_turn: 40_000_000, max_images_per_turn: 2 });
    await expect(service.admin.setLimits({ organizationId: org.organizationId, limits: { maxAgents: 0 } })).rejects.toMatchObject({ code: 'invalid_request' });
  });

  it('applies an organization agent quota override', async () => {
    const { service } = setup();
    const org = await service.admin.createOrganization({ name: 'Two agents', limits: { maxAgents: 2 } });
    const { key } = await service.admin.createKey({ organizationId: org.organizationId });
    const caller = await service.authenticate(auth(key));
    const body = { agent_config: { role: 'r', objective: 'o' } };
    await service.agents.create({ caller, body });
    await service.agents.create({ caller, body });
    await expect(service.agents.create({ caller, body })).rejects.toMatchObject({ code: 'agent_quota_exceeded', status: 409 });
  });

  it('answers agent_not_ready while an agent is initializing', async () => {
    const { service } = setup();
    const org = await service.admin.createOrganization({ name: 'Acme' });
    const { key } = await service.admin.createKey({ organizationId: org.organizationId });
    const caller = await service.authenticate(auth(key));
    const agent = await service.agents.create({ caller, body: { agent_config: { role: 'r', objective: 'o' } } });
    // Creation work runs in the background after the 202; the thread create below reads the
    // agent before that work has had a turn.
    await expect(service.threads.create({ caller, agentId: agent.agent_id, body: {} })).rejects.toMatchObject({ code: 'agent_not_ready', status: 409 });
    await service.idle();
    await expect(service.threads.create({ caller, agentId: agent.agent_id, body: {} })).resolves.toMatchObject({ status: 'ready' });
  });

  it('rejects an End-User header when it is empty, whitespace or too long', async () => {
    const { service } = setup();
    const org = await service.admin.createOrganization({ name: 'Acme' });
    const { key } = await service.admin.createKey({ organizationId: org.organizationId });
    for (const endUser of ['', ' \t ', 'x'.repeat(256)]) {
      await expect(service.authenticate(auth(key, { endUser }))).rejects.toMatchObject({ code: 'invalid_request', status: 400 });
    }
    const caller = await service.authenticate(auth(key, { endUser: ' alice ' }));
    expect(caller.subjectId).toMatch(/^eu_/);
    const otherOrg = await service.admin.createOrganization({ name: 'Beta' });
    const otherKey = await service.admin.createKey({ organizationId: otherOrg.organizationId });
    const sameNameElsewhere = await service.authenticate(auth(otherKey.key, { endUser: 'alice' }));
    expect(sameNameElsewhere.subjectId).not.toBe(caller.subjectId);
  });

  it('resumes agents left initializing or deleting by a previous process on start', async () => {
    const store = inMemoryStore();
    const first = createMemoryService({ store, logger: silentLogger });
    const org = await first.admin.createOrganization({ name: 'Acme' });
    const { key } = await first.admin.createKey({ organizationId: org.organizationId });
    const caller = await first.authenticate(auth(key));
    const stuck = await store.agents.insert({
      agent: { id: 'agent_01JAAAAAAAAAAAAAAAAAAAAAAA', organizationId: org.organizationId, status: 'initializing', config: { role: 'r', objective: 'o' }, visibility: 'external', resumedFromTurn: 0, restoreFrom: null, createdAt: new Date().toISOString(), updatedAt: new Date().toISOString() },
      maxLive: 100,
    });
    expect(stuck).toBe(true);
    const second = createMemoryService({ store, logger: silentLogger });
    await second.start();
    await second.idle();
    expect((await second.agents.get({ caller, agentId: 'agent_01JAAAAAAAAAAAAAAAAAAAAAAA' })).status).toBe('ready');
  });

  it('with backgroundWork: false takes no job, on a call or at start: a queued job waits for an instance that runs the workers', async () => {
    const store = inMemoryStore();
    const index = inMemoryMemoryIndex();
    // An admin process (the CLI's admin commands): it may queue a job, and never learns it.
    const admin = createMemoryService({ store, index, logger: silentLogger, backgroundWork: false });
    await admin.start();
    const acme = await admin.admin.createOrganization({ name: 'Acme' });
    const org = await admin.as(acme.organizationId);
    const agent = await admin.agents.create({ caller: org, body: { agent_config: { role: 'assistant', objective: 'remember' } } });
    await admin.idle();
    const thread = await admin.threads.create({ caller: org, agentId: agent.agent_id, body: { title: 'queued' } });
    const observed = await admin.observe({
      caller: org,
      agentId: agent.agent_id,
      threadId: thread.thread_id,
      body: { observations: [{ content: [{ type: 'text', text: 'The boiler in the east wing was serviced on Monday.' }] }] },
    });
    await admin.idle();
    const status = () => admin.observationStatus({ caller: org, agentId: agent.agent_id, threadId: thread.thread_id, observationId: observed.observation_id });
    expect(await status()).toMatchObject({ status: 'queued', resumed_at: null });
    await admin.stop();
    await admin.start();
    await admin.idle();
    expect(await status()).toMatchObject({ status: 'queued', resumed_at: null });
    await admin.stop();

    // A process with the workers (the default) learns it at start, as a fresh job, not a resumed one.
    const worker = createMemoryService({ store, index, logger: silentLogger });
    await worker.start();
    await worker.idle();
    const learned = await worker.observationStatus({ caller: await worker.as(acme.organizationId), agentId: agent.agent_id, threadId: thread.thread_id, observationId: observed.observation_id });
    expect(learned).toMatchObject({ status: 'committed', resumed_at: null });
    await worker.stop();
  });
});
