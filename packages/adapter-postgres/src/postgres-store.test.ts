import { randomBytes } from 'node:crypto';
import { describeStoreConformance } from '@memory-agents/core/testing';
import pg from 'pg';
import { describe } from 'vitest';
import { postgresStore } from './postgres-store.js';

describeStoreConformance({
  name: 'PGlite (in memory)',
  create: async () => {
    const store = postgresStore({ dataDir: 'memory://' });
    await store.init();
    return { store };
  },
});

const databaseUrl = process.env.DATABASE_URL;

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
