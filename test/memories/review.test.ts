import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createClient, type MemoryAgentsClient } from '@memory-agents/client';
import { createMemoryService, inMemoryStore, silentLogger, type MemoryService } from '@memory-agents/core';
import { createHandler } from '@memory-agents/http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memoryIndexBackends, type OpenedIndex } from '../support/indexes.js';

// The review queue (issue 43) over HTTP through the real handler and the typed client, on the
// in-memory index, LanceDB and (with DATABASE_URL) PostgreSQL: held memories hidden from every read
// path, approval superseding what they replace, decline remembered, undo, the refusals, and the
// retention sweep leaving the queue alone. The service clock is driven by the test.
const BACKENDS = memoryIndexBackends('memory_review');
const DAY = 86_400_000;

const say = (speaker: string, text: string, timestamp: string) => ({ speaker, timestamp, content: [{ type: 'text' as const, text }] });
const CONFIG = { role: 'assistant', objective: 'remember' };

describe.each(BACKENDS)('review queue on %s', (_backend, open) => {
  let opened: OpenedIndex;
  let service: MemoryService;
  let server: Server;
  let url: string;
  let key: string;
  let client: MemoryAgentsClient;
  let agentId: string;
  let threadId: string;
  let now = Date.parse('2026-06-01T12:00:00Z');

  async function observe(lines: ReturnType<typeof say>[], thread = threadId) {
    const observed = await client.threads.observe({ agentId, threadId: thread, observations: lines });
    await client.waitForObservation({ agentId, threadId: thread, observationId: observed.observation_id });
    return observed.observation_id;
  }
  const recall = async (query: string) => (await client.agents.recall({ agentId, query })).memory_context;
  async function call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
    const response = await fetch(`${url}/v1/agents/${agentId}/${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, body: (await response.json()) as { error?: string; code?: string } & Record<string, unknown> };
  }

  beforeAll(async () => {
    opened = await open();
    service = createMemoryService({ store: inMemoryStore(), index: opened.index, logger: silentLogger, clock: { now: () => now }, memoryLifecycle: { restoreWindowDays: 7, expiredRetentionDays: 1 } });
    await service.start();
    const org = await service.admin.createOrganization({ name: 'Acme' });
    key = (await service.admin.createKey({ organizationId: org.organizationId })).key;
    server = createServer(createHandler(service, { logger: silentLogger }));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    client = createClient({ baseUrl: url, apiKey: key });
    agentId = (await client.agents.create({ agent_config: CONFIG })).agent_id;
    await client.agents.waitUntilReady({ agentId });
    threadId = (await client.threads.create({ agentId })).thread_id;
    await observe([say('Alice', 'My phone number is 555 0100.', '2026-05-10T10:00:00Z')]);
    await client.agents.update({ agentId, agent_config: { ...CONFIG, review_mode: 'all' } });
    await observe([say('Alice', 'My phone number is 555 0199 now.', '2026-05-20T10:00:00Z'), say('Alice', 'Remember that I hate olives on pizza.', '2026-05-20T10:01:00Z')]);
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await service.stop();
    await opened.cleanup();
  });

  it('hides what waits from recall, chat, search and the list; approving supersedes the old fact; undo brings it back', async () => {
    const queue = await client.review.list({ agentId });
    expect(queue).toMatchObject({ review_mode: 'all', state: 'pending', next_cursor: null });
    expect(queue.items.map((item) => item.memory.text).sort()).toEqual(['My phone number is 555 0199 now.', 'Remember that I hate olives on pizza.']);
    const phone = queue.items.find((item) => item.memory.text.includes('0199'))!;
    const [old] = (await client.memories.list({ agentId, text_contains: '0100' })).memories;
    expect(phone.supersedes).toEqual([old!.memory_id]);

    expect((await recall('What is Alice’s phone number?')).split('\n')[0]).toContain('555 0100');
    expect(await recall('olives on pizza')).not.toContain('olives');
    expect((await client.memories.list({ agentId })).memories.map((memory) => memory.text)).toEqual(['My phone number is 555 0100.']);
    expect((await client.memories.search({ agentId, query: 'phone number 0199' })).hits.map((hit) => hit.memory.memory_id)).not.toContain(phone.memory.memory_id);
    const chat = await client.threads.chat({ agentId, threadId, turn_id: 'c1', message: 'Does Alice like olives?' });
    expect(JSON.stringify(chat.citations ?? [])).not.toContain('olives');
    expect(await client.memories.get({ agentId, memoryId: phone.memory.memory_id, include_expired: 'true' })).toMatchObject({ review_state: 'pending' });
    // A memory that waits is decided in the queue, not pinned or forgotten on the memories route.
    expect(await call('PATCH', `memories/${phone.memory.memory_id}`, { pinned: true })).toMatchObject({ status: 409, body: { code: 'conflict' } });

    const approved = await client.review.approve({ agentId, memoryId: phone.memory.memory_id });
    expect(approved).toMatchObject({ state: 'approved', superseded: [old!.memory_id], memory: { review_state: 'approved' } });
    expect((await recall('What is Alice’s phone number?')).split('\n')[0]).toContain('555 0199');
    expect(await client.memories.get({ agentId, memoryId: old!.memory_id })).toMatchObject({ superseded_by: phone.memory.memory_id });

    const undone = await client.review.undo({ agentId, memoryId: phone.memory.memory_id });
    expect(undone.decisions.map((decision) => decision.action)).toEqual(['approve', 'undo']);
    expect((await recall('What is Alice’s phone number?')).split('\n')[0]).toContain('555 0100');
    expect(await client.memories.get({ agentId, memoryId: old!.memory_id })).toMatchObject({ superseded_by: null, valid_to: null });
    await client.review.approve({ agentId, memoryId: phone.memory.memory_id });
    expect((await recall('What is Alice’s phone number?')).split('\n')[0]).toContain('555 0199');
  });

  it('a declined memory is never proposed again, and the retention sweep leaves the queue alone', async () => {
    const olives = (await client.review.list({ agentId })).items.find((item) => item.memory.text.includes('olives'))!;
    const declined = await client.review.decline({ agentId, memoryId: olives.memory.memory_id, reason: 'a joke, not a preference' });
    expect(declined.decisions).toEqual([{ action: 'decline', at: new Date(now).toISOString(), by: expect.stringMatching(/^\S+$/), reason: 'a joke, not a preference' }]);
    const other = (await client.threads.create({ agentId })).thread_id;
    const again = await observe([say('Alice', 'Remember that I hate olives on pizza!', '2026-05-22T10:00:00Z'), say('Alice', 'My locker number at the gym is 4417.', '2026-05-22T10:01:00Z')], other);
    const pending = (await client.review.list({ agentId })).items.map((item) => item.memory.text);
    expect(pending).toEqual(['My locker number at the gym is 4417.']);
    const receipt = await client.threads.observationReceipt({ agentId, threadId: other, observationId: again });
    expect(JSON.stringify(receipt)).toContain('declined in review');

    // Long after the retention of expired memories: pending and declined ones are still there.
    now += 30 * DAY;
    await service.sweepMemories();
    expect((await client.review.list({ agentId })).items.map((item) => item.memory.text)).toEqual(['My locker number at the gym is 4417.']);
    expect((await client.review.list({ agentId, state: 'declined' })).items.map((item) => item.memory.memory_id)).toEqual([olives.memory.memory_id]);
  });

  it('refuses over HTTP with the spec’s codes: 403 for a person, 404, 409, 422 and 400', async () => {
    const [locker] = (await client.review.list({ agentId })).items;
    const id = locker!.memory.memory_id;
    expect(await call('GET', 'review', undefined, { 'X-SP-End-User': 'alice' })).toMatchObject({ status: 403, body: { code: 'forbidden' } });
    expect(await call('GET', 'review?state=maybe')).toMatchObject({ status: 400, body: { code: 'invalid_request' } });
    expect(await call('GET', 'review?limit=101')).toMatchObject({ status: 400, body: { code: 'invalid_request' } });
    expect((await call('GET', 'review?limit=100')).status).toBe(200);
    expect(await call('POST', `review/mem_01ARZ3NDEKTSV4RRFFQ69G5FAV/approve`)).toMatchObject({ status: 404, body: { code: 'not_found' } });
    expect(await call('POST', `review/${id}/undo`)).toMatchObject({ status: 409, body: { code: 'conflict' } });
    expect(await call('PATCH', `review/${id}`, { text: '' })).toMatchObject({ status: 422, body: { code: 'invalid_request' } });
    expect(await call('PATCH', `review/${id}`, { text: 'x'.repeat(4000) })).toMatchObject({ status: 200 });
    expect(await call('POST', `review/${id}/decline`, { reason: 'x'.repeat(501) })).toMatchObject({ status: 422, body: { code: 'invalid_request' } });
    expect(await call('POST', `review/${id}/decline`, { reason: 'x'.repeat(500) })).toMatchObject({ status: 200, body: { state: 'declined' } });
    expect(await call('POST', `review/${id}/approve`)).toMatchObject({ status: 409, body: { code: 'conflict', error: expect.stringContaining('declined') } });
    now += 7 * DAY;
    expect(await call('POST', `review/${id}/undo`)).toMatchObject({ status: 409, body: { code: 'conflict', error: expect.stringContaining('undone until') } });
  });
});
