import { ServiceError, type MemoryIndex } from '@memory-agents/core';
import {
  EmbedderMismatchError,
  assertEmbedderMatches,
  assertVectorDimensions,
  dedupeRecordsById,
  mergePatches,
  sameFingerprint,
  type EmbedderFingerprint,
  type MemorySearchRequest,
  type MemorySearchResult,
} from '@memory-agents/core/adapter';
import { fullTextChannel } from './memory-index/full-text-channel.js';
import { COLUMNS, fromRow, indexTables, type IndexState, type RecordRow } from './memory-index/schema.js';
import { vectorChannel, type AgentSize } from './memory-index/vector-channel.js';
import { norm } from './memory-index/vectors.js';
import { createSettler } from './memory-index/settle.js';
import { StatisticsDelta, bumpVersions, deletePostings, insertRows, recordTerms } from './memory-index/write-path.js';
import { searchFilterOf } from './memory-index/filters.js';
import { findDuplicateRecords, listRecords, updateRecords, vectorMeta } from './memory-index/list.js';
import { copyRecords, deleteRecords } from './memory-index/copy-delete.js';
import { rewriteKeywords } from './memory-index/keywords.js';
import { openTables } from './memory-index/open.js';
import { buildAnnIndex } from './memory-index/ann-build.js';
import { beginReembed, finishReembed, lockedFingerprint, reembedPending, reembedProgress, writeReembedded } from './memory-index/reembed.js';
import type { SqlClient } from './sql-client.js';
import type { PostgresMemoryIndexOptions } from './memory-index/options.js';

