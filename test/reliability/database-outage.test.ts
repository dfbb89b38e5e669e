import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, eventually, readLedger, readyAgent, type ApiResponse, type Client } from '../support/client.js';
import { postgresUrl } from '@memory-agents/core/testing';
import { billedOrganizationWithoutWindows, countTokens, databaseProxy } from '../support/database-proxy.js';
import { runCli, startServerProcess, type ServerProcess } from '../support/server.js';

const databaseUrl = postgresUrl('a database that goes away under running servers');

/** The timeout the servers run with (`--database-timeout-ms`): short, so cuts are answered fast. */
const TIMEOUT_MS = 1500;
/** The longest a request may take during a cut: a few sequential waits of the timeout, plus slack. */
const ANSWER_BOUND_MS = 4 * TIMEOUT_MS + 3000;

type Answer = { what: string; status: number; ms: number; body: any; at: number };

const WORDS = ['amber', 'birch', 'cedar', 'dune', 'ember', 'fjord', 'grove', 'heath'];

describe.runIf(databaseUrl)('PostgreSQL cut under two running servers', () => {
  const database = `wt_db_outage_${Date.now().toString(36)}`;
  let admin: import('pg').Client;
  let proxy: Awaited<ReturnType<typeof databaseProxy>>;
  let servers: ServerProcess[] = [];
  let cwd: string;
  let proxiedUrl: string;
  let directUrl: string;
  let stopWorkers = () => {};

  beforeAll(async () => {
    const pg = (await import('pg')).default;
    admin = new pg.Client({ connectionString: databaseUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${database}`);
    const base = new URL(databaseUrl!);
    directUrl = Object.assign(new URL(base), { pathname: `/${database}` }).toString();
    proxy = await databaseProxy({ host: base.hostname, port: Number(base.port || 5432) });
    const proxied = new URL(directUrl);
    proxied.hostname = '127.0.0.1';
    proxied.port = String(proxy.port);
    proxiedUrl = proxied.toString();
    // Both processes share the blob directory (./.memory-agents/blobs), as on shared storage.
    cwd = await mkdtemp(join(tmpdir(), 'ma-outage-'));
  }, 60_000);

  afterAll(async () => {
    stopWorkers();
    proxy?.restore();
    for (const server of servers) await server.stop();
    await proxy?.close();
    await admin?.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    await admin?.end();
    if (cwd) await rm(cwd, { recursive: true, force: true });
  }, 60_000);

  it('answers 503 (never 500, never hanging) during refused and black-holed cuts, recovers without a restart, and learns every accepted observation once with an exact ledger', async () => {
    const args = ['--database-url', proxiedUrl, '--database-timeout-ms', String(TIMEOUT_MS)];
    servers = [await startServerProcess({ args, cwd })];
    servers.push(await startServerProcess({ args, cwd }));
    const key = servers[0]!.key!;
    const apis: Client[] = servers.map((server) => client(server.url, key));
    const [a] = apis as [Client, Client];
    const organizationId = (await a.get('/v1/session')).body.organization_id as string;
    await billedOrganizationWithoutWindows(organizationId, directUrl);

    const agent = await readyAgent(a);
    const thread = (await a.post(`/v1/agents/${agent.agent_id}/threads`, {})).body.thread_id as string;
    const base = `/v1/agents/${agent.agent_id}/threads/${thread}`;

    const answers: Answer[] = [];
    /** Observation ids accepted (202) with the tokens their texts carry. */
    const accepted = new Map<string, string[]>();
    let counter = 0;
    /** Every token sent in an observe (accepted or not); each such turn is 9 words. */
    const observed = new Set<string>();
    const observation = (token: string, i: number) => ({ speaker: 'ana', content: [{ type: 'text', text: `Note ${token}: the ${WORDS[i % WORDS.length]} crate ships on day ${i}.` }] });
    const timed = async (what: string, call: () => Promise<ApiResponse>) => {
      const started = Date.now();
      const response = await call();
      answers.push({ what, status: response.status, ms: Date.now() - started, body: response.body, at: started });
      return response;
    };
    const observe = async (api: Client, n: number) => {
      const tokens = Array.from({ length: n }, () => `tok${(counter++).toString().padStart(5, '0')}x`);
      for (const token of tokens) observed.add(token);
      const response = await timed('observe', () => api.post(`${base}/observe`, { observations: tokens.map((token, i) => observation(token, i)) }));
      if (response.status === 202) accepted.set(response.body.observation_id, tokens);
      return response;
    };

    let running = true;
    const worker = async (api: Client, server: ServerProcess, slot: number) => {
      for (let round = 0; running; round++) {
        const kind = (round + slot) % 5;
        if (kind === 0 || kind === 1) await observe(api, 1 + (round % 3));
        else if (kind === 2) await timed('chat', () => api.post(`${base}/chat`, { turn_id: `t${slot}_${round}_${Date.now()}`, message: 'When does the amber crate ship?' }));
        else if (kind === 3) await timed('recall', () => api.post(`/v1/agents/${agent.agent_id}/recall`, { query: 'crate' }));
        else {
          const token = `tok${(counter++).toString().padStart(5, '0')}x`;
          const form = new FormData();
          form.append('file', new Blob([`# Notes\n\nThe ${token} shipment leaves from dock seven.\n`], { type: 'text/markdown' }), `${token}.md`);
          const response = await timed('upload', async () => {
            const raw = await fetch(`${server.url}${base}/observe-file`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
            const text = await raw.text();
            return { status: raw.status, headers: raw.headers, text, body: text ? JSON.parse(text) : undefined };
          });
          if (response.status === 202 && response.body?.observation_id) accepted.set(response.body.observation_id, [token]);
        }
        await new Promise((resolve) => setTimeout(resolve, 30));
      }
    };

    for (const mode of ['refuse', 'blackhole'] as const) {
      running = true;
      stopWorkers = () => (running = false);
      const workers = servers.flatMap((server, i) => [worker(apis[i]!, server, 0), worker(apis[i]!, server, 2)]);
      // A job of many turns learning while the database goes away (its charge and commits run in transactions).
      // (The agent learns one thing at a time: an observe may be refused 429 while it is busy.)
      await eventually(async () => (await observe(a, 40)).status === 202, 'a long job accepted', 20_000);
      await new Promise((resolve) => setTimeout(resolve, 300));
      const cutAt = Date.now();
      proxy.cut(mode);
      await new Promise((resolve) => setTimeout(resolve, 300));
      // Health during the cut: alive, not ready, no organization named.
      for (const server of servers) {
        const live = await fetch(`${server.url}/healthz`);
        expect(live.status).toBe(200);
        const ready = await fetch(`${server.url}/readyz`);
        const body = await ready.json();
        expect(ready.status, JSON.stringify(body)).toBe(503);
        expect(body).toMatchObject({ status: 'unavailable', error: expect.stringMatching(/did not respond|did not answer/), checks: { store: 'unavailable' } });
        expect(JSON.stringify(body)).not.toContain(organizationId);
      }
      // The admin CLI prints a sentence and exits 1, not "internal".
      const cliDuringCut = await runCli(['orgs', 'list', '--database-url', proxiedUrl, '--database-timeout-ms', String(TIMEOUT_MS)]);
      expect(cliDuringCut.code).toBe(1);
      expect(cliDuringCut.stderr).toMatch(/did not respond/);
      expect(cliDuringCut.stderr).not.toMatch(/internal/);
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, cutAt + 4000 - Date.now())));
      const restoredAt = Date.now();
      proxy.restore();
      // Back without a restart, on both processes.
      for (const api of apis) await eventually(async () => (await api.get('/v1/session')).status === 200, 'service back', 20_000);
      for (const server of servers) await eventually(async () => (await fetch(`${server.url}/readyz`)).status === 200, 'ready again', 20_000);
      await new Promise((resolve) => setTimeout(resolve, 1000));
      running = false;
      await Promise.all(workers);

      const during = answers.filter((answer) => answer.at >= cutAt && answer.at < restoredAt);
      expect(during.filter((answer) => answer.status === 503).length, `${mode}: 503s during the cut`).toBeGreaterThan(0);
      for (const server of servers) expect(server.child.exitCode, server.output()).toBeNull();
    }

    // No 500 and no hang, ever; every refusal is the spec's 503 with a sentence.
    for (const answer of answers) {
      expect(answer.status, `${answer.what}: ${JSON.stringify(answer.body)}`).not.toBe(500);
      // 429: the agent is already learning (it learns one thing at a time), or a subject's
      // concurrent answers are at their cap; neither is the database.
      expect([200, 201, 202, 429, 503], `${answer.what}: ${answer.status} ${JSON.stringify(answer.body)}`).toContain(answer.status);
      if (answer.status === 429) expect(answer.body, answer.what).toMatchObject({ code: 'rate_limit_exceeded', details: expect.stringMatching(/^(capacity|user)$/) });
      expect(answer.ms, `${answer.what} took ${answer.ms} ms`).toBeLessThan(ANSWER_BOUND_MS);
      if (answer.status === 503) expect(answer.body).toMatchObject({ code: 'service_unavailable', error: expect.stringMatching(/\w+ \w+/) });
    }

    // Every accepted observation is learned (interrupted jobs resume by themselves) ...
    for (const observationId of accepted.keys()) {
      await eventually(
        async () => {
          const status = await a.get(`${base}/observe/${observationId}/status`);
          if (status.status === 200 && status.body.status === 'failed') throw new Error(`${observationId} failed: ${JSON.stringify(status.body)}`);
          return status.status === 200 && status.body.status === 'committed';
        },
        `${observationId} committed`,
        40_000,
      );
    }
    // ... exactly once: each accepted token is in exactly one memory.
    let learnedObserveWords = 0;
    const pg = (await import('pg')).default;
    const direct = new pg.Client({ connectionString: directUrl });
    await direct.connect();
    try {
      const { rows } = await direct.query<{ text: string }>('SELECT text FROM memory_index_records WHERE agent_id = $1', [agent.agent_id]);
      const seen = countTokens(rows.map((row) => row.text));
      for (const tokens of accepted.values()) for (const token of tokens) expect(seen.get(token) ?? 0, token).toBe(1);
      // Never learned twice, accepted or not (a 503 may come after the job's commit).
      for (const [token, count] of seen) expect(count, token).toBe(1);
      learnedObserveWords = [...seen.keys()].filter((token) => observed.has(token)).length * 9;
    } finally {
      await direct.end();
    }
    // The ledger is exact: the balance is the grant less every entry, page by page, and the
    // learning charges of observe are the words of the turns learned, each charged once.
    const { balance, entries } = await readLedger(a);
    const total = entries.reduce((sum, entry) => sum + Math.round(Number(entry.cost) * 1e6), 0);
    expect(Math.round(Number(balance) * 1e6)).toBe(-total);
    expect(entries.some((entry) => entry.route === 'credits_add')).toBe(true);
    const chargedObserveWords = entries.filter((entry) => entry.route === 'observe').reduce((sum, entry) => sum + (entry.in_words ?? 0), 0);
    expect(chargedObserveWords).toBe(learnedObserveWords);
  }, 180_000);
});
