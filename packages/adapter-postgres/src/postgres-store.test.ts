import { randomBytes } from 'node:crypto';
import { cachingStore } from '@memory-agents/core';
import { describeStoreConformance } from '@memory-agents/core/testing';
import pg from 'pg';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
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

describeStoreConformance({
  name: 'PGlite (in memory) behind cachingStore, as the embedded default runs it',
  create: async () => {
    const store = cachingStore(postgresStore({ dataDir: 'memory://' }));
    await store.init();
    return { store };
  },
});

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
