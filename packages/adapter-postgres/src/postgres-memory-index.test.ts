import { randomBytes } from 'node:crypto';
import { describeMemoryIndexConformance, postgresUrl } from '@memory-agents/core/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { emptyPgliteClient } from './__fixtures__/pglite-templates.js';
import { postgresMemoryIndex, type PostgresMemoryIndexOptions } from './postgres-memory-index.js';
import { indexTables, migrations } from './memory-index/schema.js';
import { migrate } from './migrate.js';
import { openSqlClient, type SqlClient } from './sql-client.js';

/**
 * One database per conformance run (a PGlite's initdb takes seconds: each starts from a copy of
 * one, see __fixtures__/pglite-templates.ts), one schema per test: each test starts
 * empty, `reopen` is a second index instance on the same schema, and cleanup drops the schema.
 */
function conformanceOn(name: string, open: () => Promise<SqlClient>, extra: Partial<PostgresMemoryIndexOptions> = {}) {
  let client: Promise<SqlClient> | null = null;
  afterAll(async () => {
    if (client) await (await client).close();
  });
  describeMemoryIndexConformance({
    name,
    create: async () => {
      client ??= open();
      const sql = await client;
      const schema = `mi_${randomBytes(6).toString('hex')}`;
      const options = { client: sql, schema, ...extra };
      return {
        port: postgresMemoryIndex(options),
        reopen: async () => postgresMemoryIndex(options),
        cleanup: async () => {
          await sql.exec(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
        },
      };
    },
  });
}

// PGlite searches vectors in the process by default (vectorSearch 'process'); 'database' is pgvector in WebAssembly.
conformanceOn('PGlite + pgvector', () => emptyPgliteClient());
conformanceOn('PGlite + pgvector, HNSW from 1,000 rows', () => emptyPgliteClient(), {
  vectorSearch: 'database',
  annThreshold: 1000,
  exactSearchBelow: 0,
});
conformanceOn('PGlite, full text scoring a bounded candidate set', () => emptyPgliteClient(), { fullTextCandidates: 3 });

const databaseUrl = postgresUrl('PostgreSQL memory index');
/**
 * A PostgreSQL server without the pgvector extension (many self-hosted ones): the adapter stores
 * vectors as arrays and ranks them exactly in the process. CI installs pgvector, so this path is
 * kept under test by hiding the extension from the client.
 */
async function withoutPgvector(open: () => Promise<SqlClient>): Promise<SqlClient> {
  const client = await open();
  client.hasVector = false;
  return client;
}

describe.skipIf(!databaseUrl)('real PostgreSQL (DATABASE_URL)', () => {
  conformanceOn('PostgreSQL', () => openSqlClient({ connectionString: databaseUrl! }));
  // HNSW as soon as there are rows, and used for every agent: iterative index scans must still
  // give k hits to an agent whose rows are a small share of the table.
  conformanceOn('PostgreSQL + HNSW for every agent', () => openSqlClient({ connectionString: databaseUrl! }), { annThreshold: 10, exactSearchBelow: 0 });
  conformanceOn('PostgreSQL without pgvector (exact vectors in the process)', () => withoutPgvector(() => openSqlClient({ connectionString: databaseUrl! })));
  conformanceOn('PostgreSQL + pgvector, vectors searched in the process', () => openSqlClient({ connectionString: databaseUrl! }), { vectorSearch: 'process' });
});

/**
 * The JS vector path (PostgreSQL without pgvector, PGlite, `vectorSearch: 'process'`) caches vectors per agent and version; a write
 * through another instance (another process, in production) must be seen by the next search.
 */
function crossInstanceCases(name: string, open: () => Promise<SqlClient>, extra: Partial<PostgresMemoryIndexOptions> = {}) {
  describe(`postgresMemoryIndex across instances: ${name}`, () => {
    let client: Promise<SqlClient> | null = null;
    afterAll(async () => {
      if (client) await (await client).close();
    });

    it('a search sees upserts, replacements and deletions made through another instance', async () => {
      client ??= open();
      const sql = await client;
      const schema = `mi_${randomBytes(6).toString('hex')}`;
      try {
        const writer = postgresMemoryIndex({ client: sql, schema, ...extra });
        const reader = postgresMemoryIndex({ client: sql, schema, ...extra });
        await writer.init();
        await reader.init();
        const embedder = { id: 'test:4', dimensions: 4 };
        const record = (id: string, vector: number[], agentId = 'agent_a') => ({
          id,
          organizationId: 'org_1',
          agentId,
          text: `memory ${id}`,
          keywords: '',
          vector: Float32Array.from(vector),
          speaker: null,
          occurredAt: null,
          source: { kind: 'turn' as const, threadId: 'thread_1', observationId: 'obs_1', turnIndex: 0 },
          createdAt: '2026-01-01T00:00:00.000Z',
          provenance: { writer: 'unknown', jobId: null, span: null }, alsoFrom: [], validFrom: null, validTo: null, supersededBy: null, suspicious: false, expiresAt: null,
        });
        const query = Float32Array.from([1, 0, 0, 0]);
        const top = async () => (await reader.search({ agentId: 'agent_a', text: '', vector: query, limit: 3 })).semantic.map((hit) => hit.record.id);

        await writer.upsert({ records: [record('mem_1', [0, 1, 0, 0]), record('mem_2', [1, 1, 0, 0])], embedder });
        expect(await top()).toEqual(['mem_2', 'mem_1']);
        await reader.upsert({ records: [record('mem_3', [1, 0.1, 0, 0])], embedder }); // applied in place
        expect(await top()).toEqual(['mem_3', 'mem_2', 'mem_1']);
        await writer.upsert({ records: [record('mem_1', [1, 0, 0, 0])], embedder });
        expect(await top()).toEqual(['mem_1', 'mem_3', 'mem_2']);
        await writer.deleteBy({ agentId: 'agent_a', observationId: 'obs_1' });
        expect(await top()).toEqual([]);
        await writer.upsert({ records: [record('mem_4', [1, 0, 0, 0])], embedder });
        await reader.upsert({ records: [record('mem_4', [1, 0, 0, 0], 'agent_b')], embedder }); // moved away
        expect(await top()).toEqual([]);
        await writer.copyAgent({ fromAgentId: 'agent_b', toAgentId: 'agent_a', toOrganizationId: 'org_1', newId: () => 'mem_5' });
        expect(await top()).toEqual(['mem_5']);
      } finally {
        await sql.exec(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      }
    });
  });
}

crossInstanceCases('PGlite + pgvector', () => emptyPgliteClient());
describe.skipIf(!databaseUrl)('real PostgreSQL (DATABASE_URL), across instances', () => {
  crossInstanceCases('PostgreSQL', () => openSqlClient({ connectionString: databaseUrl! }));
  crossInstanceCases('PostgreSQL without pgvector', () => withoutPgvector(() => openSqlClient({ connectionString: databaseUrl! })));
  crossInstanceCases('PostgreSQL + pgvector, vectors searched in the process', () => openSqlClient({ connectionString: databaseUrl! }), { vectorSearch: 'process' });
});

/**
 * Full text reads BM25's statistics (records, total length, document frequencies per agent) from
 * tables every write keeps; after replacements, moves between agents, deletions and copies they
 * must equal the statistics recomputed from the records.
 */
describe('postgresMemoryIndex term statistics (PGlite)', () => {
  it('stay equal to the records through replacements, moves, deletions and copies', async () => {
    const sql = await emptyPgliteClient();
    try {
      const index = postgresMemoryIndex({ client: sql, schema: 'stats' });
      const embedder = { id: 'test:2', dimensions: 2 };
      const record = (id: string, text: string, agentId = 'agent_a', observationId = 'obs_1') => ({
        id,
        organizationId: 'org_1',
        agentId,
        text,
        keywords: '',
        vector: Float32Array.from([1, 0]),
        speaker: null,
        occurredAt: null,
        source: { kind: 'turn' as const, threadId: 'thread_1', observationId, turnIndex: 0 },
        createdAt: '2026-01-01T00:00:00.000Z',
        provenance: { writer: 'unknown', jobId: null, span: null }, alsoFrom: [], validFrom: null, validTo: null, supersededBy: null, suspicious: false, expiresAt: null,
      });
      await index.upsert({ records: [record('m1', 'garden zebra garden'), record('m2', 'garden unicorn'), record('m3', 'harbour boats', 'agent_b')], embedder });
      await index.upsert({ records: [record('m1', 'harbour zebra'), record('m2', 'garden unicorn', 'agent_b')], embedder }); // replaced, moved
      await index.upsert({ records: [record('m4', 'kayak kayak', 'agent_a', 'obs_2'), record('m5', 'kayak harbour', 'agent_a', 'obs_2')], embedder });
      await index.deleteBy({ agentId: 'agent_a', ids: ['m5'] });
      await index.copyAgent({ fromAgentId: 'agent_b', toAgentId: 'agent_a', toOrganizationId: 'org_1', newId: (() => { let n = 0; return () => `copy${++n}`; })() });
      await index.deleteBy({ agentId: 'agent_a', observationId: 'obs_2' });

      const kept = await sql.query<{ agent_id: string; term: string; df: number }>('SELECT agent_id, term, df FROM stats.memory_index_terms ORDER BY 1, 2');
      const recomputed = await sql.query<{ agent_id: string; term: string; df: number }>(
        `SELECT r.agent_id, u.term, count(*)::int AS df FROM stats.memory_index_records r CROSS JOIN LATERAL (SELECT DISTINCT unnest(r.terms) AS term) u
         GROUP BY 1, 2 ORDER BY 1, 2`,
      );
      expect(kept.rows).toEqual(recomputed.rows);
      const agents = await sql.query('SELECT agent_id, row_count::int AS n, term_total::int AS total FROM stats.memory_index_agents ORDER BY 1');
      const counted = await sql.query(
        'SELECT agent_id, count(*)::int AS n, sum(term_count)::int AS total FROM stats.memory_index_records GROUP BY 1 ORDER BY 1',
      );
      expect(agents.rows).toEqual(counted.rows);
      expect(kept.rows.length).toBeGreaterThan(3);
      // The full-text channel's postings follow every write, replacement, move, copy and deletion.
      const postings = await sql.query(
        `SELECT t.agent_id, r.id, t.term, p.tf, p.term_count FROM stats.memory_index_postings p
         JOIN stats.memory_index_terms t ON t.term_id = p.term_id JOIN stats.memory_index_records r ON r.rec = p.rec ORDER BY r.id, t.term`,
      );
      const fromRecords = await sql.query(
        `SELECT r.agent_id, r.id, u.term, count(*)::int AS tf, r.term_count FROM stats.memory_index_records r CROSS JOIN LATERAL unnest(r.terms) AS u(term)
         GROUP BY r.agent_id, r.id, u.term, r.term_count ORDER BY r.id, u.term`,
      );
      expect(postings.rows).toEqual(fromRecords.rows);
      expect(postings.rows.length).toBeGreaterThan(5);
    } finally {
      await sql.close();
    }
  });

  it('are computed from the records already there when an older schema is migrated', async () => {
    const sql = await emptyPgliteClient();
    try {
      const tables = indexTables('upgraded');
      await sql.exec('CREATE SCHEMA upgraded');
      await migrate(sql, 'upgraded.memory_index_migrations', migrations(tables, 'bytea').slice(0, 2));
      await sql.exec(`INSERT INTO upgraded.memory_index_records (id, agent_id, organization_id, text, keywords, terms, term_count, embedding,
          embedding_norm, created_at, source_kind, thread_id, observation_id, turn_index)
        VALUES ('m1', 'agent_a', 'org_1', 'x', '', '{garden,garden,zebra}', 3, '\\x', 0, 'now', 'turn', 't', 'o', 0),
               ('m2', 'agent_a', 'org_1', 'x', '', '{garden}', 1, '\\x', 0, 'now', 'turn', 't', 'o', 0)`);
      // Migration 4 builds the postings keyed by text, migration 5 (in init) rekeys them by integers.
      await migrate(sql, 'upgraded.memory_index_migrations', migrations(tables, 'bytea').slice(0, 4));
      const textKeyed = await sql.query('SELECT agent_id, id, term, tf FROM upgraded.memory_index_postings ORDER BY id, term');
      expect(textKeyed.rows).toHaveLength(3);
      await postgresMemoryIndex({ client: sql, schema: 'upgraded' }).init();
      const { rows } = await sql.query('SELECT term, df FROM upgraded.memory_index_terms ORDER BY term');
      expect(rows).toEqual([{ term: 'garden', df: 2 }, { term: 'zebra', df: 1 }]);
      const agents = await sql.query('SELECT agent_id, row_count::int AS n, term_total::int AS total FROM upgraded.memory_index_agents');
      expect(agents.rows).toEqual([{ agent_id: 'agent_a', n: 2, total: 4 }]);
      const postings = await sql.query(
        `SELECT r.id, t.term, p.tf FROM upgraded.memory_index_postings p
         JOIN upgraded.memory_index_terms t ON t.term_id = p.term_id JOIN upgraded.memory_index_records r ON r.rec = p.rec ORDER BY r.id, t.term`,
      );
      expect(postings.rows).toEqual([{ id: 'm1', term: 'garden', tf: 2 }, { id: 'm1', term: 'zebra', tf: 1 }, { id: 'm2', term: 'garden', tf: 1 }]);
    } finally {
      await sql.close();
    }
  });

  it('gives rows written before the memory record v2 the defaults, then filters, lists and updates them', async () => {
    const sql = await emptyPgliteClient();
    try {
      const tables = indexTables('before_v2');
      await sql.exec('CREATE SCHEMA before_v2');
      await migrate(sql, 'before_v2.memory_index_migrations', migrations(tables, 'bytea').slice(0, 5));
      // Written as the previous version did (through its columns); the term statistics are left
      // empty (no full-text search below), the vectors are float32 bytes.
      await sql.exec(`INSERT INTO before_v2.memory_index_records (id, agent_id, organization_id, text, keywords, terms, term_count, embedding,
          embedding_norm, speaker, occurred_at, created_at, source_kind, thread_id, observation_id, turn_index)
        VALUES ('m1', 'agent_a', 'org_1', 'canoe one', '', '{canoe}', 1, '\\x0000803f000000000000000000000000', 1, 'Ana', '2025-06-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z', 'turn', 't1', 'o1', 0),
               ('m2', 'agent_a', 'org_1', 'canoe two', '', '{canoe}', 1, '\\x0000803f000000000000000000000000', 1, 'Ana', NULL, '2026-01-02T00:00:00.000Z', 'turn', 't2', 'o2', 0)`);
      await sql.exec(`INSERT INTO before_v2.memory_index_meta (key, value) VALUES ('embedder', '{"id":"test:4","dimensions":4}')`);
      const index = postgresMemoryIndex({ client: sql, schema: 'before_v2' });
      await index.init();
      const got = await index.get({ agentId: 'agent_a', ids: ['m1', 'm2'] });
      expect(got.map(({ vector: _vector, ...record }) => record)).toEqual(
        [
          ['m1', 'canoe one', '2025-06-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z', 't1', 'o1'],
          ['m2', 'canoe two', null, '2026-01-02T00:00:00.000Z', 't2', 'o2'],
        ].map(([id, text, occurredAt, createdAt, threadId, observationId]) => ({
          id,
          organizationId: 'org_1',
          agentId: 'agent_a',
          text,
          keywords: '',
          speaker: 'Ana',
          occurredAt,
          source: { kind: 'turn', threadId, observationId, turnIndex: 0 },
          createdAt,
          provenance: { writer: 'unknown', jobId: null, span: null },
          alsoFrom: [],
          validFrom: occurredAt ?? createdAt,
          validTo: null,
          supersededBy: null,
          suspicious: false, expiresAt: null,
        })),
      );
      const query = Float32Array.from([1, 0, 0, 0]);
      const semantic = async (asOf?: string) =>
        (await index.search({ agentId: 'agent_a', text: '', vector: query, limit: 5, ...(asOf ? { asOf } : {}) })).semantic.map((hit) => hit.record.id).sort();
      expect(await semantic()).toEqual(['m1', 'm2']);
      // validFrom defaulted to occurredAt ?? createdAt.
      expect(await semantic('2025-12-01T00:00:00.000Z')).toEqual(['m1']);
      expect((await index.list({ agentId: 'agent_a', limit: 5 })).records.map((record) => record.id)).toEqual(['m2', 'm1']);
      await index.update({ agentId: 'agent_a', patches: [{ id: 'm2', validTo: '2026-02-01T00:00:00.000Z', supersededBy: 'm3' }] });
      expect(await semantic()).toEqual(['m1']);
      expect((await index.list({ agentId: 'agent_a', limit: 5, includeHistory: true })).records.map((record) => record.id)).toEqual(['m2', 'm1']);
    } finally {
      await sql.close();
    }
  });
});

describe.skipIf(!databaseUrl)('real PostgreSQL (DATABASE_URL), a connection that cannot see pgvector', () => {
  it('refuses to start on pgvector tables, saying to put the extension on the search_path, and starts once it is', async (context) => {
    const pg = (await import('pg')).default;
    const admin = new pg.Client({ connectionString: databaseUrl });
    await admin.connect();
    const schema = `mi_path_${randomBytes(5).toString('hex')}`;
    try {
      if ((await admin.query("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'")).rowCount !== 1) {
        if (process.env.CI === 'true') throw new Error('pgvector is not installed on this server; CI must have it (bash ../shared/scripts/install-pgvector.sh)');
        return context.skip('pgvector is not installed on this server');
      }
      await admin.query('CREATE EXTENSION IF NOT EXISTS vector');
      const { rows: where } = await admin.query<{ schema: string }>("SELECT extnamespace::regnamespace::text AS schema FROM pg_extension WHERE extname = 'vector'");
      const extensionSchema = where[0]!.schema;
      await admin.query(`CREATE SCHEMA ${schema}`);
      const opened = async (searchPath: string) => {
        const url = new URL(databaseUrl!);
        url.searchParams.set('options', `-c search_path=${searchPath}`);
        return openSqlClient({ connectionString: url.toString() });
      };
      const embedder = { id: 'test:4', dimensions: 4 };
      const record = {
        id: 'mem_path',
        organizationId: 'org_1',
        agentId: 'agent_a',
        text: 'the harbour crane was inspected',
        keywords: '',
        vector: Float32Array.from([1, 0, 0, 0]),
        speaker: null,
        occurredAt: null,
        source: { kind: 'turn' as const, threadId: 'thread_1', observationId: 'obs_1', turnIndex: 0 },
        createdAt: '2026-01-01T00:00:00.000Z',
        provenance: { writer: 'unknown', jobId: null, span: null }, alsoFrom: [], validFrom: null, validTo: null, supersededBy: null, suspicious: false, expiresAt: null,
      };
      // Made by a process whose search_path holds the extension: pgvector tables.
      const seeing = await opened(`${schema},${extensionSchema}`);
      const made = postgresMemoryIndex({ client: seeing, schema });
      await made.init();
      await made.upsert({ records: [record], embedder });
      await made.close();
      await seeing.close();
      // Opened by one whose search_path leaves it out: a clear refusal, not failed writes later.
      const blind = await opened(schema);
      try {
        await expect(postgresMemoryIndex({ client: blind, schema }).init()).rejects.toMatchObject({
          code: 'service_unavailable',
          message: expect.stringMatching(/stores pgvector vectors, but this connection cannot use the type "vector".*search_path/),
        });
      } finally {
        await blind.close();
      }
      const again = await opened(`${schema},${extensionSchema}`);
      try {
        const index = postgresMemoryIndex({ client: again, schema });
        await index.init();
        const found = await index.search({ agentId: 'agent_a', text: 'crane', vector: Float32Array.from([1, 0, 0, 0]), limit: 1 });
        expect(found.semantic.map((hit) => hit.record.id)).toEqual(['mem_path']);
        expect(found.lexical.map((hit) => hit.record.id)).toEqual(['mem_path']);
        await index.close();
      } finally {
        await again.close();
      }
    } finally {
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await admin.end();
    }
  });
});

describe.skipIf(!databaseUrl)('real PostgreSQL (DATABASE_URL), processes starting at once on a new database', () => {
  it('uses pgvector when another process created the extension at the same moment (its CREATE EXTENSION won)', async (context) => {
    const pg = (await import('pg')).default;
    const admin = new pg.Client({ connectionString: databaseUrl });
    await admin.connect();
    const database = `ma_ext_${randomBytes(5).toString('hex')}`;
    try {
      if ((await admin.query("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'")).rowCount !== 1) {
        // .ci/run installs pgvector: in CI its absence is a failure, not a skip.
        if (process.env.CI === 'true') throw new Error('pgvector is not installed on this server; CI must have it (bash ../shared/scripts/install-pgvector.sh)');
        return context.skip('pgvector is not installed on this server');
      }
      await admin.query(`CREATE DATABASE ${database}`);
      const url = new URL(databaseUrl!);
      url.pathname = `/${database}`;
      // The other process: its CREATE EXTENSION is done but not committed yet.
      const other = new pg.Client({ connectionString: url.toString() });
      await other.connect();
      await other.query('BEGIN');
      await other.query('CREATE EXTENSION vector');
      const sql = await openSqlClient({ connectionString: url.toString() });
      try {
        const index = postgresMemoryIndex({ client: sql, schema: 'mi_race' });
        const init = index.init();
        // This process's CREATE EXTENSION IF NOT EXISTS waits on the other's row; the other commits.
        for (;;) {
          const waiting = await admin.query("SELECT 1 FROM pg_stat_activity WHERE datname = $1 AND wait_event_type = 'Lock'", [database]);
          if (waiting.rowCount! > 0) break;
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        await other.query('COMMIT');
        await init;
        const { rows } = await sql.query<{ value: string }>("SELECT value FROM mi_race.memory_index_meta WHERE key = 'vector_kind'");
        expect(rows[0]?.value).toBe('pgvector');
        await index.close();
      } finally {
        await sql.close();
        await other.end();
      }
    } finally {
      await admin.query(`DROP DATABASE IF EXISTS ${database}`);
      await admin.end();
    }
  });
});
