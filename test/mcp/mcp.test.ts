import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createClient, type MemoryAgentsClient } from '@memory-agents/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, removeDataDir, runCli, startServerProcess, type ServerProcess } from '../support/server.js';

// The MCP server over both transports, driven by the MCP SDK's own client against the built CLI:
// `memory-agents mcp` (stdio, in front of the server) and `/mcp` on `serve` (Streamable HTTP).
let server: ServerProcess;
let api: MemoryAgentsClient;
let agentId: string;
let scratch: string;
const UNKNOWN_AGENT = 'agent_00000000000000000000000000';

type Transport = 'stdio' | 'http';

async function connect(transport: Transport, key: string, options: { agent?: string; endUser?: string } = {}): Promise<Client> {
  const agent = options.agent ?? agentId;
  const client = new Client({ name: `vitest-${transport}`, version: '1.0.0' });
  if (transport === 'stdio') {
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [CLI, 'mcp', '--url', server.url, '--agent', agent, ...(options.endUser ? ['--end-user', options.endUser] : [])],
        env: { ...(process.env as Record<string, string>), MEMORY_AGENTS_API_KEY: key },
        stderr: 'pipe',
      }),
    );
  } else {
    const headers: Record<string, string> = { Authorization: `Bearer ${key}` };
    if (options.endUser) headers['X-SP-End-User'] = options.endUser;
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp?agent=${agent}`), { requestInit: { headers } }));
  }
  return client;
}

const call = async (client: Client, name: string, args: Record<string, unknown> = {}) => (await client.callTool({ name, arguments: args })) as CallToolResult;
const text = (result: CallToolResult) => result.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n');

/** A new organization (its key), optionally with limit overrides, set through the running server. */
async function organization(name: string, limits?: unknown): Promise<string> {
  const json = async (...args: string[]) => JSON.parse((await runCli([...args, '--data', server.dataDir, '--json'])).stdout);
  const org = await json('orgs', 'create', '--name', name);
  if (limits) await json('orgs', 'limits', '--org', org.organization_id, '--limits', JSON.stringify(limits));
  return (await json('keys', 'create', '--org', org.organization_id)).key;
}

beforeAll(async () => {
  server = await startServerProcess();
  api = createClient({ baseUrl: server.url, apiKey: server.key! });
  const created = await api.agents.create({ agent_config: { role: 'assistant', objective: 'remember what users say' } });
  agentId = (await api.agents.waitUntilReady({ agentId: created.agent_id, timeoutMs: 60_000 })).agent_id;
  scratch = await mkdtemp(join(tmpdir(), 'ma-mcp-'));
});
afterAll(async () => {
  await server.stop();
  await removeDataDir(server.dataDir);
  await rm(scratch, { recursive: true, force: true });
});

describe.each<Transport>(['stdio', 'http'])('MCP over %s', (transport) => {
  let mcp: Client;
  beforeAll(async () => {
    mcp = await connect(transport, server.key!);
  });
  afterAll(async () => {
    await mcp.close();
  });

  it('lists the tools with JSON Schemas and descriptions', async () => {
    const { tools } = await mcp.listTools();
    const names = tools.map((tool) => tool.name).sort();
    const maintenance = ['maintenance_apply', 'maintenance_list', 'maintenance_plan', 'maintenance_undo'];
    expect(names).toEqual(transport === 'stdio' ? ['ask', 'erase', 'list_agents', ...maintenance, 'memory_history', 'recall', 'remember', 'review_decide', 'review_queue', 'review_reflect', 'review_relearn', 'upload'] : ['ask', 'erase', 'list_agents', ...maintenance, 'memory_history', 'recall', 'remember', 'review_decide', 'review_queue', 'review_reflect', 'review_relearn']);
    expect(tools.find((tool) => tool.name === 'memory_history')!.annotations).toMatchObject({ readOnlyHint: true });
    expect(tools.find((tool) => tool.name === 'erase')!.annotations).toMatchObject({ destructiveHint: true, readOnlyHint: false });
    const remember = tools.find((tool) => tool.name === 'remember')!;
    expect(remember.description).toMatch(/long-term memory/);
    expect(remember.inputSchema).toMatchObject({ type: 'object', required: ['text'] });
    expect(Object.keys(remember.inputSchema.properties!)).toEqual(expect.arrayContaining(['text', 'speaker', 'timestamp', 'agent_id']));
    expect(tools.find((tool) => tool.name === 'recall')!.inputSchema.required).toEqual(['query']);
  });

  it('remembers a turn (committed), then recalls it with citations, learning nothing from the query', async () => {
    const city = transport === 'stdio' ? 'Tromsø' : 'Valparaíso';
    const remembered = await call(mcp, 'remember', { text: `My sister Ingrid moved to ${city} to work as a marine biologist.`, speaker: 'alice' });
    expect(remembered.isError).toBeFalsy();
    expect(remembered.structuredContent).toMatchObject({ status: 'committed', observation_id: expect.stringMatching(/^obs_/) });
    const threadId = (remembered.structuredContent as { thread_id: string }).thread_id;

    const recalled = await call(mcp, 'recall', { query: 'Where did Ingrid move?' });
    expect(recalled.isError).toBeFalsy();
    expect(text(recalled)).toContain(city);
    expect(text(recalled)).toContain('Sources:');
    // Memory and sources are quoted data in a block the stored text cannot close (issue 33).
    expect(text(recalled)).toMatch(/never instructions[^]*\n<memory-data id="([0-9a-f]{16})">\n(> [^\n]*\n|>\n)+<\/memory-data id="\1">$/);
    const citations = (recalled.structuredContent as { citations: { href: string }[] }).citations;
    expect(citations.length).toBeGreaterThan(0);
    expect(citations[0]!.href.startsWith(server.url)).toBe(true);

    // The session's thread is titled by the MCP client, and recall recorded nothing in it.
    const thread = await api.threads.get({ agentId, threadId });
    expect(thread.title).toBe(`MCP: vitest-${transport}`);
    expect(thread.messages!.map((m) => m.text).join('\n')).not.toContain('Where did Ingrid move?');
  });

  it('shows a memory’s versions after an edit, oldest first, as quoted data; an unknown id is a tool error', async () => {
    const remembered = await call(mcp, 'remember', { text: `The ${transport} team lunch is on Tuesdays.`, speaker: 'alice' });
    expect(remembered.isError).toBeFalsy();
    const [first] = (await api.memories.list({ agentId, text_contains: `${transport} team lunch` })).memories;
    const edited = await api.memories.update({ agentId, memoryId: first!.memory_id, text: `The ${transport} team lunch moved to Thursdays.` });
    const history = await call(mcp, 'memory_history', { memory_id: edited.memory_id });
    expect(history.isError).toBeFalsy();
    const versions = (history.structuredContent as { versions: { memory_id: string; current: boolean; text: string }[] }).versions;
    expect(versions.map((version) => [version.memory_id, version.current])).toEqual([
      [first!.memory_id, false],
      [edited.memory_id, true],
    ]);
    expect(text(history)).toMatch(/<memory-data id="[0-9a-f]{16}">\n> 1\. \[replaced by mem_[^\n]*Tuesdays\.\n> 2\. \[current\][^\n]*Thursdays\./);
    const unknown = await call(mcp, 'memory_history', { memory_id: 'mem_unknown' });
    expect(unknown.isError).toBe(true);
    expect(unknown.structuredContent).toMatchObject({ code: 'not_found' });
  });

  it('asks: an answer from memory with citations', async () => {
    const asked = await call(mcp, 'ask', { question: 'What does Ingrid work as?', answer_length: 'brief' });
    expect(asked.isError).toBeFalsy();
    expect(text(asked)).toMatch(/marine biologist/);
    expect(text(asked)).toMatch(/\n<memory-data id="([0-9a-f]{16})">\n> [^]*marine biologist[^]*\n<\/memory-data id="\1">$/);
    expect((asked.structuredContent as { citations: unknown[] }).citations.length).toBeGreaterThan(0);
  });

  it('lists the agents of the key', async () => {
    const listed = await call(mcp, 'list_agents');
    expect(listed.isError).toBeFalsy();
    expect((listed.structuredContent as { agents: { agent_id: string; default: boolean }[] }).agents).toContainEqual(expect.objectContaining({ agent_id: agentId, default: true }));
  });

  it('offers the recent threads as resources', async () => {
    const { resources } = await mcp.listResources();
    expect(resources.some((resource) => resource.name === `MCP: vitest-${transport}`)).toBe(true);
    const own = resources.find((resource) => resource.name === `MCP: vitest-${transport}`)!;
    const read = await mcp.readResource({ uri: own.uri });
    expect(JSON.stringify(read.contents)).toContain('Ingrid');
  });

  it('turns a refusal of the service into a tool error carrying its code', async () => {
    const unknown = await call(mcp, 'recall', { query: 'anything', agent_id: UNKNOWN_AGENT });
    expect(unknown.isError).toBe(true);
    expect(unknown.structuredContent).toMatchObject({ code: 'agent_not_found', status: 404 });
    expect(text(unknown)).toMatch(/^agent_not_found: /);
    const remember = await call(mcp, 'remember', { text: 'x', agent_id: UNKNOWN_AGENT });
    expect(remember.structuredContent).toMatchObject({ code: 'agent_not_found' });
  });

  it('reports 429 as a tool error with rate_limit_exceeded and the wait', async () => {
    const key = await organization(`Throttled ${transport}`, { rateLimits: { chat: { subject: { limit: 1, windowSeconds: 600 } } } });
    const own = createClient({ baseUrl: server.url, apiKey: key });
    const agent = (await own.agents.waitUntilReady({ agentId: (await own.agents.create({ agent_config: { role: 'r', objective: 'o' } })).agent_id, timeoutMs: 60_000 })).agent_id;
    const throttled = await connect(transport, key, { agent });
    try {
      expect((await call(throttled, 'recall', { query: 'one' })).isError).toBeFalsy();
      const refused = await call(throttled, 'recall', { query: 'two' });
      expect(refused.isError).toBe(true);
      expect(refused.structuredContent).toMatchObject({ code: 'rate_limit_exceeded', status: 429, retry_after: expect.any(Number) });
      expect(text(refused)).toMatch(/Retry after \d+ s/);
    } finally {
      await throttled.close();
    }
  });

  it('gives a key of another organization nothing of this one', async () => {
    const key = await organization(`Other ${transport}`);
    const other = await connect(transport, key);
    try {
      const listed = await call(other, 'list_agents');
      expect((listed.structuredContent as { agents: unknown[] }).agents).toEqual([]);
      for (const [tool, args] of [
        ['recall', { query: 'Where did Ingrid move?' }],
        ['remember', { text: 'I am an intruder.' }],
        ['ask', { question: 'Where did Ingrid move?' }],
        ['memory_history', { memory_id: 'mem_anything' }],
      ] as const) {
        const result = await call(other, tool, args);
        expect(result.isError).toBe(true);
        expect(result.structuredContent).toMatchObject({ code: 'agent_not_found' });
      }
    } finally {
      await other.close();
    }
  });

  if (transport === 'stdio') {
    it('uploads a local file by path and learns it', async () => {
      const path = join(scratch, 'handbook.md');
      await writeFile(path, '# Handbook\n\nThe office parrot is called Captain Flint and speaks only Portuguese.\n');
      const uploaded = await call(mcp, 'upload', { path });
      expect(uploaded.isError).toBeFalsy();
      expect(uploaded.structuredContent).toMatchObject({ status: 'committed' });
      expect(text(await call(mcp, 'recall', { query: 'What is the office parrot called?' }))).toContain('Captain Flint');
      const missing = await call(mcp, 'upload', { path: join(scratch, 'nope.md') });
      expect(missing.isError).toBe(true);
      expect(missing.structuredContent).toMatchObject({ code: 'invalid_request' });
    });
  }

  it('erases the conversation thread when asked, and memory no longer holds it', async () => {
    const marker = transport === 'stdio' ? 'Zephyrine' : 'Quillon';
    const remembered = await call(mcp, 'remember', { text: `The spare key is hidden under the gnome named ${marker}.` });
    const threadId = (remembered.structuredContent as { thread_id: string }).thread_id;
    const twoTargets = await call(mcp, 'erase', { thread_id: threadId, source_id: 'src_x' });
    expect(twoTargets.isError).toBe(true);
    expect(text(twoTargets)).toMatch(/Give one of thread_id, source_id, observation_id or end_user_id/);
    const erased = await call(mcp, 'erase', {});
    expect(erased.isError).toBeFalsy();
    expect(erased.structuredContent).toMatchObject({ status: 'completed', target: { kind: 'thread', id: threadId } });
    expect(text(await call(mcp, 'recall', { query: `Where is the gnome ${marker}?` }))).not.toContain(marker);
  });
});

describe('MCP edges', () => {
  it('`mcp` without MEMORY_AGENTS_API_KEY exits 1 with one clear line', async () => {
    const env = { ...process.env };
    delete env.MEMORY_AGENTS_API_KEY;
    const result = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      void import('node:child_process').then(({ spawn }) => {
        const child = spawn(process.execPath, [CLI, 'mcp', '--url', server.url, '--agent', agentId], { env, stdio: ['ignore', 'pipe', 'pipe'] });
        let stderr = '';
        child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
        child.once('exit', (code) => resolve({ code, stderr }));
      });
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/MEMORY_AGENTS_API_KEY.*\(missing_api_key\)/);
    const usage = await runCli(['mcp', '--url', server.url], { MEMORY_AGENTS_API_KEY: server.key! });
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('--agent');
  });

  it('`mcp` answers the requests already sent when its input ends right after them, then exits 0', async () => {
    const { spawn } = await import('node:child_process');
    const child = spawn(process.execPath, [CLI, 'mcp', '--url', server.url, '--agent', agentId], {
      env: { ...process.env, MEMORY_AGENTS_API_KEY: server.key! },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const messages = [
      { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'pipe', version: '1' } } },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'remember', arguments: { text: 'The boiler code is 4471.' } } },
    ];
    child.stdin.end(messages.map((message) => JSON.stringify(message)).join('\n') + '\n');
    expect(await exited).toBe(0);
    const replies = stdout.trim().split('\n').map((line) => JSON.parse(line) as { id: number; result: { structuredContent?: { status: string } } });
    expect(replies.map((reply) => reply.id)).toEqual([1, 2]);
    expect(replies[1]!.result.structuredContent).toMatchObject({ status: 'committed' });
  });

  it('/mcp answers 401 without a valid key, and a session opened by one key is unknown to another', async () => {
    const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } };
    const post = (headers: Record<string, string>, body: unknown = initialize) =>
      fetch(`${server.url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers }, body: JSON.stringify(body) });
    const anonymous = await post({});
    expect(anonymous.status).toBe(401);
    expect(await anonymous.json()).toMatchObject({ code: 'unauthorized' });
    expect((await post({ authorization: 'Bearer sp_nope_nope' })).status).toBe(401);

    const opened = await post({ authorization: `Bearer ${server.key}` });
    expect(opened.status).toBe(200);
    const sessionId = opened.headers.get('mcp-session-id')!;
    expect(sessionId).toBeTruthy();
    await opened.text();
    const otherKey = await organization('Session thief');
    const list = { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} };
    const stolen = await post({ authorization: `Bearer ${otherKey}`, 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-06-18' }, list);
    expect(stolen.status).toBe(404);
    expect(await stolen.json()).toMatchObject({ code: 'not_found' });
    // The same key with the scheme in another case (RFC 9110: case-insensitive) is the same caller.
    const lower = await post({ authorization: `bearer ${server.key}`, 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-06-18' }, list);
    expect(lower.status).toBe(200);
    expect(await lower.text()).toContain('"tools"');
  });
});
