import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createClient, MemoryAgentsError, type MemoryAgentsClient } from '@memory-agents/client';
import { createMemoryService, inMemoryStore, silentLogger, type MemoryService } from '@memory-agents/core';
import { createHandler } from '@memory-agents/http';
import { createMemoryMcpServer } from '@memory-agents/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memoryIndexBackends, type OpenedIndex } from '../support/indexes.js';

// The memories API (issue 30) end to end in one process: HTTP through the real handler, the typed
// client, and MCP `recall` through the MCP SDK's client; on the in-memory index, the embedded
// default's LanceDB and, with DATABASE_URL, PostgreSQL (the filters run inside each index).
const BACKENDS = memoryIndexBackends('memories_api');

let opened: OpenedIndex;
let service: MemoryService;
let server: Server;
let url: string;
let key: string;
let strangerKey: string;
let client: MemoryAgentsClient;
let agentId: string;
let strangerAgentId: string;
let aliceThread: string;
let bobThread: string;

const say = (speaker: string, text: string, timestamp: string) => ({ speaker, timestamp, content: [{ type: 'text' as const, text }] });

describe.each(BACKENDS)('the memories API on %s', (_backend, open) => {
  beforeAll(async () => {
    opened = await open();
    service = createMemoryService({ store: inMemoryStore(), index: opened.index, logger: silentLogger });
    await service.start();
    const org = await service.admin.createOrganization({ name: 'Acme' });
    key = (await service.admin.createKey({ organizationId: org.organizationId })).key;
    const other = await service.admin.createOrganization({ name: 'Other' });
    strangerKey = (await service.admin.createKey({ organizationId: other.organizationId })).key;
    server = createServer(createHandler(service, { logger: silentLogger }));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    client = createClient({ baseUrl: url, apiKey: key });
    agentId = (await client.agents.create({ agent_config: { role: 'assistant', objective: 'remember' } })).agent_id;
    await client.agents.waitUntilReady({ agentId });
    const stranger = createClient({ baseUrl: url, apiKey: strangerKey });
    strangerAgentId = (await stranger.agents.create({ agent_config: { role: 'assistant', objective: 'remember' } })).agent_id;
    await stranger.agents.waitUntilReady({ agentId: strangerAgentId });
    aliceThread = (await client.threads.create({ agentId, endUser: 'alice' })).thread_id;
    bobThread = (await client.threads.create({ agentId, endUser: 'bob' })).thread_id;
    const a = await client.threads.observe({ agentId, threadId: aliceThread, observations: [say('Alice', 'I adopted a grey cat named Pixel last spring.', '2024-03-10T10:00:00Z'), say('Alice', 'My sister lives in Lisbon.', '2024-03-11T10:00:00Z')], endUser: 'alice' });
    await client.waitForObservation({ agentId, threadId: aliceThread, observationId: a.observation_id, endUser: 'alice' });
    const b = await client.threads.observe({ agentId, threadId: bobThread, observations: [say('Bob', 'I am training for the Berlin marathon.', '2024-05-01T09:00:00Z')], endUser: 'bob' });
    await client.waitForObservation({ agentId, threadId: bobThread, observationId: b.observation_id, endUser: 'bob' });
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await service.stop();
    await opened.cleanup();
  });

  async function raw(method: string, path: string, options: { body?: unknown; endUser?: string; apiKey?: string } = {}) {
    const response = await fetch(`${url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${options.apiKey ?? key}`,
        ...(options.endUser ? { 'x-sp-end-user': options.endUser } : {}),
        ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
    });
    const text = await response.text();
    return { status: response.status, body: text === '' ? null : (JSON.parse(text) as Record<string, unknown>) };
  }

  const ERROR_SHAPE = { error: expect.any(String), code: expect.any(String), request_id: expect.any(String) };

  describe('memories over HTTP and the typed client', () => {
    it('lists, gets, searches and deletes through the client', async () => {
      const list = await client.memories.list({ agentId, limit: 50 });
      expect(list.memories.length).toBeGreaterThanOrEqual(3);
      const pixel = list.memories.find((memory) => memory.text.includes('Pixel'))!;
      const detail = await client.memories.get({ agentId, memoryId: pixel.memory_id });
      expect(detail).toMatchObject({ memory_id: pixel.memory_id, speaker: 'Alice', source: { kind: 'turn', thread_id: aliceThread }, learning_credits: '0' });
      const search = await client.memories.search({ agentId, query: 'What is the name of the cat?', limit: 3 });
      expect(search.hits[0]).toMatchObject({ rank: 1, memory: { memory_id: pixel.memory_id }, in_memory_context: true });
      expect(Object.keys(search.hits[0]!.signals).sort()).toEqual(['decay', 'episode', 'full_text', 'hyponyms', 'self', 'speaker', 'suspicious', 'time', 'vector']);
      const page = await client.memories.list({ agentId, limit: 1 });
      const next = await client.memories.list({ agentId, limit: 1, cursor: page.next_cursor! });
      expect(next.memories[0]!.memory_id).not.toBe(page.memories[0]!.memory_id);

      const lisbon = list.memories.find((memory) => memory.text.includes('Lisbon'))!;
      const deleted = await raw('DELETE', `/v1/agents/${agentId}/memories/${lisbon.memory_id}`);
      expect(deleted).toEqual({ status: 204, body: null });
      await expect(client.memories.get({ agentId, memoryId: lisbon.memory_id })).rejects.toMatchObject({ status: 404, code: 'not_found' });
      await expect(client.memories.delete({ agentId, memoryId: lisbon.memory_id })).rejects.toBeInstanceOf(MemoryAgentsError);
    });

    it('answers bad input with the error shape, never a 500', async () => {
      const base = `/v1/agents/${agentId}/memories`;
      const first = await client.memories.list({ agentId, limit: 1 });
      const cases: [string, string, unknown, number][] = [
        ['GET', `${base}?colour=red`, undefined, 422],
        ['GET', `${base}?limit=0`, undefined, 400],
        ['GET', `${base}?limit=101`, undefined, 400],
        ['GET', `${base}?learned_before=tomorrow`, undefined, 422],
        ['GET', `${base}?occurred_after=2024-13-45T00:00:00Z`, undefined, 422],
        ['GET', `${base}?thread_id=thread_x`, undefined, 422],
        ['GET', `${base}?include_history=maybe`, undefined, 422],
        ['GET', `${base}?cursor=${encodeURIComponent(first.next_cursor!)}&speaker=Bob`, undefined, 422],
        ['GET', `/v1/agents/${strangerAgentId}/memories?cursor=${encodeURIComponent(first.next_cursor!)}`, undefined, 404],
        ['GET', `${base}?cursor=%00%01`, undefined, 422],
        ['GET', `${base}/mem_nope`, undefined, 404],
        ['DELETE', `${base}/mem_nope`, undefined, 404],
        ['POST', `${base}/search`, { query: '' }, 422],
        ['POST', `${base}/search`, { query: 'x', limit: 101 }, 422],
        ['POST', `${base}/search`, { query: 'x', as_of: 'then' }, 422],
        ['GET', `/v1/agents/agent_nope/memories`, undefined, 404],
      ];
      for (const [method, path, body, status] of cases) {
        const response = await raw(method, path, { body });
        expect({ path, status: response.status }).toEqual({ path, status });
        expect(response.body).toMatchObject(ERROR_SHAPE);
      }
      // A cursor of this agent used on another agent of the same organization.
      const second = (await client.agents.create({ agent_config: { role: 'r', objective: 'o' } })).agent_id;
      await client.agents.waitUntilReady({ agentId: second });
      const moved = await raw('GET', `/v1/agents/${second}/memories?cursor=${encodeURIComponent(first.next_cursor!)}`);
      expect(moved.status).toBe(422);
      expect(String(moved.body!.error)).toMatch(/cursor/);
    });

    it('is a tenancy matrix: 404 for other organizations and other people, with the same body as an unknown id', async () => {
      const pixel = (await client.memories.list({ agentId, text_contains: 'pixel' })).memories[0]!;
      const unknownMemory = 'mem_00000000000000000000000000';
      const routes = (agent: string, memory: string): [string, string, unknown][] => [
        ['GET', `/v1/agents/${agent}/memories`, undefined],
        ['GET', `/v1/agents/${agent}/memories/${memory}`, undefined],
        ['POST', `/v1/agents/${agent}/memories/search`, { query: 'cat' }],
        ['DELETE', `/v1/agents/${agent}/memories/${memory}`, undefined],
      ];
      // Another organization's key on our agent: agent_not_found, exactly as for an agent that never existed.
      for (const [method, path, body] of routes(agentId, pixel.memory_id)) {
        const response = await raw(method, path, { body, apiKey: strangerKey });
        expect(response.status).toBe(404);
        expect(response.body!.code).toBe('agent_not_found');
      }
      // Our memory id under their agent: the same answer as an unknown memory id.
      for (const method of ['GET', 'DELETE']) {
        const foreign = await raw(method, `/v1/agents/${strangerAgentId}/memories/${pixel.memory_id}`, { apiKey: strangerKey });
        const unknown = await raw(method, `/v1/agents/${strangerAgentId}/memories/${unknownMemory}`, { apiKey: strangerKey });
        expect(foreign.status).toBe(404);
        expect([foreign.body!.code, String(foreign.body!.error).replace(pixel.memory_id, unknownMemory)]).toEqual([unknown.body!.code, unknown.body!.error]);
      }
      // Bob (X-SP-End-User) and Alice's memory and thread.
      for (const method of ['GET', 'DELETE']) {
        const response = await raw(method, `/v1/agents/${agentId}/memories/${pixel.memory_id}`, { endUser: 'bob' });
        expect(response).toMatchObject({ status: 404, body: { code: 'not_found' } });
      }
      expect(await raw('GET', `/v1/agents/${agentId}/memories?thread_id=${aliceThread}`, { endUser: 'bob' })).toMatchObject({ status: 404, body: { code: 'thread_not_found' } });
      const bobList = await client.memories.list({ agentId, limit: 100, endUser: 'bob' });
      expect(bobList.memories.length).toBeGreaterThan(0);
      expect(bobList.memories.every((memory) => memory.source.thread_id === bobThread)).toBe(true);
      const bobSearch = await client.memories.search({ agentId, query: 'grey cat Pixel', endUser: 'bob' });
      expect(bobSearch.hits.every((hit) => hit.memory.source.thread_id === bobThread)).toBe(true);
      // Alice reaches her own.
      expect((await client.memories.get({ agentId, memoryId: pixel.memory_id, endUser: 'alice' })).memory_id).toBe(pixel.memory_id);
    });
  });

  describe('MCP recall', () => {
    it("returns each hit's explanation beside the memory context", async () => {
      const mcp = createMemoryMcpServer({ client, agentId, version: '0.0.0' });
      const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
      await mcp.connect(serverTransport);
      const mcpClient = new Client({ name: 'vitest', version: '1.0.0' });
      await mcpClient.connect(clientTransport);
      const result = (await mcpClient.callTool({ name: 'recall', arguments: { query: 'What is the name of the cat?' } })) as CallToolResult;
      const text = result.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n');
      expect(text).toContain('Pixel');
      expect(text).toMatch(/Why these ranked/);
      expect(text).toMatch(/#1 \d+\.\d{3} = full text \d+\.\d{3}/);
      const explanation = (result.structuredContent as { explanation: { rank: number; memory_id: string; score: number; signals: Record<string, number> }[] }).explanation;
      expect(explanation[0]).toMatchObject({ rank: 1, memory_id: expect.stringMatching(/^mem_/) });
      expect(explanation[0]!.signals.full_text).toBeGreaterThan(0);
      await mcpClient.close();
    });
  });
});
