import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { LanguageModelV3GenerateResult } from '@ai-sdk/provider';
import { memoryMiddleware } from '@memory-agents/ai-sdk';
import { createClient, type MemoryAgentsClient } from '@memory-agents/client';
import { generateText, wrapLanguageModel } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeDataDir, runCli, startServerProcess, type ServerProcess } from '../support/server.js';

// The tenancy matrix of per-person memory (issue 42) against the built CLI server: an agent with
// `memory_scope: "end_user"`, person X and person Y each telling secrets in their own threads (Y
// also uploads a document), and a thread of no person (the organization's) with shared facts and a
// shared document. Every read route is called for X, raw bytes are compared. The same world on an
// agent without `memory_scope` shows the spec's shared memory, so flipping the default fails here.

let server: ServerProcess;

const X = 'xavier@example.com';
const Y = 'yolanda@example.com';
const X_TEXT = 'My account recovery phrase is xerxes-copper-4411 and my pharmacist is Dr Quillon.';
const Y_TEXT = 'My account recovery phrase is yonder-velvet-7720 and my pharmacist is Dr Brambleton.';
const Y_LATER = 'My new account recovery phrase is yarrow-slate-3305.';
const Y_DOCUMENT = 'Private medical note: the account recovery phrase backup is yew-ember-9918, kept by the pharmacist.';
const SHARED_TEXT = 'The support desk account recovery phrase for the shared kiosk is kiosk-maple-5533.';
const SHARED_DOCUMENT = 'Staff handbook: the pharmacist on duty can reset an account recovery phrase; the kiosk code is handbook-fern-6644.';
/** Every piece of Y's that a leak would carry (each appears in Y's text only). */
const Y_MARKS = ['yonder-velvet-7720', 'Brambleton', 'yarrow-slate-3305', 'yew-ember-9918'];
const X_MARK = 'xerxes-copper-4411';
const SHARED_MARKS = ['kiosk-maple-5533', 'handbook-fern-6644'];
const QUERY = 'What is the account recovery phrase, and who is the pharmacist?';

const say = (text: string, timestamp: string) => ({ speaker: 'user', timestamp, content: [{ type: 'text' as const, text }] });

type World = { key: string; agentId: string; xThread: string; yThread: string; sharedThread: string };

/** An agent (with `memoryScope`, or none) taught by X, Y and the organization; waits until all is learned. */
async function world(memoryScope: 'end_user' | undefined): Promise<World> {
  // Each world in its own organization: the per-subject upload window (1 per 10 s) is not shared.
  const json = async (...args: string[]) => JSON.parse((await runCli([...args, '--data', server.dataDir, '--json'])).stdout);
  const org = await json('orgs', 'create', '--name', `scope ${memoryScope ?? 'default'}`);
  const key: string = (await json('keys', 'create', '--org', org.organization_id)).key;
  const api = createClient({ baseUrl: server.url, apiKey: key });
  const created = await api.agents.create({ agent_config: { role: 'support', objective: 'help customers', ...(memoryScope ? { memory_scope: memoryScope } : {}) } });
  const agentId = (await api.agents.waitUntilReady({ agentId: created.agent_id, timeoutMs: 60_000 })).agent_id;
  const xThread = (await api.threads.create({ agentId, title: 'X', endUser: X })).thread_id;
  const yThread = (await api.threads.create({ agentId, title: 'Y', endUser: Y })).thread_id;
  const sharedThread = (await api.threads.create({ agentId, title: 'shared' })).thread_id;
  const observe = async (threadId: string, endUser: string | null, observations: ReturnType<typeof say>[]) => {
    const accepted = await api.threads.observe({ agentId, threadId, observations, endUser });
    await api.waitForObservation({ agentId, threadId, observationId: accepted.observation_id, endUser, timeoutMs: 60_000 });
  };
  const upload = async (threadId: string, endUser: string | null, name: string, text: string) => {
    const accepted = await api.threads.observeFile({ agentId, threadId, file: new File([text], name, { type: 'text/plain' }), endUser });
    await api.waitForObservation({ agentId, threadId, observationId: accepted.observation_id, endUser, timeoutMs: 60_000 });
  };
  await observe(xThread, X, [say(X_TEXT, '2024-03-01T10:00:00Z')]);
  await observe(yThread, Y, [say(Y_TEXT, '2024-03-01T11:00:00Z')]);
  await observe(yThread, Y, [say(Y_LATER, '2024-04-01T11:00:00Z')]);
  await upload(yThread, Y, 'y-note.txt', Y_DOCUMENT);
  await observe(sharedThread, null, [say(SHARED_TEXT, '2024-03-02T10:00:00Z')]);
  await upload(sharedThread, null, 'handbook.txt', SHARED_DOCUMENT);
  return { key, agentId, xThread, yThread, sharedThread };
}

