import { ServiceError, type MemoryIndex } from '@memory-agents/core';
import {
  EmbedderMismatchError,
  assertEmbedderMatches,
  assertVectorDimensions,
  dedupeRecordsById,
  mergePatches,
  type EmbedderFingerprint,
  type MemorySearchRequest,
  type MemorySearchResult,
} from '@memory-agents/core/adapter';
import { fullTextChannel } from './memory-index/full-text-channel.js';
import { COLUMNS, fromRow, HIT_COLUMNS, hitFromRow, indexTables, migrations, type HitRow, type IndexState, type RecordRow } from './memory-index/schema.js';
import { vectorChannel, type AgentSize } from './memory-index/vector-channel.js';
import { norm } from './memory-index/vectors.js';
import { createSettler, type SettleReport } from './memory-index/settle.js';
import { StatisticsDelta, bumpVersions, deletePostings, insertRows, recordTerms } from './memory-index/write-path.js';
import { searchFilterOf } from './memory-index/filters.js';
import { listRecords, updateRecords, vectorMeta } from './memory-index/list.js';
import { migrate } from './migrate.js';
import type { SqlClient } from './sql-client.js';

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
   * PGlite), after the HNSW build when one is queued. `null` leaves it to autovacuum.
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

/** The PostgreSQL memory index: a `MemoryIndex` that can also be settled on demand. */
export type PostgresMemoryIndex = MemoryIndex & {
  /**
   * Brings the index to the settled state now (after queued background work): what the adapter
   * does by itself after `settleAfterRows` rows and a quiet period.
   */
  settle(): Promise<void>;
};

/**
 * A `MemoryIndex` in PostgreSQL or PGlite, in its own tables (`memory_index_records`,
 * `memory_index_agents`, `memory_index_terms`, `memory_index_postings`, `memory_index_meta`) with its own migration table
 * (`memory_index_migrations`). The parts live in `memory-index/`: `schema.ts` (tables,
 * migrations, rows), `write-path.ts` (upserts and BM25 statistics), `full-text-channel.ts`,
 * `vector-channel.ts` and `vectors.ts`.
 *
 * - Lexical: Okapi BM25 (k1 1.2, b 0.75) per agent over core's analyzed terms (`terms text[]`, and
 *   per record and term a row of `memory_index_postings`, read index-only, best first), so stemming, stop words and scores agree with the in-memory index; corpus
 *   statistics come from per-agent tables the writes keep, and a search scores a bounded set of
 *   candidates, the rarest terms' records first (`fullTextCandidates`).
 * - Semantic: pgvector cosine (`<=>`) when the database has it: exact for small agents, HNSW with
 *   iterative index scans (pgvector 0.8, `relaxed_order`) for large agents once the table has
 *   `annThreshold` rows; otherwise a `bytea` column (float32 little-endian) and exact cosine in JS
 *   over the agent's vectors, cached per agent and version.
 * - Every write is one transaction that first locks the agents it touches (their version rows),
 *   so statistics stay exact under concurrent writers; the fingerprint is recorded with `INSERT …
 *   ON CONFLICT DO NOTHING` inside it, so concurrent first writers cannot record two embedders.
 *
 * @example
 * const client = await openSqlClient({ dataDir: 'memory://' });
 * const index = postgresMemoryIndex({ client });
 * await index.init();
 */
