import type { MemoryIndex } from '@memory-agents/core';

/** Options of {@link lancedbMemoryIndex}. */
export type LancedbMemoryIndexOptions = {
  /**
   * Where the LanceDB database lives: a local directory (created if missing), or an object-store
   * URI LanceDB understands (`s3://bucket/prefix`, `gs://…`, `az://…`; `memory://name` is a
   * store inside this process, gone when it exits), with `storageOptions` for its credentials.
   */
  uri: string;
  /**
   * Object-store settings passed to `lancedb.connect` (region, endpoint, keys…; see
   * https://docs.lancedb.com/storage/). Unused for a local directory.
   */
  storageOptions?: Record<string, string>;
  /**
   * Name of the one table holding every agent's memories.
   * @default 'memories'
   */
  tableName?: string;
  /**
   * Row count from which an ANN vector index (HNSW with scalar quantization, cosine) is built.
   * Below it vector search is an exact flat scan (about 10 ms at 10k rows of 384 dims on 2 cores,
   * growing linearly: 50k rows already cost well over 50 ms). The index is rebuilt in the
   * background whenever the table has doubled since the last build.
   * @default 10000
   */
  annThreshold?: number;
  /**
   * `optimize()` (compaction, index refresh, cleanup of old versions) runs in the background after
   * this many write calls. Never on every write: it takes seconds on large tables.
   * @default 200
   */
  optimizeEveryWrites?: number;
  /**
   * The full-text, `agent_id` and `id` indexes are rebuilt in the background once this many rows
   * were written since the last rebuild, or a twentieth of the table, whichever is more (a rebuild
   * takes about 0.5 s at 100k rows). Rows not yet in the full-text index are scanned on every
   * query, so a bulk load must not leave much of the table unindexed; rebuilding these three is
   * much cheaper than an `optimize()` that compacts indexed fragments.
   * @default 5000
   */
  reindexEveryRows?: number;
  /**
   * Once no write came for this long, the table is settled in the background (see
   * {@link LancedbMemoryIndex.settle}): a bulk load or a burst of learning leaves small fragments and
   * rows outside the indexes, which every query pays for until they are folded in. `null` turns
   * this off (call `settle()` yourself).
   * @default 5000
   */
  settleAfterIdleMs?: number | null;
  /**
   * Table versions older than this are removed by `optimize()`. Readers in other processes that
   * still hold an older version need it for that long.
   * @default 3_600_000 (one hour)
   */
  retainVersionsMs?: number;
  /**
   * Upserts are written in batches of this many rows (each batch is one `mergeInsert` commit).
   * @default 5000
   */
  batchSize?: number;
  /**
   * Seconds after which a read checks for writes made by other processes on the same directory:
   * 0 is strong consistency (every read checks, a little slower), `null` never checks (one
   * process only, fastest).
   * @default 0
   */
  readConsistencySeconds?: number | null;
  /**
   * How many records `list` keeps in memory, over all agents, to page without reading the table
   * (about 370 bytes each in V8, with its id and the by-id map; the least recently listed agents are dropped past it). An agent with
   * more records than this is ordered from one column scan on every call. 0 turns the cache off.
   * @default 250_000 (about 90 MB)
   */
  listCacheRecords?: number;
  /**
   * Builds the HNSW index in a child Node process at the lowest CPU priority (local directories and
   * object stores; `memory://` tables always build in process). In process, LanceDB's build holds
   * the native runtime so writes wait for it; in a child, writes and searches go on and the build
   * uses the cores the server leaves idle. `close()` kills a running build (nothing is committed).
   * @default true
   */
  indexBuildsInChildProcess?: boolean;
  /**
   * Receives failures of background work (optimize, ANN builds); those never fail a caller.
   * @default writes a warning to stderr
   */
  onBackgroundError?: (error: unknown, operation: string) => void;
};

/** The LanceDB memory index: the `MemoryIndex` port plus {@link LancedbMemoryIndex.settle}. */
export type LancedbMemoryIndex = MemoryIndex & {
  /**
   * Brings the table to its settled state and resolves once it is there: small fragments compacted
   * and rows written since the last index builds folded into the indexes (LanceDB `optimize()`,
   * which gives new rows a small delta ANN index of their own), then the ANN index rebuilt as one
   * graph when the table doubled since its build or deltas piled up. Runs in the maintenance lane,
   * beside the write queue: writes go on meanwhile. It also runs by itself once no write came for `settleAfterIdleMs`.
   */
  settle(): Promise<void>;
};

/** The options with their defaults applied. */
export type ResolvedOptions = {
  uri: string;
  storageOptions: Record<string, string> | undefined;
  tableName: string;
  annThreshold: number;
  optimizeEveryWrites: number;
  reindexEveryRows: number;
  settleAfterIdleMs: number | null;
  retainVersionsMs: number;
  batchSize: number;
  readConsistencySeconds: number | null;
  listCacheRecords: number;
  indexBuildsInChildProcess: boolean;
  onBackgroundError: (error: unknown, operation: string) => void;
};

/** Checks `uri` and `tableName` and fills in the defaults documented above. */
export function resolveOptions(options: LancedbMemoryIndexOptions): ResolvedOptions {
  if (typeof options.uri !== 'string' || options.uri.length === 0) throw new TypeError('lancedbMemoryIndex: `uri` is required');
  const tableName = options.tableName ?? 'memories';
  if (!/^[A-Za-z0-9_.-]{1,128}$/.test(tableName)) throw new TypeError('lancedbMemoryIndex: `tableName` may hold letters, digits, `_`, `.`, `-`');
  return {
    uri: options.uri,
    storageOptions: options.storageOptions,
    tableName,
    annThreshold: options.annThreshold ?? 10_000,
    optimizeEveryWrites: options.optimizeEveryWrites ?? 200,
    reindexEveryRows: options.reindexEveryRows ?? 5000,
    settleAfterIdleMs: options.settleAfterIdleMs === undefined ? 5000 : options.settleAfterIdleMs,
    retainVersionsMs: options.retainVersionsMs ?? 3_600_000,
    batchSize: options.batchSize ?? 5000,
    readConsistencySeconds: options.readConsistencySeconds === undefined ? 0 : options.readConsistencySeconds,
    listCacheRecords: options.listCacheRecords ?? 250_000,
    indexBuildsInChildProcess: options.indexBuildsInChildProcess ?? true,
    onBackgroundError:
      options.onBackgroundError ??
      ((error: unknown, operation: string) => process.stderr.write(`lancedbMemoryIndex ${operation} failed: ${String(error)}\n`)),
  };
}
