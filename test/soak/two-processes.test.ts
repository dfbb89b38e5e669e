import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresUrl } from '@memory-agents/core/testing';
import { client, type ApiResponse, type Client } from '../support/client.js';
import { runCli, startServerProcess, type ServerProcess } from '../support/server.js';

/**
 * Two built `memory-agents serve` processes on ONE PostgreSQL database, mixed traffic through both
 * (issue 15, "Many processes"): observes to several agents of two organizations (some replayed
 * with their Idempotency-Key through the other process), chats and observe-and-respond, document
 * uploads (replayed by key, and re-sent as a duplicate, through the other process), a thread and
 * an agent deleted through one process while the other learns for them, and a key revoked while
 * both serve. Bounded by count (a fixed number of operations), not by time. At the end, read from
 * the API and the database: nothing accepted is lost (every observation committed, every turn one
 * memory, retrievable), nothing learned twice (one job per accepted request, one memory per turn,
 * each turn charged once), every job ended (no job or ingestion lease left), and each
 * organization's ledger balances (balance = -(sum of its entries), through /v1/billing and SQL); and
 * neither process logged an error (a failed background delete leaves its memories behind).
 */

const databaseUrl = postgresUrl('two-process soak');

const ORGANIZATIONS = 2;
const AGENTS_PER_ORGANIZATION = 4;
/** `observe` requests per agent, one after another (the agent learns one thing at a time). */
const ROUNDS = 12;
const TURNS_PER_OBSERVE = 3;
/** Every third request carries an Idempotency-Key and is replayed through the other process. */
const REPLAY_EVERY = 3;
/** Answers running at once per organization: the spec's 2 per subject (no X-SP-End-User here). */
const ANSWERS_AT_ONCE = 2;
const FIXTURES = ['field-notes.md', 'harbor-log.html', 'inventory.txt'].map((name) => ({
  name,
  data: new Uint8Array(readFileSync(new URL(`./__fixtures__/${name}`, import.meta.url))),
}));
/** Every window wide enough for the soak (the spec's windows are tested on their own). */
const WIDE_WINDOWS = Object.fromEntries(
  ['thread_create', 'observe', 'observe_respond', 'chat', 'observe_file', 'image_upload'].map((operation) => [
    operation,
    { subject: { limit: 100_000, windowSeconds: 10 }, organization: { limit: 100_000, windowSeconds: 10 } },
  ]),
);
const ENDED = ['committed', 'failed', 'cancelled'];

const countWords = (text: string) => text.match(/\S+/g)?.length ?? 0;
/** A decimal string as an exact integer of millionths (the ledger's prices have at most 3 decimals). */
function micro(decimal: string): bigint {
  const match = /^(-?)(\d+)(?:\.(\d{1,6}))?$/.exec(decimal);
  if (!match) throw new Error(`not a decimal with at most 6 places: ${decimal}`);
  const value = BigInt(match[2]!) * 1_000_000n + BigInt((match[3] ?? '').padEnd(6, '0'));
  return match[1] === '-' ? -value : value;
}

/** At most `size` of the calls run at once. */
function limiter(size: number) {
  let running = 0;
  const waiting: (() => void)[] = [];
  return async <T>(fn: () => Promise<T>): Promise<T> => {
    while (running >= size) await new Promise<void>((resolve) => waiting.push(resolve));
    running++;
    try {
      return await fn();
    } finally {
      running--;
      waiting.shift()?.();
    }
  };
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls until `fn` gives a value; bounded by a deadline (a loaded machine slows, never fails, the soak). */
async function until<T>(fn: () => Promise<T | null | undefined | false>, what: string, deadlineMs = 90_000): Promise<T> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    const value = await fn();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await pause(100);
  }
}

/** Sends again while the agent is busy learning (429 `Retry-After: 1`, spec "Limits / Observations"). */
async function whenIdle(send: () => Promise<ApiResponse>): Promise<ApiResponse> {
  for (let attempt = 0; ; attempt++) {
    const response = await send();
    if (response.status !== 429 || attempt >= 60) return response;
    await pause(Number(response.headers.get('retry-after') ?? 1) * 1000);
  }
}