export function postgresMemoryIndex(options: PostgresMemoryIndexOptions): PostgresMemoryIndex {
  const { client } = options;
  const tables = indexTables(options.schema ?? 'public');
  const { records, meta } = tables;
  const batchSize = options.batchSize ?? 500;
  const onBackgroundError =
    options.onBackgroundError ??
    ((error: unknown, operation: string) => process.stderr.write(`postgresMemoryIndex ${operation} failed: ${String(error)}\n`));

  const state: IndexState = { client, tables, vectorKind: 'bytea', fingerprint: null, hasAnnIndex: false };
  let starting: Promise<void> | null = null;
  const inProcess = (options.vectorSearch ?? (client.dialect === 'pglite' ? 'process' : 'database')) === 'process';
  // Searches in this process never read an HNSW index: none is built for them by default.
  const configuredAnnThreshold = options.annThreshold !== undefined ? options.annThreshold : client.dialect === 'pglite' || inProcess ? null : 50_000;
  let annThreshold: number | null = null;
  let rowsSinceAnnCheck = 0;
  let background: Promise<void> = Promise.resolve();
  const vectors = vectorChannel(state, {
    vectorCacheRows: options.vectorCacheRows ?? 200_000,
    exactSearchBelow: options.exactSearchBelow ?? 10_000,
    efSearch: options.efSearch ?? 200,
    inProcess,
  });
  const settler = createSettler({
    client,
    tables,
    afterRows: options.settleAfterRows !== undefined ? options.settleAfterRows : 10_000,
    afterIdleMs: options.settleAfterIdleMs ?? 2_000,
    enqueue: (task) => {
      // A settle also sees to the HNSW index past its threshold (not built yet in this process:
      // a restart, or a build that failed), queued ahead of the statistics.
      if (annThreshold !== null) {
        rowsSinceAnnCheck = Math.max(rowsSinceAnnCheck, Math.floor(annThreshold / 10));
        maybeBuildAnnIndex(0);
      }
      return (background = background
        .then(async () => {
          await ready();
          await task();
        })
        .catch(() => undefined));
    },
    onBackgroundError,
    ...(options.onSettle ? { onSettle: options.onSettle } : {}),
  });
  const fullText = fullTextChannel(state, { candidates: options.fullTextCandidates ?? 10_000, rescored: options.fullTextRescored ?? 1_000 });

  async function guard<T>(operation: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (error) {
      if (error instanceof EmbedderMismatchError || error instanceof RangeError || error instanceof ServiceError) throw error;
      throw new ServiceError('service_unavailable', `The memory index (postgres) failed during ${operation}.`, { cause: error });
    }
  }

  async function start(): Promise<void> {
    let wantsVector = false;
    if (client.hasVector) {
      // The extension lives in one schema of the database; a connection whose search_path leaves
      // that schema out cannot name its type or operators: exact search then, not a failed start.
      const visible = async () => (await client.query<{ visible: boolean }>("SELECT to_regtype('vector') IS NOT NULL AS visible")).rows[0]?.visible === true;
      try {
        await client.exec('CREATE EXTENSION IF NOT EXISTS vector');
        wantsVector = await visible();
      } catch {
        // Available but not installable by this role: fall back to bytea (exact, slower). Or
        // another process created it at the same moment (processes started together on a new
        // database: the loser's IF NOT EXISTS fails with a unique violation): then it is there.
        wantsVector = await visible().catch(() => false);
      }
    }
    await migrate(client, `${tables.schema}.memory_index_migrations`, migrations(tables, wantsVector ? 'pgvector' : 'bytea'), { schema: tables.schema });
    const { rows } = await client.query<{ key: string; value: string }>(`SELECT key, value FROM ${meta}`);
    const values = new Map(rows.map((row) => [row.key, row.value]));
    state.vectorKind = values.get('vector_kind') === 'pgvector' ? 'pgvector' : 'bytea';
    if (state.vectorKind === 'pgvector' && !wantsVector) {
      // Tables made with pgvector by a connection that saw it, opened by one that does not: every
      // write and search would fail. Refuse to start, saying what to change.
      throw new ServiceError(
        'service_unavailable',
        `The memory index in schema ${tables.schema} stores pgvector vectors, but this connection cannot use the type "vector": ` +
          "put the extension's schema (usually public) on the connection's search_path, e.g. ?options=-c%20search_path%3Dmyschema,public in the database URL.",
      );
    }
    const recorded = values.get('embedder');
    state.fingerprint = recorded ? (JSON.parse(recorded) as EmbedderFingerprint) : null;
    annThreshold = state.vectorKind === 'pgvector' ? configuredAnnThreshold : null;
    const { rows: indexes } = await client.query(
      `SELECT 1 FROM pg_indexes WHERE schemaname = $1 AND indexname = 'memory_index_records_embedding_hnsw'`,
      [options.schema ?? 'public'],
    );
    state.hasAnnIndex = indexes.length > 0;
  }

  async function ready(): Promise<void> {
    starting ??= guard('init', start).catch((error: unknown) => {
      starting = null;
      throw error;
    });
    await starting;
  }

  /** The fingerprint as recorded now (another process may have recorded it since init). */
  async function currentFingerprint(sql: SqlClient): Promise<EmbedderFingerprint | null> {
    if (state.fingerprint) return state.fingerprint;
    const { rows } = await sql.query<{ value: string }>(`SELECT value FROM ${meta} WHERE key = 'embedder'`);
    state.fingerprint = rows[0] ? (JSON.parse(rows[0].value) as EmbedderFingerprint) : null;
    return state.fingerprint;
  }

  /** Builds the HNSW index once the table has `annThreshold` rows (checked every tenth of it). */
  function maybeBuildAnnIndex(written: number): void {
    if (annThreshold === null || state.hasAnnIndex || !state.fingerprint) return;
    rowsSinceAnnCheck += written;
    if (rowsSinceAnnCheck < Math.max(1, Math.floor(annThreshold / 10))) return;
    rowsSinceAnnCheck = 0;
    const threshold = annThreshold;
    const dimensions = state.fingerprint.dimensions;
    background = background.then(async () => {
      try {
        const { rows } = await client.query<{ n: number | string }>(`SELECT count(*) AS n FROM (SELECT 1 FROM ${records} LIMIT ${threshold}) t`);
        if (Number(rows[0]?.n ?? 0) < threshold || state.hasAnnIndex) return;
        const build = `INDEX IF NOT EXISTS memory_index_records_embedding_hnsw ON ${records} USING hnsw ((embedding::vector(${dimensions})) vector_cosine_ops)`;
        const memory = options.annBuildMemory ?? '512MB';
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
        state.hasAnnIndex = true;
      } catch (error) {
        onBackgroundError(error, 'HNSW index build');
      }
    });
  }

  /** The agent's records and the table's (planner estimate), for the vector channel's plan. */
  async function agentSize(agentId: string): Promise<AgentSize> {
    const { rows } = await client.query<{ agent_rows: string | number | null; table_rows: string | number | null }>(
      `SELECT (SELECT row_count FROM ${tables.agents} WHERE agent_id = $1) AS agent_rows,
         (SELECT reltuples FROM pg_class WHERE oid = to_regclass($2)) AS table_rows`,
      [agentId, records],
    );
    const agentRows = Number(rows[0]?.agent_rows ?? 0);
    return { agentRows, tableRows: Math.max(agentRows, Number(rows[0]?.table_rows ?? 0)) };
  }

  return {
    specificationVersion: 'v1',
    id: `postgres-memory-index:${client.dialect}`,
    capabilities: { approximateVectors: configuredAnnThreshold !== null && client.hasVector && !inProcess, persistent: true },

    async init() {
      await ready();
    },

    async close() {
      // The client belongs to the caller; only wait for background work.
      settler.close();
      await background;
    },

    async settle() {
      await ready();
      await settler.settle();
    },

    async upsert({ records: given, embedder, newIds }) {
      await ready();
      let count = 0;
      settler.writing();
      await guard('upsert', async () => {
        assertEmbedderMatches(await currentFingerprint(client), embedder);
        if (given.length === 0) return;
        assertVectorDimensions(given, embedder.dimensions);
        const unique = dedupeRecordsById(given);
        const analyzed = unique.map(recordTerms);
        const written = await client.transaction(async (tx) => {
          // Recorded inside the transaction: the first committed upsert wins, the other rolls back.
          await tx.query(`INSERT INTO ${meta} (key, value) VALUES ('embedder', $1) ON CONFLICT (key) DO NOTHING`, [
            JSON.stringify({ id: embedder.id, dimensions: embedder.dimensions }),
          ]);
          const { rows } = await tx.query<{ value: string }>(`SELECT value FROM ${meta} WHERE key = 'embedder'`);
          assertEmbedderMatches(JSON.parse(rows[0]!.value) as EmbedderFingerprint, embedder);
          // Agents losing a record to another agent (an id upserted under a new agent) change too;
          // ids the caller declares new (`newIds`) cannot belong to anyone yet: nothing to read.
          const ids = unique.map((record) => record.id);
          const { rows: touched } = newIds
            ? { rows: [] as { agent_id: string }[] }
            : await tx.query<{ agent_id: string }>(`SELECT DISTINCT agent_id FROM ${records} WHERE id = ANY($1::text[])`, [ids]);
          const versions = await bumpVersions(tx, tables, [...unique.map((record) => record.agentId), ...touched.map((row) => row.agent_id)]);
          // Read the replaced rows under those locks: their terms leave the statistics.
          const { rows: previous } = newIds
            ? { rows: [] as { id: string; agent_id: string; terms: string[]; rec: string }[] }
            : await tx.query<{ id: string; agent_id: string; terms: string[]; rec: string }>(
                `SELECT id, agent_id, terms, rec FROM ${records} WHERE id = ANY($1::text[])`,
                [ids],
              );
          const delta = new StatisticsDelta();
          for (const row of previous) delta.add(row.agent_id, row.terms, -1);
          unique.forEach((record, i) => delta.add(record.agentId, analyzed[i]!, 1));
          // The replaced records' postings go first; then every term of the new ones gets its id
          // (applyTerms), which the postings written with each batch refer to. The agents' N and
          // total length change last: postings are ordered by the average before this write.
          await deletePostings(tx, tables, previous.map((row) => row.rec));
          const termIds = await delta.applyTerms(tx, tables);
          for (let start = 0; start < unique.length; start += batchSize) {
            await insertRows(tx, tables, state.vectorKind, unique.slice(start, start + batchSize), analyzed.slice(start, start + batchSize), termIds);
          }
          await delta.applyAgents(tx, tables);
          const agentOfId = new Map(unique.map((record) => [record.id, record.agentId]));
          return { versions, moved: previous.filter((row) => agentOfId.get(row.id) !== row.agent_id) };
        });
        for (const row of written.moved) vectors.forget(row.agent_id);
        vectors.afterWrite(written.versions, (agentId, cached) => {
          for (const record of unique) if (record.agentId === agentId) cached.set(record.id, record.vector, norm(record.vector), vectorMeta(record));
        });
        state.fingerprint ??= { id: embedder.id, dimensions: embedder.dimensions };
        maybeBuildAnnIndex(unique.length);
        count = unique.length;
      }).finally(() => settler.written(count));
    },

    async search(request: MemorySearchRequest): Promise<MemorySearchResult> {
      await ready();
      return guard('search', async () => {
        const limit = Math.max(0, Math.floor(request.limit));
        if (limit === 0) return { lexical: [], semantic: [] };
        const vector = request.vector;
        const filter = searchFilterOf(request);
        if (filter.threadIds?.length === 0) return { lexical: [], semantic: [] };
        // Sequential on purpose: PGlite has one connection, and pg pools gain little here.
        const lexicalHits = request.text === '' ? [] : await fullText.search(request.agentId, request.text, limit, filter);
        const semanticHits =
          vector === null || !(await currentFingerprint(client))
            ? []
            : await vectors.search(request.agentId, vector, limit, () => agentSize(request.agentId), filter);
        return { lexical: lexicalHits, semantic: semanticHits };
      });
    },

    async get({ agentId, ids }) {
      await ready();
      return guard('get', async () => {
        const unique = [...new Set(ids)];
        if (unique.length === 0) return [];
        const { rows } = await client.query<RecordRow>(`SELECT ${COLUMNS} FROM ${records} WHERE agent_id = $1 AND id = ANY($2::text[])`, [agentId, unique]);
        return rows.map(fromRow);
      });
    },

    async deleteBy({ agentId, threadId, sourceId, observationId, ids, threadIds }) {
      await ready();
      // An empty id or thread list matches nothing (port contract), not every record.
      if (ids !== undefined && ids.length === 0) return;
      if (threadIds !== undefined && threadIds.length === 0) return;
      let count = 0;
      settler.writing();
      await guard('deleteBy', async () => {
        const clauses = ['agent_id = $1'];
        const params: unknown[] = [agentId];
        const add = (column: string, value: string | undefined) => {
          if (value === undefined) return;
          params.push(value);
          clauses.push(`${column} = $${params.length}`);
        };
        add('thread_id', threadId);
        add('observation_id', observationId);
        add('source_id', sourceId);
        if (ids !== undefined) {
          params.push([...ids]);
          clauses.push(`id = ANY($${params.length}::text[])`);
        }
        if (threadIds !== undefined) {
          params.push([...threadIds]);
          clauses.push(`thread_id = ANY($${params.length}::text[])`);
        }
        const result = await client.transaction(async (tx) => {
          const versions = await bumpVersions(tx, tables, [agentId]);
          const { rows } = await tx.query<{ id: string; terms: string[]; rec: string }>(
            `DELETE FROM ${records} WHERE ${clauses.join(' AND ')} RETURNING id, terms, rec`,
            params,
          );
          await deletePostings(tx, tables, rows.map((row) => row.rec));
          const delta = new StatisticsDelta();
          for (const row of rows) delta.add(agentId, row.terms, -1);
          await delta.apply(tx, tables);
          return { versions, deleted: rows.map((row) => row.id) };
        });
        vectors.afterWrite(result.versions, (_, cached) => {
          for (const id of result.deleted) cached.remove(id);
        });
        count = result.deleted.length;
      }).finally(() => settler.written(count));
    },

    async list(request) {
      await ready();
      return guard('list', () => listRecords(client, tables, request));
    },

    async update({ agentId, patches }) {
      await ready();
      const merged = mergePatches(patches);
      if (merged.length === 0) return;
      await guard('update', async () => {
        const result = await client.transaction(async (tx) => {
          const versions = await bumpVersions(tx, tables, [agentId]);
          const changed = await updateRecords(tx, tables, agentId, merged);
          return { versions, changed };
        });
        vectors.afterWrite(result.versions, (_, cached) => {
          for (const row of result.changed) cached.setMeta(row.id, { threadId: row.thread_id, validFrom: row.valid_from, validTo: row.valid_to });
        });
      });
    },

    async copyAgent({ fromAgentId, toAgentId, toOrganizationId, newId }) {
      await ready();
      let count = 0;
      settler.writing();
      return guard('copyAgent', async () => {
        const result = await client.transaction(async (tx) => {
          const { rows } = await tx.query<{ id: string }>(`SELECT id FROM ${records} WHERE agent_id = $1 ORDER BY id COLLATE "C"`, [fromAgentId]);
          if (rows.length === 0) return { copied: 0 };
          const oldIds = rows.map((row) => row.id);
          const newIds = oldIds.map(() => newId());
          await bumpVersions(tx, tables, [toAgentId]);
          // supersededBy follows its target to the copy (kept as it is when the target is not copied).
          await tx.query(
            `INSERT INTO ${records} (id, agent_id, organization_id, text, keywords, terms, term_count, embedding, embedding_norm,
               speaker, occurred_at, created_at, source_kind, thread_id, observation_id, turn_index, source_id, page, filename,
               writer, job_id, span_start, span_end, also_from, valid_from, valid_to, superseded_by, suspicious, duplicate_key)
             SELECT m.new_id, $3, $4, r.text, r.keywords, r.terms, r.term_count, r.embedding, r.embedding_norm,
               r.speaker, r.occurred_at, r.created_at, r.source_kind, r.thread_id, r.observation_id, r.turn_index, r.source_id, r.page, r.filename,
               r.writer, r.job_id, r.span_start, r.span_end, r.also_from, r.valid_from, r.valid_to,
               coalesce(t.new_id, r.superseded_by), r.suspicious, r.duplicate_key
             FROM unnest($1::text[], $2::text[]) AS m(old_id, new_id) JOIN ${records} r ON r.id = m.old_id
             LEFT JOIN unnest($1::text[], $2::text[]) AS t(old_id, new_id) ON t.old_id = r.superseded_by`,
            [oldIds, newIds, toAgentId, toOrganizationId],
          );
          // The copies' statistics, computed from the copies themselves (new ids: nothing replaced).
          await tx.query(
            `UPDATE ${tables.agents} a SET row_count = a.row_count + c.n, term_total = a.term_total + c.total
             FROM (SELECT count(*) AS n, coalesce(sum(term_count), 0) AS total FROM ${records} WHERE id = ANY($1::text[])) c WHERE a.agent_id = $2`,
            [newIds, toAgentId],
          );
          await tx.query(
            `INSERT INTO ${tables.terms} AS t (agent_id, term, df)
             SELECT $2, u.term, count(*) FROM ${records} r CROSS JOIN LATERAL (SELECT DISTINCT unnest(r.terms) AS term) u
             WHERE r.id = ANY($1::text[]) GROUP BY u.term
             ON CONFLICT (agent_id, term) DO UPDATE SET df = t.df + excluded.df`,
            [newIds, toAgentId],
          );
          // The copies' postings: the originals' under the target agent's term ids (just ensured).
          await tx.query(
            `INSERT INTO ${tables.postings} (term_id, rec, impact, tf, term_count)
             SELECT target.term_id, copy.rec, p.impact, p.tf, p.term_count
             FROM unnest($1::text[], $2::text[]) AS m(old_id, new_id)
             JOIN ${records} original ON original.id = m.old_id JOIN ${records} copy ON copy.id = m.new_id
             JOIN ${tables.postings} p ON p.rec = original.rec
             JOIN ${tables.terms} source ON source.term_id = p.term_id
             JOIN ${tables.terms} target ON target.agent_id = $3 AND target.term = source.term`,
            [oldIds, newIds, toAgentId],
          );
          return { copied: oldIds.length };
        });
        vectors.forget(toAgentId);
        maybeBuildAnnIndex(result.copied);
        count = result.copied;
        return result;
      }).finally(() => settler.written(count));
    },

    async stats({ agentId }) {
      await ready();
      return guard('stats', async () => {
        const { rows } = await client.query<{ n: number | string }>(`SELECT count(*) AS n FROM ${records} WHERE agent_id = $1`, [agentId]);
        return { count: Number(rows[0]?.n ?? 0) };
      });
    },

    async count() {
      await ready();
      return guard('count', async () => {
        // The per-agent counts the writes keep: no scan of the records.
        const { rows } = await client.query<{ n: string | number | null }>(`SELECT coalesce(sum(row_count), 0) AS n FROM ${tables.agents}`);
        return Number(rows[0]?.n ?? 0);
      });
    },

    async ping() {
      await ready();
      await guard('a readiness probe', () => client.query('SELECT 1'));
    },

    async embedder() {
      await ready();
      const recorded = await guard('embedder', () => currentFingerprint(client));
      return recorded ? { ...recorded } : null;
    },

    async findDuplicates({ agentId, keys }) {
      await ready();
      if (keys.length === 0) return [];
      return guard('findDuplicates', async () => {
        const sql = `SELECT ${HIT_COLUMNS} FROM ${records} WHERE agent_id = $1 AND duplicate_key = ANY($2::text[]) AND duplicate_key IS NOT NULL AND valid_to IS NULL`;
        return (await client.query<HitRow>(sql, [agentId, [...new Set(keys)]])).rows.map(hitFromRow);
      });
    },
  };
}
