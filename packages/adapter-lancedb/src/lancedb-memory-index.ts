import { deleteRecords } from './deletes.js';
import { cancelSettle, settleTable } from './maintenance.js';
import { resolveOptions, type LancedbMemoryIndex, type LancedbMemoryIndexOptions } from './options.js';
import { agentList, listRecords, updateRecords } from './list.js';
import { rewriteRecordKeywords } from './keywords.js';
import { hitRecordsById, recordsById } from './reads.js';
import { searchIndex } from './search.js';
import { agentFilter, createState, guard } from './state.js';
import { adopt, openCommitted, ready } from './table.js';
import { copyAgentRecords, upsertRecords } from './writes.js';
import { beginReembed, currentTableName, finishReembed, reembedPending, reembedProgress, writeReembedded } from './reembed.js';


export { sqlString } from './rows.js';
export type { LancedbMemoryIndex, LancedbMemoryIndexOptions } from './options.js';

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
 * - Index builds and `optimize()` run in a maintenance lane beside the write queue, one at a time:
 *   writes and searches never wait for them (merges and deletes wait only for a running compaction,
 *   which rewrites the fragments they touch). `close()` drops maintenance not started yet.
 *
 * @example
 * const index = lancedbMemoryIndex({ uri: './data/lancedb' });
 * await index.init();
 */
export function lancedbMemoryIndex(options: LancedbMemoryIndexOptions): LancedbMemoryIndex {
  const state = createState(resolveOptions(options));
  const { queue } = state;

  const index: LancedbMemoryIndex = {
    specificationVersion: 'v1',
    id: 'lancedb',
    capabilities: { approximateVectors: true, persistent: true },

    async init() {
      await ready(state);
    },

    async close() {
      if (state.isClosed) return;
      state.isClosed = true;
      cancelSettle(state);
      // Maintenance not started yet is dropped; a build in a child process is killed (it commits
      // nothing then), one in this process is waited for.
      state.buildProcess?.kill('SIGKILL');
      await state.lane.close();
      await queue.idle();
      if (state.starting) await state.starting.catch(() => undefined);
      state.table?.close();
      state.side?.close();
      state.side = null;
      state.connection?.close();
      state.table = null;
      state.connection = null;
      state.listCache.clear();
    },

    async upsert(request) {
      await ready(state);
      await upsertRecords(state, request);
    },

    async search(request) {
      await ready(state);
      return searchIndex(state, request);
    },

    async get({ agentId, ids }) {
      await ready(state);
      return guard('get', async () => {
        const current = state.table;
        if (!current || ids.length === 0) return [];
        return [...(await recordsById(state, current, agentId, ids)).values()];
      });
    },

    async findDuplicates({ agentId, keys }) {
      await ready(state);
      return guard('findDuplicates', async () => {
        const current = state.table;
        if (!current || keys.length === 0) return [];
        // From the agent's list entries (cached per table version, kept by this instance's writes):
        // no query at all when nothing matches, the usual case; a query would cost about an upsert.
        const wanted = new Set(keys);
        const ids = (await agentList(state, current, agentId)).entries.filter((entry) => entry.current && entry.key !== null && wanted.has(entry.key)).map((entry) => entry.id);
        if (ids.length === 0) return [];
        return [...(await hitRecordsById(state, current, agentId, ids)).values()].filter((hit) => hit.validTo === null);
      });
    },

    async deleteBy(request) {
      await ready(state);
      await deleteRecords(state, request);
    },

    async list(request) {
      await ready(state);
      return listRecords(state, request);
    },

    async update(request) {
      await ready(state);
      await updateRecords(state, request);
    },

    async rewriteKeywords(request) {
      await ready(state);
      await rewriteRecordKeywords(state, request);
    },

    async copyAgent(request) {
      await ready(state);
      return copyAgentRecords(state, request);
    },

    async settle() {
      await ready(state);
      cancelSettle(state);
      // Writes queued before settle() are folded in; the work runs in the maintenance lane.
      await queue.run(async () => undefined);
      await state.lane.run('settle', () => guard('settle', () => settleTable(state, 'now')));
    },

    async stats({ agentId }) {
      await ready(state);
      return guard('stats', async () => ({ count: state.table ? await state.table.countRows(agentFilter(agentId)) : 0 }));
    },

    async count() {
      await ready(state);
      return guard('count', async () => (state.table ? await state.table.countRows() : 0));
    },

    async embedder() {
      await ready(state);
      // Another process may have created the table since init.
      if (!state.table) {
        await queue.run(() =>
          guard('embedder', async () => {
            const { connection } = state;
            const names = await connection!.tableNames();
            if (state.table) return;
            state.tableName = await currentTableName(state, names);
            const opened = names.includes(state.tableName) ? await openCommitted(connection!, state.tableName) : null;
            if (opened) await adopt(state, opened);
          }),
        );
      }
      return state.fingerprint ? { ...state.fingerprint } : null;
    },

    async beginReembed({ target }) {
      await ready(state);
      await beginReembed(state, target);
    },

    async reembedProgress() {
      await ready(state);
      return reembedProgress(state);
    },

    async reembedPending({ limit, after }) {
      await ready(state);
      return reembedPending(state, limit, after ?? null);
    },

    async writeReembedded({ target, vectors }) {
      await ready(state);
      await writeReembedded(state, target, vectors);
    },

    async finishReembed({ target }) {
      await ready(state);
      return finishReembed(state, target);
    },
  };
  return index;
}