export type { PostgresMemoryIndexOptions } from './memory-index/options.js';

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
 * migrations, rows), `open.ts` (start), `write-path.ts` (upserts and BM25 statistics),
 * `copy-delete.ts`, `list.ts` (listing, patches, duplicates), `ann-build.ts` (the HNSW index), `full-text-channel.ts`,
 * `vector-channel.ts`, `vectors.ts` and `settle.ts`.
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
/** How long a process trusts the fingerprint it read from a shared PostgreSQL (another process may switch it). */
const FINGERPRINT_TTL_MS = 1_000;

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
    const opened = await openTables(client, tables);
    Object.assign(state, { vectorKind: opened.vectorKind, fingerprint: opened.fingerprint, hasAnnIndex: opened.hasAnnIndex });
    annThreshold = state.vectorKind === 'pgvector' ? configuredAnnThreshold : null;
    // Tables another process changed a lot without settling them (an import, a killed writer):
    // settled in the background, as this process would have after writing them (issue 41).
    settler.opened();
  }

  async function ready(): Promise<void> {
    starting ??= guard('init', start).catch((error: unknown) => {
      starting = null;
      throw error;
    });
    await starting;
  }

  /** When the recorded fingerprint was last read from the database (ms). */
  let fingerprintReadAt = 0;
  /**
   * The fingerprint as recorded now: another process may have recorded it since init, or switched
   * it (re-embedding, issue 39). On PGlite this process is the only one, so what it read or wrote
   * stays true; on PostgreSQL a recorded fingerprint is read again after `FINGERPRINT_TTL_MS`, or
   * at once with `fresh`. A changed one drops the cached vectors and the HNSW flag.
   */
  async function currentFingerprint(sql: SqlClient, fresh = false): Promise<EmbedderFingerprint | null> {
    const stale = fresh || (client.dialect !== 'pglite' && Date.now() - fingerprintReadAt > FINGERPRINT_TTL_MS);
    if (state.fingerprint && !stale) return state.fingerprint;
    const { rows } = await sql.query<{ value: string }>(`SELECT value FROM ${meta} WHERE key = 'embedder'`);
    const read = rows[0] ? (JSON.parse(rows[0].value) as EmbedderFingerprint) : null;
    if (state.fingerprint && !sameFingerprint(state.fingerprint, read)) switched();
    state.fingerprint = read;
    fingerprintReadAt = Date.now();
    return state.fingerprint;
  }

  /** The vectors changed generation: cached vectors and the HNSW index (dropped with them) are gone. */
  function switched(): void {
    vectors.forgetAll();
    state.hasAnnIndex = false;
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
        if (state.hasAnnIndex) return;
        if (await buildAnnIndex(client, tables, { threshold, dimensions, memory: options.annBuildMemory ?? '512MB' })) state.hasAnnIndex = true;
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
      // The client belongs to the caller; only wait for background work, and a settle that was due.
      await settler.close();
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
        // A mismatch with what this process knows is checked once more against the database.
        const known = await currentFingerprint(client);
        if (known && !sameFingerprint(known, embedder)) assertEmbedderMatches(await currentFingerprint(client, true), embedder);
        if (given.length === 0) return;
        assertVectorDimensions(given, embedder.dimensions);
        const unique = dedupeRecordsById(given);
        const analyzed = unique.map(recordTerms);
        const written = await client.transaction(async (tx) => {
          // Recorded inside the transaction: the first committed upsert wins, the other rolls back.
          await tx.query(`INSERT INTO ${meta} (key, value) VALUES ('embedder', $1) ON CONFLICT (key) DO NOTHING`, [
            JSON.stringify({ id: embedder.id, dimensions: embedder.dimensions }),
          ]);
          // Share-locked until commit: a switch of generation (finishReembed) waits for this write.
          assertEmbedderMatches(await lockedFingerprint(tx, tables), embedder);
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
        const result = await client.transaction((tx) => deleteRecords(tx, tables, { agentId, threadId, sourceId, observationId, ids, threadIds }));
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
          for (const row of result.changed) cached.setMeta(row.id, { threadId: row.thread_id, validFrom: row.valid_from, validTo: row.valid_to, expiresAt: row.expires_at });
        });
      });
    },

    async rewriteKeywords(request) {
      await ready();
      if (request.records.length === 0) return;
      await guard('rewriteKeywords', async () => {
        // No vector changes: the cached vectors only learn the agent's new version.
        vectors.afterWrite(await client.transaction((tx) => rewriteKeywords(tx, tables, request)), () => undefined);
      });
    },

    async copyAgent({ fromAgentId, toAgentId, toOrganizationId, newId }) {
      await ready();
      let count = 0;
      settler.writing();
      return guard('copyAgent', async () => {
        const result = await client.transaction((tx) => copyRecords(tx, tables, { fromAgentId, toAgentId, toOrganizationId, newId }));
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

    async beginReembed({ target }) {
      await ready();
      await guard('beginReembed', () => beginReembed(client, tables, target));
    },

    async reembedProgress() {
      await ready();
      return guard('reembedProgress', async () => {
        const progress = await reembedProgress(client, tables);
        // None in progress: another process may have just switched; what `embedder()` answers next must say so.
        if (progress === null && state.fingerprint) await currentFingerprint(client, true);
        return progress;
      });
    },

    async reembedPending({ limit, after }) {
      await ready();
      return guard('reembedPending', () => reembedPending(client, tables, limit, after ?? null));
    },

    async writeReembedded({ target, vectors: written }) {
      await ready();
      await guard('writeReembedded', () => writeReembedded(client, tables, state.vectorKind, target, written));
    },

    async finishReembed({ target }) {
      await ready();
      return guard('finishReembed', async () => {
        const finished = await finishReembed(client, tables, state.vectorKind, target);
        if (finished) {
          switched();
          state.fingerprint = { id: target.id, dimensions: target.dimensions };
          fingerprintReadAt = Date.now();
          rowsSinceAnnCheck = annThreshold ?? 0;
          maybeBuildAnnIndex(0);
        }
        return finished;
      });
    },

    async findDuplicates({ agentId, keys }) {
      await ready();
      if (keys.length === 0) return [];
      return guard('findDuplicates', () => findDuplicateRecords(client, tables, agentId, keys));
    },
  };
}
