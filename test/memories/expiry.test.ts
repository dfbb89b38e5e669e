import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createClient, type MemoryAgentsClient } from '@memory-agents/client';
import { createMemoryService, inMemoryStore, silentLogger, type MemoryService } from '@memory-agents/core';
import { createHandler } from '@memory-agents/http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memoryIndexBackends, type OpenedIndex } from '../support/indexes.js';

// Memory expiry (issue 42) over HTTP through the real handler and the typed client, on the
// in-memory index, LanceDB and (with DATABASE_URL) PostgreSQL: a memory whose expiry is PATCHed
// into the past is gone from recall, chat's memory context, the memories list, get and search;
// include_expired shows it for audit; clearing it brings it back.
const BACKENDS = memoryIndexBackends('memory_expiry');

const say = (speaker: string, text: string, timestamp: string) => ({ speaker, timestamp, content: [{ type: 'text' as const, text }] });

describe.each(BACKENDS)('memory expiry on %s', (_backend, open) => {
  let opened: OpenedIndex;
  let service: MemoryService;
  let server: Server;
  let url: string;
  let key: string;
  let client: MemoryAgentsClient;
  let agentId: string;

  beforeAll(async () => {
    opened = await open();
    service = createMemoryService({ store: inMemoryStore(), index: opened.index, logger: silentLogger });
    await service.start();
    const org = await service.admin.createOrganization({ name: 'Acme' });
    key = (await service.admin.createKey({ organizationId: org.organizationId })).key;
    server = createServer(createHandler(service, { logger: silentLogger }));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    client = createClient({ baseUrl: url, apiKey: key });
    agentId = (await client.agents.create({ agent_config: { role: 'assistant', objective: 'remember' } })).agent_id;
    await client.agents.waitUntilReady({ agentId });
    const threadId = (await client.threads.create({ agentId })).thread_id;
    const observed = await client.threads.observe({ agentId, threadId, observations: [say('Alice', 'My hotel door code is 7319 for this stay.', '2024-03-10T10:00:00Z'), say('Alice', 'My sister lives in Lisbon.', '2024-03-11T10:00:00Z')] });
    await client.waitForObservation({ agentId, threadId, observationId: observed.observation_id });
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await service.stop();
    await opened.cleanup();
  });

  async function patch(memoryId: string, body: unknown) {
    const response = await fetch(`${url}/v1/agents/${agentId}/memories/${memoryId}`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  }

  it('an expiry in the past hides the memory from every read path; include_expired shows it; null brings it back', async () => {
    const door = (await client.memories.list({ agentId, text_contains: 'door code' })).memories[0]!;
    expect(door.expires_at).toBeNull();
    const recalled = async () => (await client.agents.recall({ agentId, query: 'What is my hotel door code?' })).memory_context;
    expect(await recalled()).toContain('7319');

    const updated = await client.memories.update({ agentId, memoryId: door.memory_id, expires_at: '2020-01-01T00:00:00Z' });
    expect(updated.expires_at).toBe('2020-01-01T00:00:00.000Z');
    expect(await recalled()).not.toContain('7319');
    expect((await client.memories.list({ agentId })).memories.map((memory) => memory.memory_id)).not.toContain(door.memory_id);
    expect((await client.memories.search({ agentId, query: 'hotel door code' })).hits.map((hit) => hit.memory.memory_id)).not.toContain(door.memory_id);
    expect((await client.memories.search({ agentId, query: 'hotel door code' })).memory_context).not.toContain('7319');
    await expect(client.memories.get({ agentId, memoryId: door.memory_id })).rejects.toMatchObject({ status: 404, code: 'not_found' });
    // The sister's memory is untouched.
    expect((await client.agents.recall({ agentId, query: 'Where does my sister live?' })).memory_context).toContain('Lisbon');

    // For audit.
    const audited = (await client.memories.list({ agentId, include_expired: 'true' })).memories.find((memory) => memory.memory_id === door.memory_id);
    expect(audited?.expires_at).toBe('2020-01-01T00:00:00.000Z');
    expect((await client.memories.get({ agentId, memoryId: door.memory_id, include_expired: 'true' })).memory_id).toBe(door.memory_id);
    expect((await client.memories.search({ agentId, query: 'hotel door code', include_expired: true })).hits.map((hit) => hit.memory.memory_id)).toContain(door.memory_id);

    await client.memories.update({ agentId, memoryId: door.memory_id, expires_at: null });
    expect(await recalled()).toContain('7319');
  });

  it('refuses a malformed PATCH with invalid_request and a sentence naming expires_at', async () => {
    const [memory] = (await client.memories.list({ agentId })).memories;
    const refused = await patch(memory!.memory_id, { expires_at: 'next Friday' });
    expect(refused.status).toBe(422);
    expect(refused.body).toMatchObject({ code: 'invalid_request' });
    expect(String(refused.body.error)).toContain('expires_at');
    expect((await patch(memory!.memory_id, {})).status).toBe(422);
    expect((await patch('mem_00000000000000000000000000', { expires_at: null })).status).toBe(404);
  });
});
