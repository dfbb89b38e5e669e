import * as lancedb from '@lancedb/lancedb';
import { Index, MatchQuery, Operator, type Connection, type Table } from '@lancedb/lancedb';
import type { Schema } from 'apache-arrow';
import {
  EmbedderMismatchError,
  ServiceError,
  analyze,
  assertEmbedderMatches,
  assertVectorDimensions,
  compareMemoryHits,
  cosineSimilarity,
  dedupeRecordsById,
  type EmbedderFingerprint,
  type MemoryHit,
  type MemoryIndex,
  type MemoryRecord,
  type MemorySearchRequest,
  type MemorySearchResult,
} from '@memory-agents/core';
import { META_EMBEDDER_DIMENSIONS, META_EMBEDDER_ID, RECORD_COLUMNS, fromRow, rowsToArrow, sqlString, tableSchema, toRow, type Row } from './rows.js';
import { WriteQueue } from './write-queue.js';

export { sqlString } from './rows.js';

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
   * graph when the table doubled since its build or deltas piled up. Runs in the write queue like a
   * write. It also runs by itself once no write came for `settleAfterIdleMs`.
   */
  settle(): Promise<void>;
};

/** Smallest HNSW search breadth (`ef`); the search uses at least twice the hits it asks for. */
const ANN_MIN_EF = 100;

/** Index names LanceDB gives (`<column>_idx`); `indexStats` and `prewarmIndex` take them. */
const VECTOR_INDEX = 'vector_idx';
const SCALAR_INDEXES = ['terms_idx', 'agent_id_idx', 'id_idx'];
/**
 * From this share of the table's rows on, an agent's vector search runs unfiltered and keeps the
 * agent's rows (asking for limit / share × 1.3 rows), instead of pre-filtering the HNSW search.
 */
const POSTFILTER_MIN_SHARE = 0.5;
/** Rows an unfiltered query asks for to keep `count` of an agent holding `share` of the table. */
const unfilteredCount = (count: number, share: number) => Math.ceil((count / share) * 1.3) + 4;
/** Scores tie within this distance (float noise across queries and index types). */
const TIE = 1e-6;
/** Delta ANN indexes (one per settle that found new rows) searched one by one before a rebuild. */
const MAX_VECTOR_DELTAS = 8;

/**
 * A `MemoryIndex` in one LanceDB table in a local directory.
 *
 * - Lexical: Lance's native full-text index (BM25) over a `terms` column that holds core's
 *   `analyze(text + ' ' + keywords)`, so stemming and stop words match every other backend; the
 *   query is an OR of the analyzed query terms, pre-filtered by `agent_id` (bitmap index).
 * - Semantic: cosine vector search pre-filtered by `agent_id`; exact flat search below
 *   `annThreshold` rows, an HNSW_SQ index above it. Scores are always exact cosine similarity,
 *   recomputed from the returned vectors, so they do not depend on the index type's distance scale.
 * - Writes (upsert in `mergeInsert` batches keyed on `id`, delete by filter) are serialized per
 *   instance; rows written after an index was built are still found (Lance searches unindexed
 *   fragments), and a background `optimize()` folds them into the indexes now and then.
 *
 * @example
 * const index = lancedbMemoryIndex({ uri: './data/lancedb' });
 * await index.init();
 */
