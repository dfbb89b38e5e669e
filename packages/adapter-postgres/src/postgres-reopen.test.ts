import { randomBytes } from 'node:crypto';
import { memoryRecordDefaults, type MemoryRecord } from '@memory-agents/core/adapter';
import { postgresUrl } from '@memory-agents/core/testing';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { stale, type SettleReport } from './memory-index/settle.js';
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
  async function oneConnection(existing?: string): Promise<{ sql: SqlClient; schema: string }> {
    const pool = new pg.Pool({ connectionString: databaseUrl!, max: 1 });
    pools.push(pool);
    const sql = await openSqlClient({ pool });
    const schema = existing ?? `reopen_${randomBytes(6).toString('hex')}`;
    if (!existing) dropped.push({ sql, schema });
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

  type TableStats = { relname: string; last_analyze: Date | null; last_vacuum: Date | null };
  async function tableStats(sql: SqlClient, schema: string): Promise<Map<string, TableStats>> {
    const { rows } = await sql.query<TableStats>(
      `SELECT relname, last_analyze, last_vacuum FROM pg_stat_user_tables
       WHERE schemaname = $1 AND relname IN ('memory_index_records', 'memory_index_terms', 'memory_index_postings')`,
      [schema],
    );
    return new Map(rows.map((row) => [row.relname, row]));
  }
  const TABLES = ['memory_index_records', 'memory_index_terms', 'memory_index_postings'];

  it('settles on close when a settle was due: an import that ends right after its last write (before: dropped with the timer)', async () => {
    const { sql, schema } = await oneConnection();
    const settles: SettleReport[] = [];
    // The quiet period (a minute) cannot end before close, as when an import exits after its last batch.
    const index = postgresMemoryIndex({ client: sql, schema, settleAfterRows: 1_000, settleAfterIdleMs: 60_000, onSettle: (report) => settles.push(report) });
    for (let from = 0; from < 1_200; from += 400) await index.upsert({ records: records(from, 400), embedder, newIds: true });
    expect(settles).toEqual([]);
    await index.close();
    expect(settles).toEqual([expect.objectContaining({ rows: 1_200, statement: 'vacuum analyze', trigger: 'closing' })]);
    const after = await tableStats(sql, schema);
    for (const table of TABLES) {
      expect(after.get(table)?.last_analyze, table).toBeInstanceOf(Date);
      expect(after.get(table)?.last_vacuum, table).toBeInstanceOf(Date);
    }
  });

  it('closes without a settle below settleAfterRows', async () => {
    const { sql, schema } = await oneConnection();
    const settles: SettleReport[] = [];
    const index = postgresMemoryIndex({ client: sql, schema, settleAfterRows: 1_000, settleAfterIdleMs: 60_000, onSettle: (report) => settles.push(report) });
    await index.upsert({ records: records(0, 400), embedder, newIds: true });
    await index.close();
    expect(settles).toEqual([]);
    expect((await tableStats(sql, schema)).get('memory_index_postings')?.last_analyze).toBeNull();
  });

  it('settles, in the background, tables another process changed a lot without settling them (before: never, with autovacuum off)', async () => {
    const { sql: loaderSql, schema } = await oneConnection();
    // The other process: writes, never settles (settleAfterRows null), and its changes reach the
    // statistics (flushed now rather than within the second).
    const loader = postgresMemoryIndex({ client: loaderSql, schema, settleAfterRows: null });
    for (let from = 0; from < 1_500; from += 500) await loader.upsert({ records: records(from, 500), embedder, newIds: true });
    await loader.close();
    await loaderSql.query('SELECT pg_stat_force_next_flush()');
    await loaderSql.query('SELECT 1');
    expect((await tableStats(loaderSql, schema)).get('memory_index_postings')?.last_analyze).toBeNull();

    const { sql } = await oneConnection(schema);
    let settled!: (report: SettleReport) => void;
    const firstSettle = new Promise<SettleReport>((resolve) => (settled = resolve));
    const reopened = postgresMemoryIndex({ client: sql, schema, settleAfterRows: 1_000, onSettle: (report) => settled(report) });
    await reopened.init();
    // Searches answer meanwhile.
    expect((await reopened.search({ agentId: 'agent_a', text: 'kayak', vector: null, limit: 5 })).lexical).toHaveLength(5);
    expect(await firstSettle).toEqual(expect.objectContaining({ statement: 'vacuum analyze', trigger: 'opened' }));
    const after = await tableStats(sql, schema);
    for (const table of TABLES) expect(after.get(table)?.last_analyze, table).toBeInstanceOf(Date);
    await reopened.close();

    // Opened again, settled: nothing to do.
    const settles: SettleReport[] = [];
    const again = postgresMemoryIndex({ client: sql, schema, settleAfterRows: 1_000, onSettle: (report) => settles.push(report) });
    await again.init();
    await again.close();
    expect(settles).toEqual([]);
  }, 30_000);
});

describe('stale: when opening settles tables', () => {
  const table = { modifiedSinceAnalyze: 0, insertedSinceVacuum: 0, dead: 0, rows: 1_000_000 };
  it('needs settleAfterRows changes and a tenth of the table, since the last ANALYZE or (PostgreSQL) VACUUM', () => {
    expect(stale(table, 10_000, true)).toBe(false);
    expect(stale({ ...table, modifiedSinceAnalyze: 99_999 }, 10_000, true)).toBe(false);
    expect(stale({ ...table, modifiedSinceAnalyze: 100_000 }, 10_000, true)).toBe(true);
    expect(stale({ ...table, rows: 20_000, modifiedSinceAnalyze: 10_000 }, 10_000, true)).toBe(true);
    expect(stale({ ...table, rows: 20_000, modifiedSinceAnalyze: 9_999 }, 10_000, true)).toBe(false);
    // Inserted but analysed (an ANALYZE without VACUUM): the visibility map is still unset.
    expect(stale({ ...table, insertedSinceVacuum: 60_000, dead: 40_000 }, 10_000, true)).toBe(true);
    expect(stale({ ...table, insertedSinceVacuum: 60_000, dead: 40_000 }, 10_000, false)).toBe(false);
  });
});
