import { randomBytes } from 'node:crypto';
import { cachingStore } from '@memory-agents/core/adapter';
import { describeStoreConformance, postgresUrl } from '@memory-agents/core/testing';
import pg from 'pg';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { migratedPglite, migratedPgliteStore } from './__fixtures__/pglite-templates.js';
import { STORE_MIGRATIONS } from './migrations/index.js';
import { postgresStore } from './postgres-store.js';
import { openSqlClient } from './sql-client.js';

describe('PGlite on disk', () => {
  it('opens with 32 MB of shared buffers unless told otherwise', async () => {
    const root = await mkdtemp(join(tmpdir(), 'ma-pgconf-'));
    try {
      const byDefault = await openSqlClient({ dataDir: join(root, 'a') });
      expect((await byDefault.query<{ shared_buffers: string }>('SHOW shared_buffers')).rows[0]?.shared_buffers).toBe('32MB');
      await byDefault.close();
      const tuned = await openSqlClient({ dataDir: join(root, 'b'), pgliteSettings: ['shared_buffers = 64MB', 'work_mem = 8MB'] });
      expect((await tuned.query<{ shared_buffers: string }>('SHOW shared_buffers')).rows[0]?.shared_buffers).toBe('64MB');
      expect((await tuned.query<{ work_mem: string }>('SHOW work_mem')).rows[0]?.work_mem).toBe('8MB');
      await tuned.close();
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it('creates a data dir whose parents do not exist yet, and finds its state again', async () => {
    const root = await mkdtemp(join(tmpdir(), 'ma-pgdir-'));
    const dataDir = join(root, 'data', 'nested', 'pgdata');
    try {
      const store = postgresStore({ dataDir });
      await store.init();
      expect(await store.organizations.list()).toEqual([]);
      await store.close();
      expect(existsSync(join(dataDir, 'PG_VERSION'))).toBe(true);
      const again = postgresStore({ dataDir });
      await again.init();
      expect(await again.organizations.list()).toEqual([]);
      await again.close();
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});

describe('capabilities', () => {
  it('reports a PGlite database as one process (shared false), also when handed over as a client', async () => {
    expect(postgresStore({ dataDir: 'memory://' }).capabilities).toEqual({ persistent: true, shared: false });
    const client = await openSqlClient({ dataDir: 'memory://' });
    try {
      const store = postgresStore({ client });
      expect(store.capabilities).toEqual({ persistent: true, shared: false });
      await store.init();
      expect(await store.organizations.list()).toEqual([]);
      await store.close();
    } finally {
      await client.close();
    }
  });

  it('reports a PostgreSQL server as shared, whether given by URL or as a client', () => {
    expect(postgresStore({ connectionString: 'postgres://nobody@127.0.0.1:1/none' }).capabilities).toEqual({ persistent: true, shared: true });
    const client = { dialect: 'postgres' } as Parameters<typeof postgresStore>[0]['client'];
    expect(postgresStore({ client }).capabilities).toEqual({ persistent: true, shared: true });
  });
});

describe('job and turn details written by earlier versions', () => {
  it('reads the JSON columns into the typed details: a document job and its turns, fields missing or not', async () => {
    const client = await openSqlClient({ dataDir: 'memory://' });
    const store = postgresStore({ client });
    try {
      await store.init();
      const at = '2026-01-01T00:00:00.000Z';
      await client.query(`INSERT INTO organizations (id, name, limits, created_at) VALUES ('org_1', 'Acme', '{}', $1)`, [at]);
      await client.query(
        `INSERT INTO agents (id, organization_id, status, config, visibility, resumed_from_turn, restore_from, created_at, updated_at)
         VALUES ('agent_1', 'org_1', 'ready', '{"role":"a","objective":"b"}', 'external', 0, NULL, $1, $1)`,
        [at],
      );
      await client.query(
        `INSERT INTO threads (id, agent_id, organization_id, end_user_id, status, title, metadata, created_at, updated_at)
         VALUES ('thread_1', 'agent_1', 'org_1', NULL, 'ready', 'Untitled', '{}', $1, $1)`,
        [at],
      );
      // Rows as earlier versions wrote them: untyped JSON, a deferred document job (with its scanned pages),
      // an observe job with '{}', turns with and without a page, pageEnd or piece.
      const insertJob = (id: string, kind: string, status: string, details: string) =>
        client.query(
          `INSERT INTO jobs (id, organization_id, agent_id, thread_id, end_user_id, request_id, kind, status, turns_total, error, queued, details, created_at, updated_at)
           VALUES ($1, 'org_1', 'agent_1', 'thread_1', NULL, 'req_1', $2, $3, 2, NULL, false, $4::jsonb, $5, $5)`,
          [id, kind, status, details, at],
        );
      await insertJob('obs_doc', 'document', 'converting', '{"sourceId":"src_1","filename":"scan.pdf","converting":true,"scannedPages":12}');
      await insertJob('obs_done', 'document', 'committed', '{"sourceId":"src_2","filename":"notes.md","converting":false}');
      await insertJob('obs_said', 'observe', 'committed', '{}');
      const insertTurn = (jobId: string, turnIndex: number, details: string) =>
        client.query(
          `INSERT INTO job_turns (job_id, turn_index, speaker, text, sent_at, tags, state, failure_reason, details)
           VALUES ($1, $2, 'user', 'text', $3, '[]', 'committed', NULL, $4::jsonb)`,
          [jobId, turnIndex, at, details],
        );
      await insertTurn('obs_done', 0, '{"sourceId":"src_2","page":null,"pageEnd":null,"filename":"notes.md","piece":0}');
      await insertTurn('obs_done', 1, '{"sourceId":"src_2","page":3}');
      await insertTurn('obs_said', 0, '{}');

      expect(await store.jobs.get({ agentId: 'agent_1', jobId: 'obs_doc' })).toMatchObject({
        kind: 'document',
        details: { sourceId: 'src_1', filename: 'scan.pdf', converting: true, scannedPages: 12 },
      });
      expect(await store.jobs.get({ agentId: 'agent_1', jobId: 'obs_done' })).toMatchObject({
        kind: 'document',
        details: { sourceId: 'src_2', filename: 'notes.md', converting: false },
      });
      expect(await store.jobs.get({ agentId: 'agent_1', jobId: 'obs_said' })).toMatchObject({ kind: 'observe', details: {} });
      expect((await store.turns.list({ jobId: 'obs_done', fromIndex: 0, limit: 10 })).map((turn) => turn.details)).toEqual([
        { sourceId: 'src_2', filename: 'notes.md', page: null, pageEnd: null, piece: 0 },
        { sourceId: 'src_2', filename: null, page: 3, pageEnd: null, piece: null },
      ]);
      expect((await store.turns.list({ jobId: 'obs_said', fromIndex: 0, limit: 10 })).map((turn) => turn.details)).toEqual([{}]);
    } finally {
      await store.close();
      await client.close();
    }
  });
});

// Each case gets its own in-memory PGlite, opened from a copy of one migrated database (see
// __fixtures__/pglite-templates.ts) instead of running initdb and every migration again; the
// migrations from empty run in that copy's making and in the cases above and below.
describe('the migrated PGlite the conformance cases start from', () => {
  it('holds every store migration, is empty, and is a database of its own', async () => {
    const first = await migratedPglite();
    const second = await migratedPglite();
    try {
      const versions = async (db: typeof first) => (await db.query<{ version: number }>('SELECT version FROM memory_agents_migrations ORDER BY version')).rows.map((row) => row.version);
      expect(await versions(first)).toEqual(STORE_MIGRATIONS.map((migration) => migration.version));
      const store = postgresStore({ pglite: first });
      await store.init();
      expect(await versions(first)).toEqual(STORE_MIGRATIONS.map((migration) => migration.version));
      expect(await store.organizations.list()).toEqual([]);
      await store.organizations.insert({ organization: { id: 'org_1', name: 'Acme', limits: {}, createdAt: '2026-01-01T00:00:00.000Z' } });
      expect(await store.organizations.list()).toHaveLength(1);
      const other = postgresStore({ pglite: second });
      await other.init();
      expect(await other.organizations.list()).toEqual([]);
    } finally {
      await first.close();
      await second.close();
    }
  });
});

describeStoreConformance({
  name: 'PGlite (in memory) behind cachingStore, as the embedded default runs it',
  create: async () => {
    const { store, cleanup } = await migratedPgliteStore();
    return { store: cachingStore(store), cleanup };
  },
});

describeStoreConformance({
  name: 'PGlite (in memory)',
  create: migratedPgliteStore,
});

const databaseUrl = postgresUrl('PostgreSQL store');

describe.skipIf(!databaseUrl)('real PostgreSQL (DATABASE_URL)', () => {
  describeStoreConformance({
    name: 'PostgreSQL',
    create: async () => {
      // A schema per test keeps runs (and parallel workers) apart on the shared database.
      const schema = `ma_store_${randomBytes(6).toString('hex')}`;
      const store = postgresStore({ connectionString: databaseUrl!, schema });
      await store.init();
      return {
        store,
        reopen: async () => {
          const second = postgresStore({ connectionString: databaseUrl!, schema });
          await second.init();
          return second;
        },
        cleanup: async () => {
          const client = new pg.Client({ connectionString: databaseUrl });
          await client.connect();
          await client.query(`DROP SCHEMA ${schema} CASCADE`);
          await client.end();
        },
      };
    },
  });
});

describe.skipIf(!databaseUrl)('real PostgreSQL (DATABASE_URL), a thread deleted while its job records progress', () => {
  it('lets the delete and setTurnStates both finish, whichever waits first (no deadlock)', async () => {
    const schema = `ma_store_${randomBytes(6).toString('hex')}`;
    const store = postgresStore({ connectionString: databaseUrl!, schema });
    await store.init();
    const blocker = new pg.Client({ connectionString: databaseUrl });
    await blocker.connect();
    const watcher = new pg.Client({ connectionString: databaseUrl });
    await watcher.connect();
    try {
      const at = '2026-01-01T00:00:00.000Z';
      const organizationId = 'org_01JSOAK0000000000000000000';
      const agentId = 'agent_01JSOAK0000000000000000000';
      const threadId = 'thread_01JSOAK0000000000000000000';
      const jobId = 'obs_01JSOAK0000000000000000000';
      await store.organizations.insert({ organization: { id: organizationId, name: 'Acme', limits: {}, createdAt: at } });
      await store.agents.insert({
        agent: { id: agentId, organizationId, status: 'ready', config: { role: 'a', objective: 'b' }, visibility: 'external', resumedFromTurn: 0, restoreFrom: null, createdAt: at, updatedAt: at },
        maxLive: 100,
      });
      await store.threads.insert({ thread: { id: threadId, agentId, organizationId, endUserId: null, status: 'ready', title: 'Untitled', metadata: {}, createdAt: at, updatedAt: at } });
      await store.jobs.insert({
        job: { id: jobId, organizationId, agentId, threadId, endUserId: null, requestId: 'req_1', kind: 'observe', status: 'processing', turnsTotal: 3, turnsProcessed: 0, error: null, queued: false, resumedAt: null, learning: null, details: {}, createdAt: at, updatedAt: at },
        turns: [0, 1, 2].map((turnIndex) => ({ jobId, turnIndex, speaker: 'user', text: `turn ${turnIndex}`, timestamp: at, tags: [], state: 'pending' as const, failureReason: null, details: {} })),
        onlyIfIdle: false,
      });
      // Another transaction holds the job's row, so both calls queue behind it in a known order:
      // the thread delete first (its cascade reaches the job row), then the worker's progress.
      await blocker.query('BEGIN');
      await blocker.query(`SELECT 1 FROM ${schema}.jobs WHERE id = $1 FOR UPDATE`, [jobId]);
      const waiting = async (count: number) => {
        for (;;) {
          const { rows } = await watcher.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query ILIKE ANY (ARRAY['%threads%', '%job_turns%', '%jobs%'])");
          if (rows[0].n >= count) return;
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      };
      const deleted = store.threads.delete({ agentId, threadId });
      await waiting(1);
      const progressed = store.turns.setStates({ jobId, turnIndexes: [0, 1], state: 'committed' });
      await waiting(2);
      await blocker.query('COMMIT');
      // Before the fix the progress updated the job's turns first and then the job, the cascade
      // the other way round: PostgreSQL aborted one of them with "deadlock detected".
      await expect(Promise.all([deleted, progressed])).resolves.toBeDefined();
      expect(await store.threads.get({ agentId, threadId })).toBeNull();
      expect(await store.jobs.get({ agentId, jobId })).toBeNull();
    } finally {
      await blocker.end();
      await watcher.end();
      await store.close();
      const client = new pg.Client({ connectionString: databaseUrl });
      await client.connect();
      await client.query(`DROP SCHEMA ${schema} CASCADE`);
      await client.end();
    }
  });
});
