import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, eventually, readLedger, readyAgent, type Client } from '../support/client.js';
import { postgresUrl } from '@memory-agents/core/testing';
import { billedOrganizationWithoutWindows, countTokens, databaseProxy, type DatabaseProxy } from '../support/database-proxy.js';
import { CLI, startServerProcess, type ServerProcess } from '../support/server.js';

/**
 * One server on PostgreSQL behind a cutting proxy (see database-outage.test.ts for the cut under
 * load): the MCP transports during a cut, observes resent with their `Idempotency-Key` after a
 * cut, and a cut while a learning job's transaction is open. Every observation's text is a token
 * in a sentence of 9 words, so the memories and the ledger can be counted exactly at the end.
 */
const databaseUrl = postgresUrl('a database cut under MCP, idempotent resends and an open transaction');

/** The timeout the server runs with (`--database-timeout-ms`). */
const TIMEOUT_MS = 1500;
/** The longest one request may take during a cut (as in database-outage.test.ts). */
const ANSWER_BOUND_MS = 4 * TIMEOUT_MS + 3000;
const WORDS = ['amber', 'birch', 'cedar', 'dune', 'ember', 'fjord', 'grove', 'heath'];

describe.runIf(databaseUrl)('PostgreSQL cut: MCP, idempotent resends, an open transaction', () => {
  const database = `wt_db2_cut_${Date.now().toString(36)}`;
  let admin: import('pg').Client;
  let direct: import('pg').Client;
  let proxy: DatabaseProxy;
  let server: ServerProcess | null = null;
  let cwd: string;
  let api: Client;
  let agentId: string;
  let base: string;
  let counter = 0;
  /** Every token sent in an observation (by any route), whatever the answer. */
  const sent = new Set<string>();
  /** Tokens whose observation was acknowledged (202, or an MCP tool result that is no error). */
  const acknowledged = new Set<string>();
  const token = () => {
    const next = `tok${(counter++).toString().padStart(5, '0')}x`;
    sent.add(next);
    return next;
  };
  const sentence = (tok: string, i: number) => `Note ${tok}: the ${WORDS[i % WORDS.length]} crate ships on day ${i}.`;
  const observation = (tok: string, i: number) => ({ speaker: 'ana', content: [{ type: 'text', text: sentence(tok, i) }] });
  const committed = (observationId: string, deadline = 40_000) =>
    eventually(
      async () => {
        const status = await api.get(`${base}/observe/${observationId}/status`);
        if (status.status === 200 && status.body.status === 'failed') throw new Error(`${observationId} failed: ${JSON.stringify(status.body)}`);
        return status.status === 200 && status.body.status === 'committed';
      },
      `${observationId} committed`,
      deadline,
    );
  const serviceBack = () => eventually(async () => (await api.get('/v1/session')).status === 200, 'service back', 20_000);

  beforeAll(async () => {
    const pg = (await import('pg')).default;
    admin = new pg.Client({ connectionString: databaseUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${database}`);
    const url = new URL(databaseUrl!);
    const directUrl = Object.assign(new URL(url), { pathname: `/${database}` }).toString();
    proxy = await databaseProxy({ host: url.hostname, port: Number(url.port || 5432) });
    const proxied = new URL(directUrl);
    proxied.hostname = '127.0.0.1';
    proxied.port = String(proxy.port);
    cwd = await mkdtemp(join(tmpdir(), 'ma-cut-'));
    server = await startServerProcess({ args: ['--database-url', proxied.toString(), '--database-timeout-ms', String(TIMEOUT_MS)], cwd });
    direct = new pg.Client({ connectionString: directUrl });
    await direct.connect();
    api = client(server.url, server.key!);
    const organizationId = (await api.get('/v1/session')).body.organization_id as string;
    await billedOrganizationWithoutWindows(organizationId, directUrl);
    agentId = (await readyAgent(api)).agent_id;
    const thread = (await api.post(`/v1/agents/${agentId}/threads`, {})).body.thread_id as string;
    base = `/v1/agents/${agentId}/threads/${thread}`;
  }, 60_000);

  afterAll(async () => {
    proxy?.restore();
    await server?.stop();
    await proxy?.close();
    await direct?.end().catch(() => undefined);
    await admin?.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    await admin?.end();
    if (cwd) await rm(cwd, { recursive: true, force: true });
  }, 60_000);

  it('MCP tools over Streamable HTTP and stdio answer a tool error naming the database during a cut, and work again after it', async () => {
    const connectMcp = async (transport: 'http' | 'stdio') => {
      const mcp = new McpClient({ name: `vitest-cut-${transport}`, version: '1.0.0' });
      if (transport === 'http') {
        await mcp.connect(new StreamableHTTPClientTransport(new URL(`${server!.url}/mcp?agent=${agentId}`), { requestInit: { headers: { Authorization: `Bearer ${server!.key}` } } }));
      } else {
        await mcp.connect(
          new StdioClientTransport({
            command: process.execPath,
            args: [CLI, 'mcp', '--url', server!.url, '--agent', agentId],
            env: { ...(process.env as Record<string, string>), MEMORY_AGENTS_API_KEY: server!.key! },
            stderr: 'pipe',
          }),
        );
      }
      return { transport, mcp };
    };
    const sessions = [await connectMcp('http'), await connectMcp('stdio')];
    const text = (result: CallToolResult) => result.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n');
    const call = async (mcp: McpClient, name: string, args: Record<string, unknown>) => {
      const started = Date.now();
      const result = (await mcp.callTool({ name, arguments: args }, undefined, { timeout: 60_000 })) as CallToolResult;
      return { result, ms: Date.now() - started };
    };
    const remember = async (mcp: McpClient) => {
      const tok = token();
      const answer = await call(mcp, 'remember', { text: sentence(tok, counter), speaker: 'ana' });
      if (!answer.result.isError) acknowledged.add(tok);
      return answer;
    };
    try {
      // Before the cut: each session's thread exists and remember learns.
      for (const { transport, mcp } of sessions) {
        const { result } = await remember(mcp);
        expect(result.isError, `${transport}: ${text(result)}`).toBeFalsy();
        expect(text(result)).toMatch(/committed/);
      }

      for (const mode of ['refuse', 'blackhole'] as const) {
        proxy.cut(mode);
        try {
          // Both sessions at once, as two clients would be (each waits out the cut's timeouts and
          // remember's retries: one after the other took most of this test's ~30 s).
          await Promise.all(sessions.map(async ({ transport, mcp }) => {
            const answers: { tool: string; result: CallToolResult; ms: number; bound?: number }[] = [
              { tool: 'recall', ...(await call(mcp, 'recall', { query: 'crate' })) },
              { tool: 'ask', ...(await call(mcp, 'ask', { question: 'When does the amber crate ship?' })) },
              // remember retries a 503 twice (1 s, 2 s) with its idempotency key before giving up.
              { tool: 'remember', ...(await remember(mcp)), bound: 3 * ANSWER_BOUND_MS + 3000 },
            ];
            for (const answer of answers) {
              const what = `${mode} ${transport} ${answer.tool}: ${text(answer.result)}`;
              expect(answer.result.isError, what).toBe(true);
              expect(text(answer.result), what).toMatch(/^service_unavailable: The database .*did not respond.*Retry in a few seconds/s);
              expect(answer.result.structuredContent, what).toMatchObject({ code: 'service_unavailable', status: 503 });
              expect(answer.ms, what).toBeLessThan(answer.bound ?? ANSWER_BOUND_MS);
            }
          }));
        } finally {
          proxy.restore();
        }
        await serviceBack();
        expect(server!.child.exitCode, server!.output()).toBeNull();
        // Back without a restart, on the same MCP sessions.
        for (const { transport, mcp } of sessions) {
          const recalled = await eventually(async () => {
            const { result } = await call(mcp, 'recall', { query: 'crate' });
            return result.isError ? null : result;
          }, `${transport} recall after the ${mode} cut`, 20_000);
          expect(text(recalled)).toMatch(/crate/);
          const { result } = await remember(mcp);
          expect(result.isError, `${transport}: ${text(result)}`).toBeFalsy();
          expect(text(result)).toMatch(/committed/);
        }
      }
    } finally {
      for (const { mcp } of sessions) await mcp.close();
    }
  }, 90_000);

  it('learns once each observe 503d (or stored before the cut hit) and sent again with its Idempotency-Key after the cut', async () => {
    const requests = Array.from({ length: 8 }, (_, i) => {
      const tok = token();
      return { tok, key: randomUUID(), body: { observations: [observation(tok, i)] }, first: 0 };
    });
    const send = (request: (typeof requests)[number]) => api.post(`${base}/observe`, request.body, { headers: { 'idempotency-key': request.key } });
    // Sent one after the other while the cut falls among them.
    const flight = (async () => {
      for (const request of requests) {
        const started = Date.now();
        const response = await send(request);
        request.first = response.status;
        expect(Date.now() - started).toBeLessThan(ANSWER_BOUND_MS);
        expect([202, 429, 503], response.text).toContain(response.status);
        if (response.status === 503) expect(response.body).toMatchObject({ code: 'service_unavailable', error: expect.stringMatching(/did not respond/) });
        await new Promise((resolve) => setTimeout(resolve, 40));
      }
    })();
    await new Promise((resolve) => setTimeout(resolve, 60));
    proxy.cut('refuse');
    await flight;
    proxy.restore();
    expect(requests.filter((request) => request.first === 503).length).toBeGreaterThan(0);
    await serviceBack();

    // Each is sent again with its key until accepted (429: the agent learns one thing at a time;
    // 409 "still being processed" only until a key the cut left in flight is released, which the
    // server does as soon as the database answers: a key stuck for the in-flight window fails here).
    const ids = new Map<string, string>();
    for (const request of requests) {
      const accepted = await eventually(async () => {
        const response = await send(request);
        expect([202, 409, 429], response.text).toContain(response.status);
        if (response.status === 409) expect(response.body).toMatchObject({ code: 'conflict', error: expect.stringMatching(/still being processed/) });
        return response.status === 202 ? response : null;
      }, `${request.tok} accepted again`, 30_000);
      ids.set(request.tok, accepted.body.observation_id);
      // The same key answers the same observation from then on.
      const again = await send(request);
      if (again.status === 202) expect(again.body.observation_id).toBe(accepted.body.observation_id);
      acknowledged.add(request.tok);
    }
    for (const observationId of ids.values()) await committed(observationId);
    const seen = await memoryCounts();
    for (const request of requests) expect(seen.get(request.tok) ?? 0, request.tok).toBe(1);
  }, 60_000);

  it('survives a cut while a learning job holds a transaction open, and commits that job exactly once after it', async () => {
    let found: { observationId: string; tokens: string[] } | null = null;
    for (let attempt = 0; attempt < 5 && !found; attempt++) {
      const tokens = Array.from({ length: 60 }, () => token());
      const accepted = await eventually(async () => {
        const response = await api.post(`${base}/observe`, { observations: tokens.map((tok, i) => observation(tok, i)) });
        return response.status === 202 ? response : null;
      }, 'a long job accepted', 20_000);
      const observationId = accepted.body.observation_id as string;
      for (const tok of tokens) acknowledged.add(tok);
      // Poll until the job is processing, then black-hole the proxy and look (past the proxy) for
      // the server's backend holding a transaction open; if none was, let it go and try again.
      for (let look = 0; look < 40 && !found; look++) {
        const status = (await api.get(`${base}/observe/${observationId}/status`)).body?.status;
        if (status === 'committed' || status === 'failed') break;
        if (status !== 'processing') {
          await new Promise((resolve) => setTimeout(resolve, 20));
          continue;
        }
        proxy.cut('blackhole');
        const { rows } = await direct.query(
          `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend' AND xact_start IS NOT NULL`,
        );
        if (rows.length > 0) found = { observationId, tokens };
        else {
          proxy.restore();
          await new Promise((resolve) => setTimeout(resolve, 15));
        }
      }
      if (!found) await committed(observationId);
    }
    expect(found, 'a cut fell while a learning transaction was open').not.toBeNull();
    // The cut lasts past the idle-in-transaction timeout, so the open transaction is rolled back.
    await new Promise((resolve) => setTimeout(resolve, 2 * TIMEOUT_MS + 1000));
    const during = await api.get(`/v1/agents/${agentId}`);
    expect(during.status, during.text).toBe(503);
    proxy.restore();
    await serviceBack();
    expect(server!.child.exitCode, server!.output()).toBeNull();
    await committed(found!.observationId, 45_000);
    const seen = await memoryCounts();
    for (const tok of found!.tokens) expect(seen.get(tok) ?? 0, tok).toBe(1);
  }, 60_000);

  it('never learned anything twice, and the ledger is exact', async () => {
    const seen = await memoryCounts();
    for (const tok of acknowledged) expect(seen.get(tok) ?? 0, tok).toBe(1);
    for (const [tok, count] of seen) expect(count, tok).toBe(1);
    const learnedWords = [...seen.keys()].filter((tok) => sent.has(tok)).length * 9;
    const { balance, entries } = await readLedger(api);
    const total = entries.reduce((sum, entry) => sum + Math.round(Number(entry.cost) * 1e6), 0);
    expect(Math.round(Number(balance) * 1e6)).toBe(-total);
    const chargedWords = entries.filter((entry) => entry.route === 'observe').reduce((sum, entry) => sum + (entry.in_words ?? 0), 0);
    expect(chargedWords).toBe(learnedWords);
  }, 30_000);

  /** How many memories hold each token, read past the proxy. */
  async function memoryCounts(): Promise<Map<string, number>> {
    const { rows } = await direct.query<{ text: string }>('SELECT text FROM memory_index_records WHERE agent_id = $1', [agentId]);
    return countTokens(rows.map((row) => row.text));
  }
});