/** A raw call's whole body, as bytes read from the wire. */
async function raw(key: string, path: string, body: unknown, endUser: string | null): Promise<string> {
  const response = await fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...(endUser === null ? {} : { 'x-sp-end-user': endUser }) },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  expect(response.status, `${path}: ${text}`).toBe(200);
  return text;
}

async function mcpFor(key: string, agentId: string, endUser: string | null): Promise<Client> {
  const client = new Client({ name: 'vitest-scope', version: '1.0.0' });
  const headers: Record<string, string> = { Authorization: `Bearer ${key}`, ...(endUser === null ? {} : { 'X-SP-End-User': endUser }) };
  await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp?agent=${agentId}`), { requestInit: { headers } }));
  return client;
}
const toolText = (result: CallToolResult) => JSON.stringify(result);

/** What the AI SDK middleware hands the model for X's question (the model is the AI SDK's mock). */
async function middlewarePrompt(key: string, agentId: string, threadId: string, endUser: string | null): Promise<string> {
  const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: 1, text: 1, reasoning: undefined } };
  const answer: LanguageModelV3GenerateResult = { content: [{ type: 'text', text: 'ok' }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] };
  const model = new MockLanguageModelV3({ doGenerate: async () => answer });
  const middleware = memoryMiddleware({ baseUrl: server.url, apiKey: key, agentId, threadId, ...(endUser === null ? {} : { endUser }) });
  await generateText({ model: wrapLanguageModel({ model, middleware }), prompt: QUERY });
  await middleware.flush();
  return JSON.stringify(model.doGenerateCalls[0]!.prompt);
}

/** Every read route, for `endUser` in `threadId`, each as the bytes its caller received. Routes that learn come last. */
async function readsOf(w: World, endUser: string | null, threadId: string): Promise<Record<string, string>> {
  const agent = `/v1/agents/${w.agentId}`;
  const thread = `${agent}/threads/${threadId}`;
  const mcp = await mcpFor(w.key, w.agentId, endUser);
  const listQuery = 'limit=100&include_history=true';
  const list = await fetch(`${server.url}${agent}/memories?${listQuery}`, { headers: { authorization: `Bearer ${w.key}`, ...(endUser === null ? {} : { 'x-sp-end-user': endUser }) } });
  try {
    const reads: Record<string, string> = {};
    reads.recall = await raw(w.key, `${agent}/recall`, { query: QUERY, max_context_chars: 100_000 }, endUser);
    reads.recallAsOf = await raw(w.key, `${agent}/recall`, { query: QUERY, max_context_chars: 100_000, as_of: '2024-03-15T00:00:00Z' }, endUser);
    reads.chat = await raw(w.key, `${thread}/chat`, { turn_id: 'c1', message: QUERY, max_context_chars: 100_000 }, endUser);
    reads.chatAsOf = await raw(w.key, `${thread}/chat`, { turn_id: 'c2', message: QUERY, max_context_chars: 100_000, as_of: '2024-03-15T00:00:00Z' }, endUser);
    reads.stream = await raw(w.key, `${thread}/chat/stream`, { turn_id: 's1', message: QUERY, max_context_chars: 100_000 }, endUser);
    reads.search = await raw(w.key, `${agent}/memories/search`, { query: QUERY, limit: 100 }, endUser);
    reads.searchAsOf = await raw(w.key, `${agent}/memories/search`, { query: QUERY, limit: 100, as_of: '2024-03-15T00:00:00Z' }, endUser);
    reads.list = await list.text();
    reads.mcpRecall = toolText((await mcp.callTool({ name: 'recall', arguments: { query: QUERY, max_chars: 100_000 } })) as CallToolResult);
    reads.mcpRecallAsOf = toolText((await mcp.callTool({ name: 'recall', arguments: { query: QUERY, max_chars: 100_000, as_of: '2024-03-15T00:00:00Z' } })) as CallToolResult);
    reads.mcpAsk = toolText((await mcp.callTool({ name: 'ask', arguments: { question: QUERY } })) as CallToolResult);
    reads.middleware = await middlewarePrompt(w.key, w.agentId, threadId, endUser);
    reads.enrich = await raw(w.key, `${thread}/observe-and-enrich`, { turn_id: 'e1', message: QUERY, max_context_chars: 100_000 }, endUser);
    reads.respond = await raw(w.key, `${thread}/observe-and-respond`, { turn_id: 'r1', message: QUERY, max_context_chars: 100_000 }, endUser);
    return reads;
  } finally {
    await mcp.close();
  }
}

beforeAll(async () => {
  server = await startServerProcess();
});
const apiOf = (w: World): MemoryAgentsClient => createClient({ baseUrl: server.url, apiKey: w.key });
afterAll(async () => {
  await server.stop();
  await removeDataDir(server.dataDir);
});

describe('memory_scope "end_user" on a real server', () => {
  let w: World;
  beforeAll(async () => {
    w = await world('end_user');
  });

  it('is returned with the agent and kept by a PATCH that omits it', async () => {
    expect((await apiOf(w).agents.get({ agentId: w.agentId })).agent_config).toEqual({ role: 'support', objective: 'help customers', memory_scope: 'end_user' });
    const patched = await apiOf(w).agents.update({ agentId: w.agentId, agent_config: { role: 'support desk', objective: 'help customers' } });
    expect(patched.agent_config.memory_scope).toBe('end_user');
  });

  it("X never receives a byte of Y's memories over any route, and receives their own and the shared ones", async () => {
    const reads = await readsOf(w, X, w.xThread);
    for (const [route, bytes] of Object.entries(reads)) {
      for (const mark of Y_MARKS) expect(bytes, `${route} carries Y's ${mark}`).not.toContain(mark);
    }
    for (const route of ['recall', 'chat', 'stream', 'search', 'list', 'mcpRecall', 'middleware', 'enrich', 'respond']) {
      expect(reads[route], `${route}: X's own`).toContain(X_MARK);
      for (const mark of SHARED_MARKS) expect(reads[route], `${route}: shared ${mark}`).toContain(mark);
    }
    for (const route of ['recallAsOf', 'chatAsOf', 'searchAsOf', 'mcpRecallAsOf']) expect(reads[route], `${route}: X's own`).toContain(X_MARK);
  });

  it("Y's thread and Y's memories stay unreachable to X by id, as before", async () => {
    const ys = await apiOf(w).memories.list({ agentId: w.agentId, thread_id: w.yThread, limit: 100 });
    expect(ys.memories.length).toBeGreaterThan(0);
    for (const memory of ys.memories) {
      const response = await fetch(`${server.url}/v1/agents/${w.agentId}/memories/${memory.memory_id}`, { headers: { authorization: `Bearer ${w.key}`, 'x-sp-end-user': X } });
      expect(response.status).toBe(404);
    }
  });

  it("the stored originals citations link to: X gets the shared document's, never Y's (404 as unknown); the organization both", async () => {
    const documents = (await apiOf(w).memories.list({ agentId: w.agentId, limit: 100 })).memories.filter((memory) => memory.source.kind === 'document');
    const sourceOf = (threadId: string) => {
      const source = documents.find((memory) => memory.source.thread_id === threadId)!.source;
      return 'source_id' in source ? source.source_id : '';
    };
    const get = (sourceId: string, endUser: string | null) =>
      fetch(`${server.url}/v1/agents/${w.agentId}/sources/${sourceId}`, { headers: { authorization: `Bearer ${w.key}`, ...(endUser === null ? {} : { 'x-sp-end-user': endUser }) } });
    const ys = await get(sourceOf(w.yThread), X);
    expect(ys.status).toBe(404);
    expect(await ys.text()).not.toContain('yew-ember-9918');
    expect(await (await get(sourceOf(w.sharedThread), X)).text()).toContain('handbook-fern-6644');
    expect(await (await get(sourceOf(w.yThread), Y)).text()).toContain('yew-ember-9918');
    expect(await (await get(sourceOf(w.yThread), null)).text()).toContain('yew-ember-9918');
  });

  it('the organization (no X-SP-End-User) reads every memory', async () => {
    const reads = await readsOf(w, null, w.sharedThread);
    for (const route of ['recall', 'search', 'list', 'mcpRecall']) {
      for (const mark of [X_MARK, ...SHARED_MARKS, 'yarrow-slate-3305', 'yew-ember-9918']) expect(reads[route], `${route}: ${mark}`).toContain(mark);
    }
    expect(reads.recallAsOf).toContain('yonder-velvet-7720');
  });
});

