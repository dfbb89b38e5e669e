/**
 * What erasing one thread costs in the memory index at scale: `deleteBy({ agentId, threadId })`
 * on an index holding `--memories` records of one agent spread over `--threads` threads, timed
 * until it resolves (LanceDB: the delete, the compaction that drops the rows and the cleanup of old
 * versions, so no byte of the thread is left; PostgreSQL/PGlite: the row deletes), then the plain
 * `VACUUM` the store runs afterwards on the index's tables (PGlite, PostgreSQL).
 *
 *   npx tsx bench/erase.ts [--memories 100000] [--threads 1000] [--erasures 3] [--backends lancedb,pglite,postgres]
 *
 * `postgres` needs DATABASE_URL (a schema of its own, dropped at the end).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lancedbMemoryIndex } from '@memory-agents/adapter-lancedb';
import { openSqlClient, postgresMemoryIndex, type SqlClient } from '@memory-agents/adapter-postgres';
import { hashedNgramEmbedder, type MemoryIndex } from '@memory-agents/core';
import { memoryRecordDefaults, type MemoryRecord } from '@memory-agents/core/adapter';
import { argument } from './support/args.js';

const memories = Number(argument('memories', '100000'));
const threads = Number(argument('threads', '1000'));
const erasures = Number(argument('erasures', '3'));
const wanted = argument('backends', 'lancedb,pglite,postgres').split(',');
const embedder = hashedNgramEmbedder();
const fingerprint = { id: embedder.id, dimensions: embedder.dimensions };
const WORDS = ['garden', 'invoice', 'painting', 'marathon', 'guitar', 'recipe', 'sunset', 'puppy', 'library', 'concert', 'bicycle', 'camping'];
const agentId = 'agent_01J00000000000000000000000';

function record(i: number): MemoryRecord {
  const text = `Note ${i}: we talked about the ${WORDS[i % WORDS.length]} and the ${WORDS[(i * 7) % WORDS.length]} on day ${i % 365}.`;
  const threadId = `thread_${String(i % threads).padStart(26, '0')}`;
  return {
    id: `mem_${String(i).padStart(26, '0')}`, organizationId: 'org_bench', agentId, text, keywords: '', vector: embedder.embedSync(text),
    speaker: 'user', occurredAt: null, source: { kind: 'turn', threadId, observationId: `obs_${String(i % threads).padStart(26, '0')}`, turnIndex: i },
    createdAt: new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString(),
    ...memoryRecordDefaults({ occurredAt: null, createdAt: new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString() }),
  };
}

type Opened = { index: MemoryIndex; vacuum?: () => Promise<void>; cleanup: () => Promise<void> };

const vacuumIndexTables = (client: SqlClient, schema: string) => async () => {
  const { rows } = await client.query<{ name: string }>(`SELECT format('%I.%I', schemaname, tablename) AS name FROM pg_tables WHERE schemaname = $1 AND tablename LIKE 'memory_index_%'`, [schema]);
  for (const { name } of rows) await client.query(`VACUUM ${name}`);
};

const BACKENDS: Record<string, () => Promise<Opened | null>> = {
  lancedb: async () => {
    const uri = await mkdtemp(join(tmpdir(), 'bench-erase-'));
    const index = lancedbMemoryIndex({ uri, settleAfterIdleMs: null });
    return { index, cleanup: () => rm(uri, { recursive: true, force: true }) };
  },
  pglite: async () => {
    const client = await openSqlClient({ dataDir: 'memory://' });
    return { index: postgresMemoryIndex({ client }), vacuum: vacuumIndexTables(client, 'public'), cleanup: () => client.close() };
  },
  postgres: async () => {
    if (!process.env.DATABASE_URL) return null;
    const client = await openSqlClient({ connectionString: process.env.DATABASE_URL });
    const schema = `bench_erase_${process.pid}`;
    return {
      index: postgresMemoryIndex({ client, schema }),
      vacuum: vacuumIndexTables(client, schema),
      cleanup: async () => {
        await client.exec(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
        await client.close();
      },
    };
  },
};

for (const name of wanted) {
  const opened = await BACKENDS[name]?.();
  if (!opened) {
    console.log(`${name}: skipped`);
    continue;
  }
  const { index } = opened;
  try {
    await index.init();
    const loadStart = performance.now();
    for (let start = 0; start < memories; start += 5000) {
      const records = Array.from({ length: Math.min(5000, memories - start) }, (_, k) => record(start + k));
      await index.upsert({ records, embedder: fingerprint, newIds: true });
    }
    if ('settle' in index) await (index as { settle(): Promise<void> }).settle();
    console.log(`${name}: loaded ${memories} memories over ${threads} threads in ${((performance.now() - loadStart) / 1000).toFixed(1)} s`);
    for (let n = 0; n < erasures; n++) {
      const threadId = `thread_${String(n).padStart(26, '0')}`;
      const started = performance.now();
      await index.deleteBy({ agentId, threadId });
      const deleted = performance.now() - started;
      const vacuumStart = performance.now();
      await opened.vacuum?.();
      const vacuumed = performance.now() - vacuumStart;
      console.log(`${name}: erase thread ${n + 1} (${memories / threads} memories): deleteBy ${deleted.toFixed(0)} ms${opened.vacuum ? `, VACUUM ${vacuumed.toFixed(0)} ms` : ''}`);
    }
  } finally {
    await index.close();
    await opened.cleanup();
  }
}
