import { randomBytes } from 'node:crypto';
import { memoryRecordDefaults, type MemoryRecord } from '@memory-agents/core/adapter';
import { postgresUrl } from '@memory-agents/core/testing';
import { afterAll, describe, expect, it } from 'vitest';
import type { SettleReport } from './memory-index/settle.js';
import { postgresMemoryIndex } from './postgres-memory-index.js';
import { openSqlClient, type SqlClient } from './sql-client.js';

const embedder = { id: 'test:8', dimensions: 8 };
const WORDS = ['harbour', 'kayak', 'lantern', 'orchard', 'violin', 'glacier', 'saffron', 'meadow', 'quartz', 'falcon', 'cedar', 'pixel'];

function records(from: number, count: number): MemoryRecord[] {
  let seed = from + 7;
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

type TableStats = { relname: string; last_analyze: Date | null; last_vacuum: Date | null; analyze_count: string; vacuum_count: string };

async function tableStats(sql: SqlClient, schema: string): Promise<Map<string, TableStats>> {
  const { rows } = await sql.query<TableStats>(
    `SELECT relname, last_analyze, last_vacuum, analyze_count, vacuum_count FROM pg_stat_user_tables
     WHERE schemaname = $1 AND relname IN ('memory_index_records', 'memory_index_terms', 'memory_index_postings')`,
    [schema],
  );
  return new Map(rows.map((row) => [row.relname, row]));
}

const databaseUrl = postgresUrl('PostgreSQL memory index settling');

describe.skipIf(!databaseUrl)('postgresMemoryIndex settles itself after a bulk write (real PostgreSQL)', () => {
  const clients: SqlClient[] = [];
  const schemas: string[] = [];
  afterAll(async () => {
    const sql = clients[0];
    if (sql) for (const schema of schemas) await sql.exec(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    for (const client of clients) await client.close();
  });

  async function open() {
    const sql = await openSqlClient({ connectionString: databaseUrl! });
    clients.push(sql);
    const schema = `settle_${randomBytes(6).toString('hex')}`;
    schemas.push(schema);
    return { sql, schema };
  }

  it('refreshes the statistics of records, terms and postings (VACUUM ANALYZE) without being asked, while searches keep answering', async () => {
    const { sql, schema } = await open();
    const settles: SettleReport[] = [];
    let settled!: () => void;
    const firstSettle = new Promise<void>((resolve) => (settled = resolve));
    const index = postgresMemoryIndex({
      client: sql,
      schema,
      settleAfterRows: 2_000,
      settleAfterIdleMs: 100,
      onSettle: (report) => {
        settles.push(report);
        settled();
      },
    });
    await index.init();
    await index.upsert({ records: records(0, 500), embedder, newIds: true });
    // Below settleAfterRows: nothing analysed yet (autovacuum is off on the test server, and may
    // not have come by on another).
    const before = await tableStats(sql, schema);
    expect(before.get('memory_index_postings')?.last_analyze).toBeNull();
    for (let from = 500; from < 3_000; from += 500) await index.upsert({ records: records(from, 500), embedder, newIds: true });

    // Searches go on while the settle runs in the background; every one answers.
    let searching = true;
    let answered = 0;
    const searches = (async () => {
      while (searching) {
        const result = await index.search({ agentId: 'agent_a', text: 'kayak lantern', vector: records(7, 1)[0]!.vector, limit: 10 });
        expect(result.lexical.length).toBe(10);
        expect(result.semantic.length).toBe(10);
        answered++;
      }
    })();
    await firstSettle;
    searching = false;
    await searches;
    expect(answered).toBeGreaterThan(0);

    expect(settles).toEqual([expect.objectContaining({ rows: 3_000, statement: 'vacuum analyze' })]);
    const after = await tableStats(sql, schema);
    for (const table of ['memory_index_records', 'memory_index_terms', 'memory_index_postings']) {
      expect(after.get(table)?.last_analyze, table).toBeInstanceOf(Date);
      expect(after.get(table)?.last_vacuum, table).toBeInstanceOf(Date);
      // Once: by the settle (a manual or auto ANALYZE would count too). n_mod_since_analyze is not
      // compared: each backend reports its row changes to the statistics lazily (about once a second).
      expect(Number(after.get(table)?.analyze_count), table).toBe(1);
      expect(Number(after.get(table)?.vacuum_count), table).toBe(1);
    }
    // The planner now knows the postings' size (reltuples was -1 or 0 before any ANALYZE).
    const { rows } = await sql.query<{ reltuples: number }>(`SELECT reltuples FROM pg_class WHERE oid = to_regclass($1)`, [`${schema}.memory_index_postings`]);
    expect(Number(rows[0]?.reltuples)).toBeGreaterThan(3_000);
    await index.close();
  });

  it('does not settle below settleAfterRows; settle() does it on demand; null never settles by itself', async () => {
    const { sql, schema } = await open();
    const settles: SettleReport[] = [];
    const index = postgresMemoryIndex({ client: sql, schema, settleAfterRows: 10_000, settleAfterIdleMs: 0, onSettle: (report) => settles.push(report) });
    await index.init();
    await index.upsert({ records: records(0, 500), embedder, newIds: true });
    await index.close(); // waits for queued background work: nothing was due
    expect(settles).toEqual([]);
    expect((await tableStats(sql, schema)).get('memory_index_postings')?.last_analyze).toBeNull();

    const again = postgresMemoryIndex({ client: sql, schema, settleAfterRows: null, onSettle: (report) => settles.push(report) });
    await again.upsert({ records: records(500, 500), embedder, newIds: true });
    await again.deleteBy({ agentId: 'agent_a', ids: ['mem_000001', 'mem_000002'] });
    await again.settle();
    expect(settles).toEqual([expect.objectContaining({ rows: 502, statement: 'vacuum analyze' })]);
    expect((await tableStats(sql, schema)).get('memory_index_postings')?.last_analyze).toBeInstanceOf(Date);
    await again.close();
  });
});

describe.skipIf(!databaseUrl)('postgresMemoryIndex settle and the HNSW index (real PostgreSQL)', () => {
  it('builds the HNSW index past annThreshold when a process that did not write the rows settles', async () => {
    const sql = await openSqlClient({ connectionString: databaseUrl! });
    const schema = `settle_${randomBytes(6).toString('hex')}`;
    try {
      const loader = postgresMemoryIndex({ client: sql, schema, annThreshold: null, settleAfterRows: null });
      for (let from = 0; from < 1_200; from += 400) await loader.upsert({ records: records(from, 400), embedder, newIds: true });
      await loader.close();
      const hnsw = async () =>
        (await sql.query(`SELECT indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_namespace n ON n.oid = c.relnamespace
           WHERE n.nspname = $1 AND c.relname = 'memory_index_records_embedding_hnsw'`, [schema])).rows as { indisvalid: boolean }[];
      expect(await hnsw()).toEqual([]);
      const reopened = postgresMemoryIndex({ client: sql, schema, annThreshold: 1_000, settleAfterRows: null });
      await reopened.init();
      await reopened.settle();
      expect(await hnsw()).toEqual([{ indisvalid: true }]);
      await reopened.close();
    } finally {
      await sql.exec(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await sql.close();
    }
  });
});

describe('postgresMemoryIndex settling on PGlite', () => {
  it('runs ANALYZE (one connection: no VACUUM, which would hold every search for a whole-table pass)', async () => {
    const sql = await openSqlClient({ dataDir: 'memory://' });
    try {
      let resolve!: (report: SettleReport) => void;
      const settled = new Promise<SettleReport>((done) => (resolve = done));
      const index = postgresMemoryIndex({ client: sql, settleAfterRows: 100, settleAfterIdleMs: 0, onSettle: resolve });
      await index.init();
      await index.upsert({ records: records(0, 200), embedder, newIds: true });
      expect(await settled).toEqual(expect.objectContaining({ rows: 200, statement: 'analyze' }));
      await index.close();
      const { rows } = await sql.query<{ reltuples: number }>(`SELECT reltuples FROM pg_class WHERE relname = 'memory_index_postings'`);
      expect(Number(rows[0]?.reltuples)).toBeGreaterThan(200);
    } finally {
      await sql.close();
    }
  });
});
