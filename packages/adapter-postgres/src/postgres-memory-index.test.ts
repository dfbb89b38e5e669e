import { randomBytes } from 'node:crypto';
import { describeMemoryIndexConformance } from '@memory-agents/core/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { postgresMemoryIndex, type PostgresMemoryIndexOptions } from './postgres-memory-index.js';
import { openSqlClient, type SqlClient } from './sql-client.js';

/**
 * One database per file (PGlite's initdb takes seconds), one schema per test: each test starts
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

conformanceOn('PGlite + pgvector', () => openSqlClient({ dataDir: 'memory://' }));
conformanceOn('PGlite + pgvector, HNSW from 1,000 rows', () => openSqlClient({ dataDir: 'memory://' }), { annThreshold: 1000 });

const databaseUrl = process.env.DATABASE_URL;
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
  conformanceOn('PostgreSQL without pgvector (exact vectors in the process)', () => withoutPgvector(() => openSqlClient({ connectionString: databaseUrl! })));
});

/**
 * The JS vector path (PostgreSQL without pgvector) caches vectors per agent and version; a write
 * through another instance (another process, in production) must be seen by the next search.
 */
function crossInstanceCases(name: string, open: () => Promise<SqlClient>) {
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
        const writer = postgresMemoryIndex({ client: sql, schema });
        const reader = postgresMemoryIndex({ client: sql, schema });
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

crossInstanceCases('PGlite + pgvector', () => openSqlClient({ dataDir: 'memory://' }));
describe.skipIf(!databaseUrl)('real PostgreSQL (DATABASE_URL), across instances', () => {
  crossInstanceCases('PostgreSQL', () => openSqlClient({ connectionString: databaseUrl! }));
  crossInstanceCases('PostgreSQL without pgvector', () => withoutPgvector(() => openSqlClient({ connectionString: databaseUrl! })));
});
