import { randomBytes } from 'node:crypto';
import { describeMemoryIndexConformance } from '@memory-agents/core/testing';
import { afterAll, describe } from 'vitest';
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
describe.skipIf(!databaseUrl)('real PostgreSQL (DATABASE_URL)', () => {
  conformanceOn('PostgreSQL', () => openSqlClient({ connectionString: databaseUrl! }));
});