async function upload(api: { url: string; key: string }, path: string, file: { name: string; data: Uint8Array }, headers: Record<string, string> = {}): Promise<ApiResponse> {
  const form = new FormData();
  form.append('max_chars', '400');
  form.append('overlap_chars', '50');
  form.append('file', new Blob([file.data]), file.name);
  const response = await fetch(`${api.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${api.key}`, ...headers }, body: form });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text === '' ? undefined : JSON.parse(text), text };
}

type Accepted = { organization: number; agentId: string; threadId: string; observationId: string; texts: string[] };

describe.skipIf(!databaseUrl)('two server processes on one PostgreSQL database (soak)', () => {
  const schema = `ma_soak_${randomBytes(5).toString('hex')}`;
  let admin: pg.Client;
  let databaseWithSchema: string;
  let cwd: string;
  const servers: ServerProcess[] = [];
  const organizations: { id: string; key: string }[] = [];
  const agents: string[] = [];
  /** Every warning and error either server logged (what a failed check prints to explain itself). */
  const problemsLogged = () =>
    servers.flatMap((server, i) =>
      server
        .output()
        .split('\n')
        .filter((line) => line.includes('"level":"error"') || line.includes('"level":"warn"'))
        .map((line) => `process ${i}: ${line}`),
    );

  beforeAll(async () => {
    admin = new pg.Client({ connectionString: databaseUrl });
    await admin.connect();
    await admin.query(`CREATE SCHEMA ${schema}`);
    // Where the server finds pgvector it uses it, as a deployment would (the extension in public).
    await admin.query('CREATE EXTENSION IF NOT EXISTS vector').catch(() => undefined);
    await admin.query(`SET search_path = ${schema}, public`);
    const url = new URL(databaseUrl!);
    url.searchParams.set('options', `-c search_path=${schema},public`);
    databaseWithSchema = url.toString();
    // One working directory: both processes keep uploads in its .memory-agents/blobs, the
    // shared storage docs/deploying.md asks for.
    cwd = await mkdtemp(join(tmpdir(), 'ma-soak-'));
    // Started together, as a deploy starts them: migrations are applied once, the others wait.
    servers.push(...(await Promise.all([0, 1].map(() => startServerProcess({ args: ['--database-url', databaseWithSchema], cwd })))));
    for (let i = 0; i < ORGANIZATIONS; i++) {
      const created = await runCli(['orgs', 'create', '--name', `soak ${i}`, '--credits', '1000', '--database-url', databaseWithSchema, '--json']);
      expect(created.code, created.stderr).toBe(0);
      const id = JSON.parse(created.stdout).organization_id as string;
      const limits = await runCli(['orgs', 'limits', '--org', id, '--limits', JSON.stringify({ rateLimits: WIDE_WINDOWS }), '--database-url', databaseWithSchema, '--json']);
      expect(limits.code, limits.stderr).toBe(0);
      const key = await runCli(['keys', 'create', '--org', id, '--database-url', databaseWithSchema, '--json']);
      expect(key.code, key.stderr).toBe(0);
      organizations.push({ id, key: JSON.parse(key.stdout).key as string });
    }
  });

  afterAll(async () => {
    for (const server of servers) await server.stop();
    if (cwd) await rm(cwd, { recursive: true, force: true });
    if (!admin) return;
    // The memory index lives in public (the server names its schema); remove this run's rows.
    await admin.query('DELETE FROM public.memory_index_records WHERE agent_id = ANY($1)', [agents]).catch(() => undefined);
    await admin.query('DELETE FROM public.memory_index_terms WHERE agent_id = ANY($1)', [agents]).catch(() => undefined);
    await admin.query('DELETE FROM public.memory_index_agents WHERE agent_id = ANY($1)', [agents]).catch(() => undefined);
    await admin.query(`DROP SCHEMA ${schema} CASCADE`);
    await admin.end();
  });

  it('loses nothing, learns nothing twice, ends every job and balances every ledger', async () => {
    const accepted: Accepted[] = [];
    const deletedThreads: string[] = [];
    const deletedAgents: string[] = [];
    const liveAgents: string[] = [];
    let replays = 0;

    // api(org, i): the organization's key through process i % 2.
    const api = (organization: number, i: number): Client => client(servers[i % 2]!.url, organizations[organization]!.key);

    async function readyAgentThrough(organization: number, i: number): Promise<string> {
      const created = await api(organization, i).post('/v1/agents', { agent_config: { role: 'assistant', objective: 'remember the soak' } });
      expect(created.status, created.text).toBe(202);
      const agentId = created.body.agent_id as string;
      agents.push(agentId);
      // Created through one process, seen ready through the other.
      await until(async () => (await api(organization, i + 1).get(`/v1/agents/${agentId}`)).body?.status === 'ready', 'agent ready');
      return agentId;
    }

    async function newThread(organization: number, i: number, agentId: string): Promise<string> {
      const created = await api(organization, i).post(`/v1/agents/${agentId}/threads`, { title: 'soak' });
      expect(created.status, created.text).toBe(201);
      return created.body.thread_id as string;
    }

    /** Polls through alternating processes until the job ended; resolves its last status. */
    async function ended(organization: number, agentId: string, threadId: string, observationId: string) {
      let i = 0;
      return until(async () => {
        const status = await api(organization, i++).get(`/v1/agents/${agentId}/threads/${threadId}/observe/${observationId}/status`);
        expect(status.status, status.text).toBe(200);
        // No process dies in the soak: a job seen interrupted or resumed was taken over by a second
        // worker while its own still ran, which the agent's ingestion lease exists to prevent.
        const why = () => `${observationId}; what the servers logged:\n${problemsLogged().join('\n')}`;
        expect(status.body.status, `status of ${why()}`).not.toBe('interrupted');
        expect(status.body.resumed_at, `resumed_at of ${why()}`).toBeNull();
        return ENDED.includes(status.body.status) ? status.body : null;
      }, `observation ${observationId}`);
    }

    async function learningAgent(organization: number, a: number, answers: ReturnType<typeof limiter>): Promise<void> {
      const agentId = await readyAgentThrough(organization, a);
      liveAgents.push(agentId);
      const threadId = await newThread(organization, a + 1, agentId);
      const path = `/v1/agents/${agentId}/threads/${threadId}`;
      const tag = `o${organization}a${a}`;
      for (let round = 0; round < ROUNDS; round++) {
        const i = organization + a + round;
        const texts = Array.from({ length: TURNS_PER_OBSERVE }, (_, t) => {
          const code = `zq${tag}r${round}t${t}${randomBytes(3).toString('hex')}`;
          return `Courier ${code} delivered ${round * 10 + t + 1} crates of pears to dock ${a + 1} on round ${round}.`;
        });
        const body = { observations: texts.map((text) => ({ content: [{ type: 'text', text }] })) };
        const key = round % REPLAY_EVERY === 0 ? `soak-${tag}-${round}-${randomBytes(4).toString('hex')}` : undefined;
        const headers: Record<string, string> = key ? { 'idempotency-key': key } : {};
        const first = await whenIdle(() => api(organization, i).post(`${path}/observe`, body, { headers }));
        expect(first.status, first.text).toBe(202);
        if (key) {
          // The same request again through the other process: the first 202, verbatim, no second job.
          const replay = await api(organization, i + 1).post(`${path}/observe`, body, { headers });
          expect(replay.status, replay.text).toBe(202);
          expect(replay.text).toBe(first.text);
          replays++;
        }
        accepted.push({ organization, agentId, threadId, observationId: first.body.observation_id, texts });
        if (round % 2 === 1) {
          const chat = await answers(() => api(organization, i + 1).post(`${path}/chat`, { turn_id: `${tag}-${round}`, message: `Who delivered crates to dock ${a + 1}?` }));
          expect(chat.status, chat.text).toBe(200);
        }
        expect((await ended(organization, agentId, threadId, first.body.observation_id)).status).toBe('committed');
      }

      // A document through one process, its key replayed and its bytes re-sent through the other.
      const file = FIXTURES[(organization * AGENTS_PER_ORGANIZATION + a) % FIXTURES.length]!;
      const key = `soak-upload-${tag}-${randomBytes(4).toString('hex')}`;
      const through = (i: number) => ({ url: servers[i % 2]!.url, key: organizations[organization]!.key });
      const uploaded = await whenIdle(() => upload(through(a), `${path}/observe-file`, file, { 'idempotency-key': key }));
      expect(uploaded.status, uploaded.text).toBe(202);
      const replayed = await upload(through(a + 1), `${path}/observe-file`, file, { 'idempotency-key': key });
      expect(replayed.status, replayed.text).toBe(202);
      expect(replayed.text).toBe(uploaded.text);
      const again = await upload(through(a + 1), `${path}/observe-file`, file);
      expect(again.status, again.text).toBe(202);
      expect(again.body).toMatchObject({ duplicate: true, observation_id: uploaded.body.observation_id, source_id: uploaded.body.source_id });
      expect((await ended(organization, agentId, threadId, uploaded.body.observation_id)).status).toBe('committed');

      // An answer that also learns its turn: its job is learned by whichever process takes the agent's lease.
      const responded = await answers(() => api(organization, a).post(`${path}/observe-and-respond`, { turn_id: `${tag}-respond`, message: `Which dock did round ${ROUNDS - 1} go to?` }));
      expect(responded.status, responded.text).toBe(200);
      expect((await ended(organization, agentId, threadId, responded.body.observation_id)).status).toBe('committed');

      // A thread deleted through one process right after an observe accepted through the other.
      const doomedThread = await newThread(organization, a, agentId);
      const doomed = await whenIdle(() =>
        api(organization, a).post(`/v1/agents/${agentId}/threads/${doomedThread}/observe`, {
          observations: Array.from({ length: 20 }, (_, t) => ({ content: [{ type: 'text', text: `Forget this: locker ${tag}-${t} holds the spare keys.` }] })),
        }),
      );
      expect(doomed.status, doomed.text).toBe(202);
      const deleted = await api(organization, a + 1).delete(`/v1/agents/${agentId}/threads/${doomedThread}`);
      expect(deleted.status, deleted.text).toBe(202);
      deletedThreads.push(doomedThread);
      expect((await api(organization, a).get(`/v1/agents/${agentId}/threads/${doomedThread}`)).status).toBe(404);
    }

    /** An agent deleted through one process while the other learns for it. */
    async function deletedAgent(organization: number): Promise<void> {
      const agentId = await readyAgentThrough(organization, 0);
      const threadId = await newThread(organization, 1, agentId);
      const observed = await api(organization, 0).post(`/v1/agents/${agentId}/threads/${threadId}/observe`, {
        observations: Array.from({ length: 40 }, (_, t) => ({ content: [{ type: 'text', text: `Doomed agent note ${t}: the boiler was serviced.` }] })),
      });
      expect(observed.status, observed.text).toBe(202);
      const deleted = await api(organization, 1).delete(`/v1/agents/${agentId}`);
      expect(deleted.status, deleted.text).toBe(202);
      deletedAgents.push(agentId);
      for (const i of [0, 1]) expect((await api(organization, i).get(`/v1/agents/${agentId}`)).status).toBe(404);
    }

    /** A second key used through both processes, revoked by `keys revoke` on the database while they serve: the very next request through each is refused. */
    async function revocation(): Promise<void> {
      const created = await runCli(['keys', 'create', '--org', organizations[0]!.id, '--database-url', databaseWithSchema, '--json']);
      expect(created.code, created.stderr).toBe(0);
      const { key, key_id: keyId } = JSON.parse(created.stdout) as { key: string; key_id: string };
      for (let i = 0; i < 6; i++) expect((await client(servers[i % 2]!.url, key).get('/v1/session')).status).toBe(200);
      const revoked = await runCli(['keys', 'revoke', '--key-id', keyId, '--database-url', databaseWithSchema, '--json']);
      expect(revoked.code, revoked.stderr).toBe(0);
      for (const server of [servers[1]!, servers[0]!]) {
        const refused = await client(server.url, key).get('/v1/session');
        expect(refused.status, refused.text).toBe(401);
        expect(refused.body.code).toBe('unauthorized');
      }
    }

    await Promise.all([
      ...Array.from({ length: ORGANIZATIONS }, (_, organization) => {
        const answers = limiter(ANSWERS_AT_ONCE);
        return [...Array.from({ length: AGENTS_PER_ORGANIZATION }, (_, a) => learningAgent(organization, a, answers)), deletedAgent(organization)];
      }).flat(),
      revocation(),
    ]);
    expect(replays).toBe(ORGANIZATIONS * AGENTS_PER_ORGANIZATION * Math.ceil(ROUNDS / REPLAY_EVERY));

    // Every job ends: nothing left queued, processing, interrupted or converting, and no ingestion
    // lease left behind (the deleted thread's and agent's jobs are cancelled or gone).
    const unfinished = async () =>
      (await admin.query(`SELECT id, status FROM jobs WHERE status <> ALL($1) OR (SELECT count(*) FROM leases WHERE name LIKE 'ingest:%') > 0`, [ENDED])).rows;
    await until(async () => (await unfinished()).length === 0, 'every job to end and every lease to be released');
    // A delete answers 202 and works in the background (spec): its job is cancelled at once, its
    // memories go after that, and the thread's or agent's row is the last thing removed. Checking
    // what it removed before that row is gone read the memories of a delete still at work (seen
    // once under load: 40 memories of two deleted threads).
    const deleting = async () =>
      (
        await admin.query(`SELECT id FROM threads WHERE id = ANY($1) UNION ALL SELECT id FROM agents WHERE id = ANY($2)`, [deletedThreads, deletedAgents])
      ).rows;
    await until(async () => (await deleting()).length === 0, 'every background thread and agent delete to finish');
    const jobs = (await admin.query<{ id: string; agent_id: string; thread_id: string; kind: string; status: string; turns_total: number }>('SELECT id, agent_id, thread_id, kind, status, turns_total FROM jobs')).rows;
    const resumed = (await admin.query('SELECT id, kind, status FROM jobs WHERE resumed_at IS NOT NULL')).rows;
    expect(resumed, 'no job resumed: one worker per agent at a time, across both processes').toEqual([]);
    const failed = jobs.filter((job) => job.status === 'failed' || (job.status === 'cancelled' && !deletedThreads.includes(job.thread_id)));
    expect(failed, 'no job failed or was cancelled outside a deleted thread').toEqual([]);

    // Nothing lost: every accepted observation committed with all its turns, each turn exactly one
    // memory (ids are per job and turn; a second job for a replayed request would add a second
    // memory with the same text), and findable through the other process.
    const observeJobs = jobs.filter((job) => job.kind === 'observe' && !deletedThreads.includes(job.thread_id) && !deletedAgents.includes(job.agent_id));
    expect(observeJobs.map((job) => job.id).sort(), 'one job per accepted observe request, replays add none').toEqual(accepted.map((item) => item.observationId).sort());
    const memories = (
      await admin.query<{ agent_id: string; thread_id: string; observation_id: string; turn_index: number; text: string }>(
        'SELECT agent_id, thread_id, observation_id, turn_index, text FROM memory_index_records WHERE organization_id = ANY($1)',
        [organizations.map((organization) => organization.id)],
      )
    ).rows;
    for (const item of accepted) {
      const rows = memories.filter((memory) => memory.observation_id === item.observationId).sort((x, y) => x.turn_index - y.turn_index);
      expect(rows.map((row) => row.text), `memories of ${item.observationId}`).toEqual(item.texts);
    }
    const seen = new Map<string, number>();
    for (const memory of memories) seen.set(`${memory.agent_id}|${memory.text}`, (seen.get(`${memory.agent_id}|${memory.text}`) ?? 0) + 1);
    expect([...seen].filter(([, count]) => count > 1), 'no memory learned twice').toEqual([]);
    const turnsCommitted = (await admin.query<{ n: string }>("SELECT count(*) AS n FROM job_turns t JOIN jobs j ON j.id = t.job_id WHERE j.status = 'committed' AND t.state <> 'committed'")).rows[0]!.n;
    expect(Number(turnsCommitted), 'a committed job has every turn committed').toBe(0);
    for (const job of jobs.filter((job) => job.status === 'committed')) {
      expect(memories.filter((memory) => memory.observation_id === job.id).length, `memories of ${job.kind} job ${job.id}`).toBeGreaterThanOrEqual(job.turns_total);
    }

    // Deleted means forgotten, even when the other process was learning it at the time.
    expect(memories.filter((memory) => deletedThreads.includes(memory.thread_id)), 'memories of deleted threads').toEqual([]);
    expect(memories.filter((memory) => deletedAgents.includes(memory.agent_id)), 'memories of deleted agents').toEqual([]);
    expect(jobs.filter((job) => deletedAgents.includes(job.agent_id)), 'jobs of deleted agents').toEqual([]);

    // Retrievable: a sample of turns recalled, through both processes.
    for (const [n, item] of accepted.filter((_, n) => n % 5 === 0).entries()) {
      const recalled = await api(item.organization, n).post(`/v1/agents/${item.agentId}/recall`, { query: item.texts[1]!.split(' ')[1]! });
      expect(recalled.status, recalled.text).toBe(200);
      expect(recalled.body.memory_context).toContain(item.texts[1]);
    }

    // Charged once: each committed job's turns cost exactly their words, once.
    const charges = (await admin.query<{ job_id: string; in_words: number }>("SELECT job_id, in_words FROM ledger_entries WHERE kind = 'charge' AND job_id IS NOT NULL")).rows;
    const turnTexts = (await admin.query<{ job_id: string; text: string }>("SELECT t.job_id, t.text FROM job_turns t JOIN jobs j ON j.id = t.job_id WHERE j.status = 'committed'")).rows;
    for (const job of jobs.filter((job) => job.status === 'committed')) {
      const charged = charges.filter((charge) => charge.job_id === job.id).reduce((sum, charge) => sum + charge.in_words, 0);
      const words = turnTexts.filter((turn) => turn.job_id === job.id).reduce((sum, turn) => sum + countWords(turn.text), 0);
      expect(charged, `input words charged for job ${job.id}`).toBe(words);
    }

    // The ledger balances, per organization: through /v1/billing (every page) and in SQL.
    for (const [o, organization] of organizations.entries()) {
      let total = 0n;
      let balance: string | null = null;
      let entries = 0;
      for (let cursor: number | null = null; ; ) {
        const page: ApiResponse = await api(o, entries).get(`/v1/billing?limit=100${cursor === null ? '' : `&cursor=${cursor}`}`);
        expect(page.status, page.text).toBe(200);
        balance ??= page.body.balance as string;
        for (const entry of page.body.entries as { cost: string }[]) total += micro(entry.cost);
        entries += page.body.entries.length;
        if (page.body.next_cursor === null || page.body.next_cursor === undefined) break;
        cursor = page.body.next_cursor as number;
      }
      expect(entries, 'the organization was charged').toBeGreaterThan(1);
      expect(micro(balance!), `balance of ${organization.id} = -(sum of its entries)`).toBe(-total);
      const sql = (
        await admin.query<{ balance: string; spent: string }>(
          'SELECT a.balance::text AS balance, (SELECT coalesce(sum(cost), 0)::text FROM ledger_entries e WHERE e.organization_id = a.organization_id) AS spent FROM billing_accounts a WHERE organization_id = $1',
          [organization.id],
        )
      ).rows[0]!;
      expect(Number(sql.balance) + Number(sql.spent), `SQL balance of ${organization.id}`).toBeCloseTo(0, 9);
      expect(micro(Number(sql.balance).toFixed(6))).toBe(micro(balance!));
    }
    expect(liveAgents).toHaveLength(ORGANIZATIONS * AGENTS_PER_ORGANIZATION);
    // Nothing failed out of sight either: no background task (a delete) or worker logged an error.
    expect(problemsLogged().filter((line) => line.includes('"level":"error"'))).toEqual([]);
  });
});