export function lancedbMemoryIndex(options: LancedbMemoryIndexOptions): LancedbMemoryIndex {
  if (typeof options.uri !== 'string' || options.uri.length === 0) throw new TypeError('lancedbMemoryIndex: `uri` is required');
  const tableName = options.tableName ?? 'memories';
  if (!/^[A-Za-z0-9_.-]{1,128}$/.test(tableName)) throw new TypeError('lancedbMemoryIndex: `tableName` may hold letters, digits, `_`, `.`, `-`');
  const annThreshold = options.annThreshold ?? 10_000;
  const optimizeEveryWrites = options.optimizeEveryWrites ?? 200;
  const reindexEveryRows = options.reindexEveryRows ?? 5000;
  const retainVersionsMs = options.retainVersionsMs ?? 3_600_000;
  const batchSize = options.batchSize ?? 5000;
  const settleAfterIdleMs = options.settleAfterIdleMs === undefined ? 5000 : options.settleAfterIdleMs;
  const onBackgroundError =
    options.onBackgroundError ??
    ((error: unknown, operation: string) => process.stderr.write(`lancedbMemoryIndex ${operation} failed: ${String(error)}\n`));

  const queue = new WriteQueue();
  let starting: Promise<void> | null = null;
  let connection: Connection | null = null;
  let table: Table | null = null;
  let schema: Schema | null = null;
  let fingerprint: EmbedderFingerprint | null = null;
  let hasFullTextIndex = false;
  let hasVectorIndex = false;
  let rowsAtVectorIndexBuild = 0;
  let writesSinceOptimize = 0;
  let rowsSinceReindex = 0;
  let isClosed = false;
  let idleTimer: NodeJS.Timeout | null = null;
  const agentShares = new Map<string, { share: number; at: number; generation: number }>();

  /** Driver failures become `service_unavailable`; port-level errors pass through. */
  async function guard<T>(operation: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (error) {
      if (error instanceof EmbedderMismatchError || error instanceof RangeError || error instanceof ServiceError) throw error;
      throw new ServiceError('service_unavailable', `The memory index (lancedb) failed during ${operation}.`, { cause: error });
    }
  }

  async function start(): Promise<void> {
    const readConsistencySeconds = options.readConsistencySeconds === undefined ? 0 : options.readConsistencySeconds;
    connection = await lancedb.connect(options.uri, {
      ...(readConsistencySeconds === null ? {} : { readConsistencyInterval: readConsistencySeconds }),
      ...(options.storageOptions ? { storageOptions: options.storageOptions } : {}),
    });
    if ((await connection.tableNames()).includes(tableName)) {
      await adopt(await connection.openTable(tableName));
      await prewarm(table!);
    }
  }

  /** Reads the fingerprint and the index state of an existing table. */
  async function adopt(opened: Table): Promise<void> {
    table = opened;
    const metadata = (await opened.schema()).metadata;
    const id = metadata.get(META_EMBEDDER_ID);
    const dimensions = Number(metadata.get(META_EMBEDDER_DIMENSIONS));
    fingerprint = id ? { id, dimensions } : null;
    // Built here, once, with this package's Arrow classes (the table's schema never changes; the
    // one LanceDB returns is made by its own copy of apache-arrow, which the builders reject).
    schema = fingerprint ? tableSchema(fingerprint) : null;
    const indices = await opened.listIndices();
    hasFullTextIndex = indices.some((index) => index.columns.includes('terms'));
    const vectorIndex = indices.find((index) => index.columns.includes('vector'));
    hasVectorIndex = vectorIndex !== undefined;
    rowsAtVectorIndexBuild = vectorIndex?.numIndexedRows ?? 0;
  }

  /**
   * Loads indexes into LanceDB's cache, so the first searches after opening the table or after an
   * index build do not each pay for reading the index piece by piece (1M rows: ~1 s from the page
   * cache, ~0.9 GB of memory that searching would fill anyway). A failure costs speed only.
   */
  async function prewarm(current: Table, names?: readonly string[]): Promise<void> {
    try {
      for (const name of names ?? (await current.listIndices()).map((index) => index.name)) await current.prewarmIndex(name);
    } catch (error) {
      onBackgroundError(error, 'index prewarm');
    }
  }

  async function ready(): Promise<void> {
    if (isClosed) throw new ServiceError('service_unavailable', 'The memory index is closed.');
    starting ??= guard('init', start).catch((error: unknown) => {
      starting = null;
      throw error;
    });
    await starting;
  }

  /** Creates the table on first write, or adopts one another process created meanwhile. */
  async function ensureTable(given: EmbedderFingerprint): Promise<Table> {
    if (table) return table;
    try {
      await adopt(await connection!.createEmptyTable(tableName, tableSchema(given), { mode: 'create' }));
    } catch (error) {
      if (!(await connection!.tableNames()).includes(tableName)) throw error;
      await adopt(await connection!.openTable(tableName));
    }
    return table!;
  }

  async function ensureScalarIndexes(current: Table): Promise<void> {
    if (hasFullTextIndex) return;
    // The analyzer already ran in core: the index only splits on spaces and must not stem again.
    const fts = Index.fts({ withPosition: false, baseTokenizer: 'whitespace', lowercase: false, stem: false, removeStopWords: false, asciiFolding: false });
    await current.createIndex('terms', { config: fts, replace: true });
    await current.createIndex('agent_id', { config: Index.bitmap(), replace: true });
    await current.createIndex('id', { config: Index.btree(), replace: true });
    hasFullTextIndex = true;
    await prewarm(current, SCALAR_INDEXES);
  }

  /** One ANN graph over every row (replacing the index and its deltas). */
  async function buildVectorIndex(current: Table): Promise<void> {
    const rows = await current.countRows();
    // LanceDB's advice for HNSW: few partitions (each one is a graph searched per query);
    // one per million rows keeps the training memory bounded.
    const numPartitions = Math.max(1, Math.ceil(rows / 1_000_000));
    await current.createIndex('vector', { config: Index.hnswSq({ distanceType: 'cosine', numPartitions, efConstruction: 150 }), replace: true });
    hasVectorIndex = true;
    rowsAtVectorIndexBuild = rows;
    await prewarm(current, [VECTOR_INDEX]);
  }

  /**
   * See {@link LancedbMemoryIndex.settle}; runs inside the write queue. `settle()` folds in every
   * row; the idle timer only acts once enough piled up (an `optimize()` that compacts indexed
   * fragments costs about an HNSW rebuild, while a few hundred unindexed rows in a few fragments
   * cost a query next to nothing).
   */
  async function settleTable(mode: 'now' | 'idle'): Promise<void> {
    const current = table;
    if (!current || isClosed) return;
    const { fragmentStats, numRows } = await current.stats();
    let unindexedRows = 0;
    for (const index of await current.listIndices()) {
      unindexedRows = Math.max(unindexedRows, (await current.indexStats(index.name))?.numUnindexedRows ?? 0);
    }
    // Compaction works in groups and may leave a few small fragments apart; more is worth a pass.
    const worthIt =
      mode === 'now'
        ? fragmentStats.numSmallFragments > 4 || unindexedRows > 0
        : fragmentStats.numSmallFragments > 16 || unindexedRows >= Math.max(1000, numRows / 100);
    if (worthIt) {
      await current.optimize({ cleanupOlderThan: new Date(Date.now() - retainVersionsMs) });
      writesSinceOptimize = 0;
      rowsSinceReindex = 0;
      await prewarm(current);
    }
    // Compaction and index work leave the row count as it was.
    if (numRows < annThreshold) return;
    const vector = hasVectorIndex ? await current.indexStats(VECTOR_INDEX) : undefined;
    if (!vector || (vector.numIndices ?? 1) > MAX_VECTOR_DELTAS || numRows >= 2 * rowsAtVectorIndexBuild) await buildVectorIndex(current);
  }

  /** (Re)starts the quiet-period timer after a write. */
  function scheduleSettle(delayMs = settleAfterIdleMs): void {
    if (settleAfterIdleMs === null || delayMs === null || isClosed) return;
    if (idleTimer) clearTimeout(idleTimer);
    idleTimer = setTimeout(() => {
      idleTimer = null;
      // Quiet means no write waiting or running (an index build may hold the queue for a while
      // during a bulk load) and none finished for the whole period.
      const quietFor = Date.now() - queue.lastWriteAt;
      if (queue.pendingWrites > 0 || quietFor < settleAfterIdleMs) {
        scheduleSettle(queue.pendingWrites > 0 ? settleAfterIdleMs : settleAfterIdleMs - quietFor);
        return;
      }
      void queue
        .run(async () => {
          if (queue.pendingWrites === 0) await settleTable('idle');
        })
        .catch((error: unknown) => onBackgroundError(error, 'settle'));
    }, delayMs);
    idleTimer.unref();
  }

  /** Background: ANN index past the threshold, rebuilt when the table doubled; periodic optimize. */
  function scheduleMaintenance(current: Table, rowCount: number): void {
    scheduleSettle();
    const needsVectorIndex = rowCount >= annThreshold && (!hasVectorIndex || rowCount >= 2 * rowsAtVectorIndexBuild);
    if (needsVectorIndex) {
      void queue
        .run(async () => {
          if (!hasVectorIndex || (await current.countRows()) >= 2 * rowsAtVectorIndexBuild) await buildVectorIndex(current);
        })
        .catch((error: unknown) => onBackgroundError(error, 'vector index build'));
    }
    if (rowsSinceReindex >= Math.max(reindexEveryRows, rowCount / 20)) {
      rowsSinceReindex = 0;
      void queue
        .run(async () => {
          hasFullTextIndex = false;
          await ensureScalarIndexes(current);
        })
        .catch((error: unknown) => onBackgroundError(error, 'full-text index rebuild'));
    }
    if (writesSinceOptimize >= optimizeEveryWrites) {
      writesSinceOptimize = 0;
      void queue
        .run(() => current.optimize({ cleanupOlderThan: new Date(Date.now() - retainVersionsMs) }))
        .catch((error: unknown) => onBackgroundError(error, 'optimize'));
    }
  }

  /**
   * Appends the rows in batches of `batchSize`, one commit each. A batch of new ids is a plain
   * append; a merge joins the batch against the whole table's ids and costs more as the table
   * grows. Rows the caller declares new (`newIds`: learning's fresh turns) skip even the lookup
   * of existing ids (an `id IN (…)` query of ~5–30 ms per batch on a busy server).
   */
  async function writeRows(current: Table, rows: readonly Row[], newIds: boolean): Promise<void> {
    for (let start = 0; start < rows.length; start += batchSize) {
      const slice = rows.slice(start, start + batchSize);
      const batch = rowsToArrow(slice, schema!);
      if (!newIds && (await anyExists(current, slice))) {
        await current.mergeInsert('id').whenMatchedUpdateAll().whenNotMatchedInsertAll().execute(batch);
      } else {
        await current.add(batch);
      }
    }
  }

  /** Whether any of the rows' ids is in the table already (btree lookup on `id`). */
  async function anyExists(current: Table, rows: readonly Row[]): Promise<boolean> {
    for (let start = 0; start < rows.length; start += 1000) {
      const list = rows.slice(start, start + 1000).map((row) => sqlString(row.id)).join(', ');
      const found = await current.query().where(`id IN (${list})`).select(['id']).limit(1).toArray();
      if (found.length > 0) return true;
    }
    return false;
  }

  /** The agent's records with these ids, by id (btree lookups on `id`, in bounded IN lists). */
  async function recordsById(current: Table, agentId: string, ids: readonly string[]): Promise<Map<string, MemoryRecord>> {
    const found = new Map<string, MemoryRecord>();
    const unique = [...new Set(ids)];
    for (let start = 0; start < unique.length; start += 1000) {
      const list = unique.slice(start, start + 1000).map(sqlString).join(', ');
      const rows = await current.query().where(`${agentFilter(agentId)} AND id IN (${list})`).select(RECORD_COLUMNS).toArray();
      for (const row of rows) {
        const record = fromRow(row);
        found.set(record.id, record);
      }
    }
    return found;
  }

  const agentFilter = (agentId: string) => `agent_id = ${sqlString(agentId)}`;

  /**
   * The agent's share of the table's rows, which decides how its vector search filters. Counted
   * (two index lookups, under a millisecond) at most every 10 s and after every write of this
   * instance; it only steers the plan, and a stale share costs time, never results.
   */
  async function agentShare(current: Table, agentId: string): Promise<number> {
    const cached = agentShares.get(agentId);
    if (cached && cached.generation === queue.generation && Date.now() - cached.at < 10_000) return cached.share;
    const [rows, total] = await Promise.all([current.countRows(agentFilter(agentId)), current.countRows()]);
    const share = total === 0 ? 0 : rows / total;
    if (agentShares.size >= 10_000) agentShares.clear();
    agentShares.set(agentId, { share, at: Date.now(), generation: queue.generation });
    return share;
  }

  /**
   * Runs a ranked query with room for ties: if the tie at the cut may continue past what was
   * fetched, "ties ordered by id" must still hold exactly at the `limit` boundary.
   *
   * `fetch` reads whole records (one row past the limit shows whether the tie continues). With
   * `deeper` (the same ranking reading only ids and scores, which costs about the same for 50 or
   * 1,000 rows), a tie is settled from a deeper id list and only the records that enter the top
   * from beyond the first fetch are read by id; without it, the whole fetch is repeated deeper.
   * Both channels come back in score order (BM25 top-k and the vector search are exact in their
   * order; re-scoring with exact cosine moves nothing but near-ties, which the check catches).
   */
  async function ranked(
    limit: number,
    fetch: (count: number) => Promise<MemoryHit[]>,
    deeper?: { ids: (count: number) => Promise<{ id: string; score: number }[]>; records: (ids: string[]) => Promise<Map<string, MemoryRecord>> },
  ): Promise<MemoryHit[]> {
    let count = limit + 1;
    for (;;) {
      const hits = (await fetch(count)).sort(compareMemoryHits);
      if (hits.length < count || hits.length <= limit) return hits.slice(0, limit);
      const cutScore = hits[limit - 1]!.score;
      if (hits[hits.length - 1]!.score < cutScore - TIE) return hits.slice(0, limit);
      count *= 4;
      if (!deeper) continue;
      let scored = await deeper.ids(count);
      while (scored.length === count && scored[scored.length - 1]!.score >= cutScore - TIE) scored = await deeper.ids((count *= 4));
      const top = scored
        .sort((a, b) => (a.score !== b.score ? b.score - a.score : a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
        .slice(0, limit);
      const known = new Map(hits.map((hit) => [hit.record.id, hit.record]));
      const missing = await deeper.records(top.filter((entry) => !known.has(entry.id)).map((entry) => entry.id));
      return top.flatMap((entry) => {
        const record = known.get(entry.id) ?? missing.get(entry.id);
        return record ? [{ record, score: entry.score }] : [];
      });
    }
  }

  return {
    specificationVersion: 'v1',
    id: 'lancedb',
    capabilities: { approximateVectors: true, persistent: true },

    async init() {
      await ready();
    },

    async close() {
      if (isClosed) return;
      isClosed = true;
      if (idleTimer) clearTimeout(idleTimer);
      idleTimer = null;
      await queue.idle();
      if (starting) await starting.catch(() => undefined);
      table?.close();
      connection?.close();
      table = null;
      connection = null;
    },

    async upsert({ records, embedder, newIds }) {
      await ready();
      await queue.write(() =>
        guard('upsert', async () => {
          assertEmbedderMatches(fingerprint, embedder);
          if (records.length === 0) return;
          assertVectorDimensions(records, embedder.dimensions);
          const current = await ensureTable(embedder);
          // Another process may have created the table with another embedder meanwhile.
          assertEmbedderMatches(fingerprint, embedder);
          const rows = dedupeRecordsById(records).map(toRow);
          await writeRows(current, rows, newIds === true);
          await ensureScalarIndexes(current);
          writesSinceOptimize++;
          rowsSinceReindex += rows.length;
          scheduleMaintenance(current, await current.countRows());
        }),
      );
    },

    async search(request: MemorySearchRequest): Promise<MemorySearchResult> {
      await ready();
      return guard('search', async () => {
        const limit = Math.max(0, Math.floor(request.limit));
        const current = table;
        if (!current || limit === 0) return { lexical: [], semantic: [] };
        const filter = agentFilter(request.agentId);
        // Counted at most once per search, and only if a channel asks for it.
        let share: Promise<number> | undefined;
        const agentShareOnce = () => (share ??= agentShare(current, request.agentId));
        const terms = [...new Set(analyze(request.text))];
        const vector = request.vector;
        if (vector && fingerprint && vector.length !== fingerprint.dimensions) {
          throw new RangeError(`query vector has ${vector.length} dimensions, the index ${fingerprint.dimensions}`);
        }

        // One ranked query per channel, both channels at once, each reading the whole records of its
        // hits (on a settled 100k table: full text ~9 ms, vectors ~11 ms). Reading ids first and the
        // records by id after costs a second query per channel (~9 ms for 50 ids).

        // Full text: for an agent holding most of the table, unfiltered with the agent's rows kept
        // (pre-filtering first intersects the agent's bitmap: ~12 ms against ~8 ms at 900k of 1M
        // rows), the pre-filtered query when too few of the best rows are the agent's. Lance's BM25
        // statistics are table-wide, so both give the same scores.
        const agentRows = async (count: number, columns: readonly string[]): Promise<Record<string, unknown>[]> => {
          const match = () => current.query().fullTextSearch(new MatchQuery(terms.join(' '), 'terms', { operator: Operator.Or }));
          const agentShareOfRows = await agentShareOnce();
          if (agentShareOfRows >= POSTFILTER_MIN_SHARE) {
            const asked = unfilteredCount(count, agentShareOfRows);
            const rows: Record<string, unknown>[] = await match()
              .select([...new Set([...columns, 'agent_id', '_score'])])
              .limit(asked)
              .toArray();
            const own = rows.filter((row) => row.agent_id === request.agentId);
            if (own.length >= count || rows.length < asked) return own.sort((a, b) => Number(b._score) - Number(a._score)).slice(0, count);
          }
          return match().where(filter).select([...columns, '_score']).limit(count).toArray();
        };
        const lexical =
          terms.length === 0
            ? Promise.resolve([])
            : ranked(
                limit,
                async (count) => (await agentRows(count, RECORD_COLUMNS)).map((row) => ({ record: fromRow(row), score: Number(row._score) })),
                {
                  ids: async (count) => (await agentRows(count, ['id'])).map((row) => ({ id: String(row.id), score: Number(row._score) })),
                  records: (ids) => recordsById(current, request.agentId, ids),
                },
              );

        const nearest = async (count: number, mode: 'exact' | 'prefilter' | 'postfilter') => {
          let query = current.vectorSearch(vector!).column('vector').distanceType('cosine').where(filter);
          // With an HNSW index: `ef` candidates per search (at least twice the hits asked for).
          if (mode !== 'exact') query = query.ef(Math.max(ANN_MIN_EF, count * 2));
          if (mode === 'postfilter') query = query.postfilter();
          const rows = await query.select([...RECORD_COLUMNS, '_distance']).limit(count).toArray();
          // Exact cosine from the stored vectors, whatever scale the index reports distances in.
          return rows
            .map((row: Record<string, unknown>) => {
              const record = fromRow(row);
              return { record, score: cosineSimilarity(vector!, record.vector) };
            })
            .sort(compareMemoryHits);
        };
        // With the ANN index the order is approximate anyway (exact cosine re-sorts the hits, so
        // the row past the limit often outscores the last one without being a tie): one fetch. An
        // agent holding most of the table is searched unfiltered and its rows kept (a pre-filtered
        // HNSW search first builds the allow-list of every row of the agent: ~25 ms at 900k of 1M
        // rows against ~11 ms); if too few of the nearest rows are the agent's, the pre-filtered
        // search answers. The flat search is exact and settles ties at the cut like full text.
        const approximateSearch = async (): Promise<MemoryHit[]> => {
          const agentShareOfRows = await agentShareOnce();
          if (agentShareOfRows >= POSTFILTER_MIN_SHARE) {
            const hits = await nearest(unfilteredCount(limit, agentShareOfRows), 'postfilter');
            if (hits.length >= limit) return hits.slice(0, limit);
          }
          return (await nearest(limit, 'prefilter')).slice(0, limit);
        };
        const semantic =
          vector === null
            ? Promise.resolve([])
            : hasVectorIndex
              ? approximateSearch()
              : ranked(limit, (count) => nearest(count, 'exact'));

        const [lexicalHits, semanticHits] = await Promise.all([lexical, semantic]);
        return { lexical: lexicalHits, semantic: semanticHits };
      });
    },

    async get({ agentId, ids }) {
      await ready();
      return guard('get', async () => {
        const current = table;
        if (!current || ids.length === 0) return [];
        return [...(await recordsById(current, agentId, ids)).values()];
      });
    },

    async deleteBy({ agentId, threadId, sourceId, observationId, ids }) {
      await ready();
      // An empty id list matches nothing (port contract), not every record.
      if (ids !== undefined && ids.length === 0) return;
      await queue.write(() =>
        guard('deleteBy', async () => {
          if (!table) return;
          const before = await table.countRows();
          const clauses = [agentFilter(agentId)];
          if (threadId !== undefined) clauses.push(`thread_id = ${sqlString(threadId)}`);
          if (observationId !== undefined) clauses.push(`observation_id = ${sqlString(observationId)}`);
          if (sourceId !== undefined) clauses.push(`source_id = ${sqlString(sourceId)}`);
          if (ids === undefined) {
            await table.delete(clauses.join(' AND '));
          } else {
            // Bounded IN lists, as in `get`.
            const unique = [...new Set(ids)];
            for (let start = 0; start < unique.length; start += 1000) {
              const list = unique.slice(start, start + 1000).map(sqlString).join(', ');
              await table.delete([...clauses, `id IN (${list})`].join(' AND '));
            }
          }
          writesSinceOptimize++;
          scheduleSettle();
          // Deleted rows keep counting in the full-text statistics until the index is rebuilt, which
          // skews every agent's BM25 ranking; rebuild here once a deletion is a noticeable share.
          const after = await table.countRows();
          const deleted = before - after;
          if (deleted > 0 && deleted >= Math.max(1, after / 100)) {
            hasFullTextIndex = false;
            rowsSinceReindex = 0;
            if (after > 0) await ensureScalarIndexes(table);
          }
        }),
      );
    },

    async copyAgent({ fromAgentId, toAgentId, toOrganizationId, newId }) {
      await ready();
      return queue.write(() =>
        guard('copyAgent', async () => {
          const current = table;
          if (!current) return { copied: 0 };
          const rows = await current.query().where(agentFilter(fromAgentId)).select(RECORD_COLUMNS).toArray();
          if (rows.length === 0) return { copied: 0 };
          const copies = rows.map((row: Record<string, unknown>) => toRow({ ...fromRow(row), id: newId(), agentId: toAgentId, organizationId: toOrganizationId }));
          await writeRows(current, copies, false);
          writesSinceOptimize++;
          rowsSinceReindex += copies.length;
          scheduleMaintenance(current, await current.countRows());
          return { copied: copies.length };
        }),
      );
    },

    async settle() {
      await ready();
      if (idleTimer) clearTimeout(idleTimer);
      idleTimer = null;
      await queue.run(() => guard('settle', () => settleTable('now')));
    },

    async stats({ agentId }) {
      await ready();
      return guard('stats', async () => ({ count: table ? await table.countRows(agentFilter(agentId)) : 0 }));
    },

    async embedder() {
      await ready();
      // Another process may have created the table since init.
      if (!table) await queue.run(() => guard('embedder', async () => {
        if (!table && (await connection!.tableNames()).includes(tableName)) await adopt(await connection!.openTable(tableName));
      }));
      return fingerprint ? { ...fingerprint } : null;
    },
  };
}
