import { randomBytes } from 'node:crypto';
import { memoryRecordDefaults, type MemoryRecord } from '@memory-agents/core/adapter';
import { postgresUrl } from '@memory-agents/core/testing';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { postgresMemoryIndex } from './postgres-memory-index.js';
import { openSqlClient, type SqlClient } from './sql-client.js';

/**
 * Issue 41: a PostgreSQL index opened by a process that did not write it (a restarted server, a
 * server after `memory-agents import`) must search like the process that wrote it.
 */
const embedder = { id: 'test:8', dimensions: 8 };
const WORDS = ['harbour', 'kayak', 'lantern', 'orchard', 'violin', 'glacier', 'saffron', 'meadow', 'quartz', 'falcon', 'cedar', 'pixel'];

function records(from: number, count: number): MemoryRecord[] {
  let seed = from + 11;
  const next = () => ((seed = (seed * 16807) % 2147483647) / 2147483647) * 2 - 1;
  return Array.from({ length: count }, (_, k) => {
    const i = from + k;
    return {
      id: `mem_${String(i).padStart(6, '0')}`,
      organizationId: 'org_1',
      agentId: 'agent_a',
      text: `${WORDS[i % WORDS.length]} ${WORDS[(i * 7 + 3) % WORDS.length]} note ${i}`,
      keywords: '',
      vector: Float32Array.from({ length: 8 }, next),
      speaker: null,
      occurredAt: null,
      source: { kind: 'turn' as const, threadId: 'thread_1', observationId: `obs_${i}`, turnIndex: 0 },
      createdAt: '2026-01-01T00:00:00.000Z',
      ...memoryRecordDefaults({ occurredAt: null, createdAt: '2026-01-01T00:00:00.000Z' }),
    };
  });
}

const databaseUrl = postgresUrl('PostgreSQL memory index reopened');

describe.skipIf(!databaseUrl)('postgresMemoryIndex opened by a process that did not write it (real PostgreSQL, issue 41)', () => {
  const pools: pg.Pool[] = [];
  const dropped: { sql: SqlClient; schema: string }[] = [];
  afterAll(async () => {
    for (const { sql, schema } of dropped) await sql.exec(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    for (const pool of pools) await pool.end();
  });

  /** One connection, so that this test can flush its statistics (pg_stat_force_next_flush) and read them. */
  async function oneConnection(): Promise<{ sql: SqlClient; schema: string }> {
    const pool = new pg.Pool({ connectionString: databaseUrl!, max: 1 });
    pools.push(pool);
    const sql = await openSqlClient({ pool });
    const schema = `reopen_${randomBytes(6).toString('hex')}`;
    dropped.push({ sql, schema });
    return { sql, schema };
  }

  it('searches a large agent through the HNSW index the writer built (before: exact, the index unseen)', async () => {
    const { sql, schema } = await oneConnection();
    expect(sql.hasVector).toBe(true);
    const options = { client: sql, schema, annThreshold: 1_000, exactSearchBelow: 100, settleAfterRows: null };
    const writer = postgresMemoryIndex(options);
    for (let from = 0; from < 1_200; from += 400) await writer.upsert({ records: records(from, 400), embedder, newIds: true });
    await writer.settle(); // builds the HNSW index (past annThreshold) and analyses
    await writer.close();

    // This connection's index scans, as counted by PostgreSQL once flushed.
    const hnswScans = async () => {
      await sql.query('SELECT pg_stat_force_next_flush()');
      const { rows } = await sql.query<{ idx_scan: string }>(
        `SELECT idx_scan FROM pg_stat_user_indexes WHERE schemaname = $1 AND indexrelname = 'memory_index_records_embedding_hnsw'`,
        [schema],
      );
      expect(rows).toHaveLength(1);
      return Number(rows[0]!.idx_scan);
    };
    const before = await hnswScans();
    // At 1,200 rows the planner may rank them all (a table scan and a sort are cheap at this
    // size): both off on this connection, so the HNSW index is used whenever the statement can use it.
    await sql.exec('SET enable_seqscan = off; SET enable_sort = off');
    const reopened = postgresMemoryIndex(options);
    await reopened.init();
    const result = await reopened.search({ agentId: 'agent_a', text: '', vector: records(5, 1)[0]!.vector, limit: 10 });
    expect(result.semantic).toHaveLength(10);
    expect(await hnswScans()).toBeGreaterThan(before);
    await reopened.close();
  });
});
