import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createClient, type MemoryAgentsClient } from '@memory-agents/client';
import { createMemoryService, inMemoryStore, silentLogger, type MemoryService } from '@memory-agents/core';
import { createHandler } from '@memory-agents/http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memoryIndexBackends, type OpenedIndex } from '../support/indexes.js';

// Pin, edit, forget and restore (issue 42) over HTTP through the real handler and the typed client,
// on the in-memory index, LanceDB and (with DATABASE_URL) PostgreSQL. The service clock is driven
// by the test, so the restore window and the sweep that erases after it are exercised for real.
const BACKENDS = memoryIndexBackends('memory_lifecycle');
const DAY = 86_400_000;

const say = (speaker: string, text: string, timestamp: string) => ({ speaker, timestamp, content: [{ type: 'text' as const, text }] });

describe.each(BACKENDS)('memory lifecycle on %s', (_backend, open) => {
  let opened: OpenedIndex;
  let service: MemoryService;
  let server: Server;
  let url: string;
  let key: string;
  let client: MemoryAgentsClient;
  let agentId: string;
  let threadId: string;
  let now = Date.parse('2026-06-01T12:00:00Z');

  beforeAll(async () => {
    opened = await open();
    service = createMemoryService({ store: inMemoryStore(), index: opened.index, logger: silentLogger, clock: { now: () => now }, memoryLifecycle: { restoreWindowDays: 7 } });
    await service.start();
    const org = await service.admin.createOrganization({ name: 'Acme' });
    key = (await service.admin.createKey({ organizationId: org.organizationId })).key;
    server = createServer(createHandler(service, { logger: silentLogger }));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    client = createClient({ baseUrl: url, apiKey: key });
    agentId = (await client.agents.create({ agent_config: { role: 'assistant', objective: 'remember' } })).agent_id;
    await client.agents.waitUntilReady({ agentId });
    threadId = (await client.threads.create({ agentId })).thread_id;
    const observed = await client.threads.observe({ agentId, threadId, observations: [
        say('Alice', 'My locker number at the gym is 4417.', '2026-05-10T10:00:00Z'),
        say('Alice', 'My sister lives in Lisbon.', '2026-05-11T10:00:00Z'),
        say('Alice', 'My dentist is Dr Okafor on Elm Street.', '2026-05-12T10:00:00Z'),
      ] });
    await client.waitForObservation({ agentId, threadId, observationId: observed.observation_id });
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await service.stop();
    await opened.cleanup();
  });

  const find = async (words: string) => (await client.memories.list({ agentId, text_contains: words })).memories[0]!;
  const recall = async (query: string) => (await client.agents.recall({ agentId, query })).memory_context;
  async function call(method: string, path: string, body?: unknown) {
    const response = await fetch(`${url}/v1/agents/${agentId}/memories/${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    });
    return { status: response.status, body: (await response.json()) as { error?: string; code?: string } & Record<string, unknown> };
  }

  it('forget hides a memory from every read path at once, shows why for audit, and restore brings it back', async () => {
    const locker = await find('locker number');
    expect(locker).toMatchObject({ pinned: false, forgotten: null, edited: null });
    expect(await recall('What is my gym locker number?')).toContain('4417');

    const forgotten = await client.memories.forget({ agentId, memoryId: locker.memory_id, reason: 'Alice asked us to forget it' });
    expect(forgotten.forgotten).toEqual({ at: new Date(now).toISOString(), reason: 'Alice asked us to forget it', by: expect.stringMatching(/^\S+$/), restore_until: new Date(now + 7 * DAY).toISOString() });
    expect(await recall('What is my gym locker number?')).not.toContain('4417');
    expect((await client.memories.list({ agentId })).memories.map((memory) => memory.memory_id)).not.toContain(locker.memory_id);
    expect((await client.memories.search({ agentId, query: 'gym locker number' })).hits.map((hit) => hit.memory.memory_id)).not.toContain(locker.memory_id);
    const chat = await client.threads.chat({ agentId, threadId, turn_id: 'c1', message: 'What is my gym locker number?' });
    expect(JSON.stringify(chat)).not.toContain('4417');
    await expect(client.memories.get({ agentId, memoryId: locker.memory_id })).rejects.toMatchObject({ status: 404, code: 'not_found' });
    // Audit: the reason is shown with the memory.
    const audited = await client.memories.get({ agentId, memoryId: locker.memory_id, include_expired: 'true' });
    expect(audited.forgotten?.reason).toBe('Alice asked us to forget it');

    // Forgetting twice, or changing a forgotten memory, is a conflict.
    expect(await call('POST', `${locker.memory_id}/forget`, { reason: 'again' })).toMatchObject({ status: 409, body: { code: 'conflict' } });
    expect(await call('PATCH', locker.memory_id, { pinned: true })).toMatchObject({ status: 409, body: { code: 'conflict' } });

    now += 6 * DAY;
    const restored = await client.memories.restore({ agentId, memoryId: locker.memory_id });
    expect(restored).toMatchObject({ forgotten: null, expires_at: null });
    expect(await recall('What is my gym locker number?')).toContain('4417');
    expect(await call('POST', `${locker.memory_id}/restore`)).toMatchObject({ status: 409, body: { code: 'conflict', error: expect.stringContaining('not forgotten') } });
  });

  it('after the restore window restore is refused, and the sweep erases the memory for good', async () => {
    const locker = await find('locker number');
    await client.memories.forget({ agentId, memoryId: locker.memory_id, reason: 'for good this time' });
    expect(await service.sweepMemories()).toEqual({ erased: 0 });
    now += 7 * DAY;
    const late = await call('POST', `${locker.memory_id}/restore`);
    expect(late).toMatchObject({ status: 409, body: { code: 'conflict', error: expect.stringContaining('restore window') } });
    expect(await service.sweepMemories()).toEqual({ erased: 1 });
    expect(await call('GET', `${locker.memory_id}?include_expired=true`)).toMatchObject({ status: 404, body: { code: 'not_found' } });
    expect((await client.memories.search({ agentId, query: 'gym locker number 4417', include_expired: true })).hits.map((hit) => hit.memory.text).join(' ')).not.toContain('4417');
    expect(await service.sweepMemories()).toEqual({ erased: 0 });
    expect(await recall('Where does my sister live?')).toContain('Lisbon');
  });

  it('pin marks a memory, pinning clears an expiry unless one is given with it, and unpin takes the mark off', async () => {
    const sister = await find('sister');
    await client.memories.update({ agentId, memoryId: sister.memory_id, expires_at: new Date(now + 3 * DAY).toISOString() });
    const pinned = await client.memories.update({ agentId, memoryId: sister.memory_id, pinned: true });
    expect(pinned).toMatchObject({ pinned: true, expires_at: null });
    expect((await find('sister')).pinned).toBe(true);
    const both = await client.memories.update({ agentId, memoryId: sister.memory_id, pinned: true, expires_at: new Date(now + DAY).toISOString() });
    expect(both).toMatchObject({ pinned: true, expires_at: new Date(now + DAY).toISOString() });
    const unpinned = await client.memories.update({ agentId, memoryId: sister.memory_id, pinned: false, expires_at: null });
    expect(unpinned).toMatchObject({ pinned: false, expires_at: null });
  });

  it('an edit writes a new memory that answers use, keeps the old text as superseded history, and names who edited', async () => {
    const dentist = await find('dentist');
    await client.memories.update({ agentId, memoryId: dentist.memory_id, pinned: true });
    const edited = await client.memories.update({ agentId, memoryId: dentist.memory_id, text: 'My dentist is Dr Mensah on Harbour Road.' });
    expect(edited.memory_id).not.toBe(dentist.memory_id);
    expect(edited).toMatchObject({
      text: 'My dentist is Dr Mensah on Harbour Road.',
      writer: 'edit',
      pinned: true,
      superseded_by: null,
      source: dentist.source,
      edited: { at: new Date(now).toISOString(), by: expect.any(String), from_memory_id: dentist.memory_id },
    });
    // The model sees the edit first, and the old text only as history it replaced.
    const lines = (await recall('Who is my dentist?')).split('\n');
    expect(lines[0]).toContain('Dr Mensah on Harbour Road');
    expect(lines.find((line) => line.includes('Okafor'))).toMatch(/no longer current, replaced by \[1\]/);
    // Answers cite it as edited, and not as verified against the turn (its words are the editor's).
    const answer = await client.threads.chat({ agentId, threadId, turn_id: 'c2', message: 'Who is my dentist?' });
    const cited = answer.citations.find((citation) => citation.label.endsWith('(edited)'));
    expect(cited).toMatchObject({ source_id: dentist.source.observation_id, verified: false });
    const history = await client.memories.get({ agentId, memoryId: dentist.memory_id });
    expect(history).toMatchObject({ text: 'My dentist is Dr Okafor on Elm Street.', superseded_by: edited.memory_id, valid_to: new Date(now).toISOString() });
    // History is not edited again: the current memory is.
    expect(await call('PATCH', dentist.memory_id, { text: 'something else' })).toMatchObject({ status: 409, body: { code: 'conflict', error: expect.stringContaining(edited.memory_id) } });
    // Its versions, oldest first, from either end (the history route; the other memories are not part of it).
    for (const memoryId of [dentist.memory_id, edited.memory_id]) {
      const versions = await client.memories.history({ agentId, memoryId });
      expect(versions).toMatchObject({ agent_id: agentId, memory_id: memoryId, truncated: false });
      expect(versions.versions.map((version) => [version.memory_id, version.superseded_by])).toEqual([
        [dentist.memory_id, edited.memory_id],
        [edited.memory_id, null],
      ]);
    }
    expect(await call('GET', 'mem_nothing_here/history')).toMatchObject({ status: 404, body: { code: 'not_found' } });
  });

  it('refuses bad bodies with 422 and a sentence, and unknown memories with 404', async () => {
    const sister = await find('sister');
    for (const body of [{}, { text: '   ' }, { text: 'x'.repeat(4001) }, { pinned: 'yes' }, { expires_at: 'tomorrow' }, { colour: 'red' }]) {
      const answer = await call('PATCH', sister.memory_id, body);
      expect(answer.status, JSON.stringify(body)).toBe(422);
      expect(answer.body).toMatchObject({ code: 'invalid_request', error: expect.stringMatching(/\w/) });
    }
    expect((await call('PATCH', sister.memory_id, { text: 'x'.repeat(4000) })).status).toBe(200);
    for (const body of [{}, { reason: '' }, { reason: 'r'.repeat(501) }, { reason: 'ok', extra: 1 }]) {
      expect((await call('POST', `${sister.memory_id}/forget`, body)).status, JSON.stringify(body)).toBe(422);
    }
    expect((await call('POST', `${sister.memory_id}/forget`, '{not json')).status).toBe(400);
    const unknown = 'mem_01J00000000000000000000000';
    expect(await call('POST', `${unknown}/forget`, { reason: 'r' })).toMatchObject({ status: 404, body: { code: 'not_found' } });
    expect(await call('POST', `${unknown}/restore`)).toMatchObject({ status: 404, body: { code: 'not_found' } });
    expect(await call('PATCH', unknown, { pinned: true })).toMatchObject({ status: 404, body: { code: 'not_found' } });
  });
});
