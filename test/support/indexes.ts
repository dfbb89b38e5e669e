import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lancedbMemoryIndex } from '@memory-agents/adapter-lancedb';
import { openSqlClient, postgresMemoryIndex } from '@memory-agents/adapter-postgres';
import { inMemoryMemoryIndex, type MemoryIndex } from '@memory-agents/core';

export type OpenedIndex = { index: MemoryIndex; cleanup: () => Promise<void> };

/**
 * The memory indexes an end-to-end test runs on, by name: the in-memory index, the embedded
 * default's LanceDB (in a temporary directory) and, with DATABASE_URL, PostgreSQL (in a schema of
 * its own, named after `label`, dropped by `cleanup`).
 */
export function memoryIndexBackends(label: string): [string, () => Promise<OpenedIndex>][] {
  const backends: [string, () => Promise<OpenedIndex>][] = [
    ['in-memory', async () => ({ index: inMemoryMemoryIndex(), cleanup: async () => {} })],
    [
      'lancedb',
      async () => {
        const uri = await mkdtemp(join(tmpdir(), `ma-${label}-`));
        return { index: lancedbMemoryIndex({ uri }), cleanup: () => rm(uri, { recursive: true, force: true }) };
      },
    ],
  ];
  const databaseUrl = process.env.DATABASE_URL;
  if (databaseUrl) {
    backends.push([
      'postgres',
      async () => {
        const client = await openSqlClient({ connectionString: databaseUrl });
        const schema = `${label.replaceAll('-', '_')}_${process.pid}`;
        return {
          index: postgresMemoryIndex({ client, schema }),
          cleanup: async () => {
            await client.exec(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
            await client.close();
          },
        };
      },
    ]);
  }
  return backends;
}