describe('without memory_scope (the spec default, "agent")', () => {
  it("X's answers draw on Y's memories, as the spec says; the memories API still shows X only their own", async () => {
    const w = await world(undefined);
    expect((await apiOf(w).agents.get({ agentId: w.agentId })).agent_config).toEqual({ role: 'support', objective: 'help customers' });
    const reads = await readsOf(w, X, w.xThread);
    for (const route of ['recall', 'chat', 'stream', 'mcpRecall', 'middleware']) expect(reads[route], route).toContain('yarrow-slate-3305');
    expect(reads.list).not.toContain('yarrow-slate-3305');
    expect(reads.list).not.toContain('kiosk-maple-5533');
    expect(reads.list).toContain(X_MARK);
    // Citations link to the stored originals: under the spec's scope any person of the agent fetches them.
    const document = (await apiOf(w).memories.list({ agentId: w.agentId, thread_id: w.yThread, limit: 100 })).memories.find((memory) => memory.source.kind === 'document')!;
    const sourceId = 'source_id' in document.source ? document.source.source_id : '';
    const original = await fetch(`${server.url}/v1/agents/${w.agentId}/sources/${sourceId}`, { headers: { authorization: `Bearer ${w.key}`, 'x-sp-end-user': X } });
    expect(await original.text()).toContain('yew-ember-9918');
  });
});
