import type { SqlClient } from '../sql-client.js';
import type { SettleReport } from './settle.js';

/** Options of {@link postgresMemoryIndex}. */
export type PostgresMemoryIndexOptions = {
  /** The database (PGlite or PostgreSQL); the caller owns it and closes it. */
  client: SqlClient;
  /**
   * Schema holding the index's tables (created if missing).
   * @default 'public'
   */
  schema?: string;
  /**
   * Where an exact vector search runs: `'process'` scans the agent's vectors in JS, cached per agent
   * in this process (`vectorCacheRows`) and checked against the agent's version on every search, so
   * writes by other processes are seen; `'database'` asks pgvector (exact, or HNSW past
   * `annThreshold`). PGlite's pgvector runs in WebAssembly: an exact scan of 9,000 vectors took
   * ~100 ms there against a few ms in JS (docs/benchmarks.md), and its planner did not pick an
   * HNSW index over the scan. Without pgvector the search is always `'process'`.
   * @default 'process' on PGlite, 'database' on PostgreSQL
   */
  vectorSearch?: 'process' | 'database';
  /**
   * Row count from which an HNSW (`vector_cosine_ops`) index is built in the background, with
   * pgvector only. `null` never builds one: search stays exact. PGlite defaults to `null`, since
   * building HNSW in WebAssembly takes minutes and gigabytes at 100k rows.
   * @default 50000 on PostgreSQL with pgvector, null on PGlite
   */
  annThreshold?: number | null;
  /**
   * With the HNSW index built, agents holding fewer records than this are still searched exactly
   * (their rows read through the agent index): exact is fast at that size, and an index scan
   * filtered down to a small agent would visit many other agents' rows.
   * @default 10000
   */
  exactSearchBelow?: number;
  /**
   * `hnsw.ef_search` of an approximate search (raised to the rows it fetches, `limit` + 8, when
   * that is more): higher finds more of the true nearest neighbours, slower (at 100k memories here:
   * recall@50 0.86 at 100, 0.93 at 200, 0.97 at 400; docs/benchmarks.md).
   * @default 200
   */
  efSearch?: number;
  /**
   * `maintenance_work_mem` of the HNSW build (set for its transaction only): a graph that does
   * not fit is built much more slowly.
   * @default '512MB'
   */
  annBuildMemory?: string;
  /**
   * Full text: about how many postings (record, term) one search reads: every posting of the
   * rarest query terms that fit, then the common terms' best (see the full-text channel).
   * `Infinity` reads every posting of every query term (exact BM25, linear in the agent's size for
   * common terms). At 100k memories: lexical recall@50 0.905 at 5,000, 0.99 at 10,000, 1.0 at 20,000.
   * @default 10000
   */
  fullTextCandidates?: number;
  /**
   * Full text: when a common query term was read only in part (its best postings), how many of the
   * best partial scores are rescored on every query term before the top `limit` is taken.
   * @default 1000
   */
  fullTextRescored?: number;
  /**
   * Rows per `INSERT … SELECT FROM unnest(…)` statement of an upsert (all in one transaction).
   * @default 500
   */
  batchSize?: number;
  /**
   * Without pgvector, or with `vectorSearch: 'process'`, semantic search scans the agent's vectors in JS. They are cached per agent
   * in this process, up to this many rows in all (about 1.5 kB each at 384 dimensions), and
   * checked against a per-agent version on every search, so writes by other processes are seen.
   * 0 disables the cache (every search then loads the agent's vectors).
   * @default 200000
   */
  vectorCacheRows?: number;
  /**
   * Receives failures of background work (the HNSW build); those never fail a caller.
   * @default writes a warning to stderr
   */
  onBackgroundError?: (error: unknown, operation: string) => void;
  /**
   * Settling after bulk writes (`memory-index/settle.ts`): once this many rows were written or
   * deleted since the last settle and no write came for `settleAfterIdleMs`, the tables' planner
   * statistics are refreshed in the background (`VACUUM (ANALYZE)` on PostgreSQL, `ANALYZE` on
   * PGlite), after the HNSW build when one is queued. A settle that is due when the index closes
   * runs before `close()` returns (an import closes right after its last write), and opening tables
   * with at least this many rows, and a tenth of a table, changed since their last ANALYZE or
   * VACUUM (`pg_stat_user_tables`: another process wrote them without settling) settles them in
   * the background. `null` leaves it all to autovacuum.
   * @default 10000
   */
  settleAfterRows?: number | null;
  /**
   * The quiet period (no write) before a due settle runs.
   * @default 2000
   */
  settleAfterIdleMs?: number;
  /** Called after each settle (rows since the previous one, statement, duration). */
  onSettle?: (report: SettleReport) => void;
};
