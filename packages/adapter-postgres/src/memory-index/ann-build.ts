import type { SqlClient } from '../sql-client.js';
import { annIndexState } from './open.js';
import type { IndexTables } from './schema.js';

/**
 * Builds the HNSW index over the records' vectors once the table holds `threshold` rows (a count
 * that stops at the threshold: no scan of a large table), then refreshes the planner statistics so
 * a large agent's search is planned on it. On PostgreSQL with a maintenance connection the build is
 * `CONCURRENTLY` (writes go on; a failed build's invalid index is dropped so a later one can run);
 * elsewhere in one transaction. Answers whether a valid index exists afterwards; `false` when the
 * table is still below the threshold.
 */
export async function buildAnnIndex(
  client: SqlClient,
  tables: IndexTables,
  { threshold, dimensions, memory }: { threshold: number; dimensions: number; memory: string },
): Promise<boolean> {
  const { records } = tables;
  const { rows } = await client.query<{ n: number | string }>(`SELECT count(*) AS n FROM (SELECT 1 FROM ${records} LIMIT ${threshold}) t`);
  if (Number(rows[0]?.n ?? 0) < threshold) return false;
  const build = `INDEX IF NOT EXISTS memory_index_records_embedding_hnsw ON ${records} USING hnsw ((embedding::vector(${dimensions})) vector_cosine_ops)`;
  if (!/^\d+\s*(kB|MB|GB)?$/.test(memory)) throw new RangeError(`annBuildMemory must be a size such as '512MB', not ${JSON.stringify(memory)}`);
  if (client.dialect === 'postgres' && client.maintenance) {
    // CONCURRENTLY: writes go on during the build (a plain CREATE INDEX holds back every
    // insert for the whole build, tens of seconds at 50,000 rows: past the statement timeout).
    try {
      await client.maintenance(`SET maintenance_work_mem = '${memory}'`, `CREATE ${build.replace('INDEX IF NOT EXISTS', 'INDEX CONCURRENTLY IF NOT EXISTS')}`);
    } catch (error) {
      // A failed concurrent build leaves an invalid index behind: drop it, so a later build can run.
      await client.maintenance(`DROP INDEX CONCURRENTLY IF EXISTS ${tables.schema}.memory_index_records_embedding_hnsw`).catch(() => undefined);
      throw error;
    }
  } else {
    await client.transaction(async (tx) => {
      await tx.query(`SELECT set_config('maintenance_work_mem', $1, true)`, [memory]);
      await tx.exec(`CREATE ${build}`);
    }, { unbounded: true });
  }
  // Fresh planner statistics, so a large agent's search is planned on the new index.
  await client.transaction((tx) => tx.exec(`ANALYZE ${records}`), { unbounded: true });
  // IF NOT EXISTS also skips an invalid index (a killed concurrent build): searched as missing.
  return (await annIndexState(client, tables)) === 'valid';
}
