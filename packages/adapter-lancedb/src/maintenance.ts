import type { Table } from '@lancedb/lancedb';
import { sqlString } from './rows.js';
import type { IndexState } from './state.js';
import { VECTOR_INDEX, buildScalarIndexes, buildVectorIndex, prewarm } from './table.js';

/** Delta ANN indexes (one per settle that found new rows) searched one by one before a rebuild. */
const MAX_VECTOR_DELTAS = 8;

/** `optimize()` (compaction, index refresh, cleanup), holding the rewrite turn against merges and deletes. */
async function optimize(state: IndexState, current: Table): Promise<void> {
  await state.lane.rewrite(() => current.optimize({ cleanupOlderThan: new Date(Date.now() - state.options.retainVersionsMs) }));
}

/** Compaction passes {@link purgeDeleted} runs at most (indexing a moved row may take one). */
const PURGE_PASSES = 4;

/**
 * Erasure (issue 30): after a delete resolves, no byte of a removed row may remain in the
 * directory. A LanceDB delete only marks rows in a deletion file, and compaction rewrites a lone
 * fragment only once a tenth of it is deleted; so one surviving row is moved (deleted and added
 * back unchanged) into a fragment of its own, which makes the small fragments adjacent candidates
 * that compaction merges, dropping the deleted rows. Every older version, and every file no
 * longer referenced, is then removed at once (`deleteUnverified`: this process is the table's only
 * writer). A fragment already at LanceDB's target size (1M rows) is not a candidate; see
 * docs/deploying.md. Holds the rewrite turn, like any compaction.
 */
export async function purgeDeleted(state: IndexState, current: Table): Promise<void> {
  await state.lane.rewrite(async () => {
    const moved = await current.query().limit(1).toArrow();
    if (moved.numRows > 0) {
      await current.delete(`id = ${sqlString(String(moved.getChild('id')!.get(0)))}`);
      await current.add(moved);
    }
    let compacted = false;
    for (let pass = 0; pass < PURGE_PASSES; pass++) {
      const { compaction } = await current.optimize({ cleanupOlderThan: new Date(), deleteUnverified: true });
      if (compaction.fragmentsRemoved > 0) compacted = true;
      else if (compacted || moved.numRows === 0) break;
    }
  });
}

/**
 * See `LancedbMemoryIndex.settle`; runs in the maintenance lane, beside the write queue.
 * `settle()` folds in every row; the idle timer only acts once enough piled up (an `optimize()`
 * that compacts indexed fragments costs about an HNSW rebuild, while a few hundred unindexed rows
 * in a few fragments cost a query next to nothing).
 */
export async function settleTable(state: IndexState, mode: 'now' | 'idle'): Promise<void> {
  const current = state.table;
  if (!current || state.isClosed) return;
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
    await optimize(state, current);
    state.writesSinceOptimize = 0;
    state.rowsSinceReindex = 0;
    await prewarm(state, current);
  }
  // Compaction and index work leave the row count as it was.
  if (numRows < state.options.annThreshold || state.isClosed) return;
  const vector = state.hasVectorIndex ? await current.indexStats(VECTOR_INDEX) : undefined;
  if (!vector || (vector.numIndices ?? 1) > MAX_VECTOR_DELTAS || numRows >= 2 * state.rowsAtVectorIndexBuild) {
    await buildVectorIndex(state, current);
  }
}

/** (Re)starts the quiet-period timer after a write. */
export function scheduleSettle(state: IndexState, delayMs = state.options.settleAfterIdleMs): void {
  const { settleAfterIdleMs, onBackgroundError } = state.options;
  const { queue, lane } = state;
  if (settleAfterIdleMs === null || delayMs === null || state.isClosed) return;
  if (state.idleTimer) clearTimeout(state.idleTimer);
  state.idleTimer = setTimeout(() => {
    state.idleTimer = null;
    // Quiet means no write waiting or running and none finished for the whole period.
    const quietFor = Date.now() - queue.lastWriteAt;
    if (queue.pendingWrites > 0 || quietFor < settleAfterIdleMs) {
      scheduleSettle(state, queue.pendingWrites > 0 ? settleAfterIdleMs : settleAfterIdleMs - quietFor);
      return;
    }
    void lane.schedule(
      'settle',
      async () => {
        if (queue.pendingWrites === 0) await settleTable(state, 'idle');
      },
      (error) => onBackgroundError(error, 'settle'),
    );
  }, delayMs);
  state.idleTimer.unref();
}

/** Stops the quiet-period timer (on close, or before an explicit settle). */
export function cancelSettle(state: IndexState): void {
  if (state.idleTimer) clearTimeout(state.idleTimer);
  state.idleTimer = null;
}

/**
 * Background, in the maintenance lane (writes go on meanwhile): ANN index past the threshold,
 * rebuilt when the table doubled; full-text index refresh; periodic optimize.
 */
export function scheduleMaintenance(state: IndexState, current: Table, rowCount: number): void {
  const { annThreshold, reindexEveryRows, optimizeEveryWrites, onBackgroundError } = state.options;
  const { lane } = state;
  scheduleSettle(state);
  const needsVectorIndex = rowCount >= annThreshold && (!state.hasVectorIndex || rowCount >= 2 * state.rowsAtVectorIndexBuild);
  if (needsVectorIndex) {
    void lane.schedule(
      'vector index build',
      async () => {
        if (state.isClosed) return;
        if (!state.hasVectorIndex || (await current.countRows()) >= 2 * state.rowsAtVectorIndexBuild) await buildVectorIndex(state, current);
      },
      (error) => onBackgroundError(error, 'vector index build'),
    );
  }
  if (state.rowsSinceReindex >= Math.max(reindexEveryRows, rowCount / 20)) {
    state.rowsSinceReindex = 0;
    void lane.schedule('full-text index rebuild', () => buildScalarIndexes(state, current), (error) => onBackgroundError(error, 'full-text index rebuild'));
  }
  if (state.writesSinceOptimize >= optimizeEveryWrites) {
    state.writesSinceOptimize = 0;
    void lane.schedule('optimize', () => optimize(state, current), (error) => onBackgroundError(error, 'optimize'));
  }
}
