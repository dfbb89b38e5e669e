import type { Table } from '@lancedb/lancedb';
import { type MemoryIndex } from '@memory-agents/core';
import {
  assertEmbedderMatches,
  assertVectorDimensions,
  copiedRecord,
  dedupeRecordsById,
  type MemoryUpsertRequest,
} from '@memory-agents/core/adapter';
import { scheduleMaintenance } from './maintenance.js';
import { recordReader, rowsToArrow, sqlString, toRow, type Row } from './rows.js';
import { agentFilter, guard, type IndexState } from './state.js';
import { ensureScalarIndexes, ensureTable } from './table.js';
import { forgetReembedded } from './reembed.js';

/** `MemoryIndex.upsert`, run in the write queue: creates the table on the first write. */
export async function upsertRecords(state: IndexState, { records, embedder, newIds }: MemoryUpsertRequest): Promise<void> {
  await state.queue.write(() =>
    guard('upsert', async () => {
      assertEmbedderMatches(state.fingerprint, embedder);
      if (records.length === 0) return;
      assertVectorDimensions(records, embedder.dimensions);
      const current = await ensureTable(state, embedder);
      // Another process may have created the table with another embedder meanwhile.
      assertEmbedderMatches(state.fingerprint, embedder);
      const rows = dedupeRecordsById(records).map(toRow);
      await writeRows(state, current, rows, newIds === true);
      // A re-embed in progress: a replaced record needs its target vector again (new ids have none).
      if (newIds !== true) await forgetReembedded(state, rows.map((row) => row.id));
      await ensureScalarIndexes(state, current);
      state.writesSinceOptimize++;
      state.rowsSinceReindex += rows.length;
      scheduleMaintenance(state, current, await current.countRows());
    }),
  );
}

/** `MemoryIndex.copyAgent`, run in the write queue. */
export async function copyAgentRecords(state: IndexState, request: Parameters<MemoryIndex['copyAgent']>[0]): Promise<{ copied: number }> {
  const { fromAgentId, toAgentId, toOrganizationId, newId } = request;
  return state.queue.write(() =>
    guard('copyAgent', async () => {
      const current = state.table;
      if (!current) return { copied: 0 };
      const reader = recordReader(state.hasHitColumn);
      const rows = await current.query().where(agentFilter(fromAgentId)).select([...reader.recordColumns]).toArray();
      if (rows.length === 0) return { copied: 0 };
      const originals = rows.map((row: Record<string, unknown>) => reader.readRecord(row));
      // supersededBy follows its target to the copy.
      const newIds = new Map(originals.map((record) => [record.id, newId()]));
      const copies = originals.map((record) => toRow({ ...copiedRecord(record, newIds), agentId: toAgentId, organizationId: toOrganizationId }));
      await writeRows(state, current, copies, false);
      state.writesSinceOptimize++;
      state.rowsSinceReindex += copies.length;
      scheduleMaintenance(state, current, await current.countRows());
      return { copied: copies.length };
    }),
  );
}

/**
 * Appends the rows in batches of `batchSize`, one commit each. A batch of new ids is a plain
 * append; a merge joins the batch against the whole table's ids and costs more as the table
 * grows. Rows the caller declares new (`newIds`: learning's fresh turns) skip even the lookup
 * of existing ids (an `id IN (…)` query of ~5–30 ms per batch on a busy server).
 */
export async function writeRows(state: IndexState, current: Table, rows: readonly Row[], newIds: boolean): Promise<void> {
  const { batchSize } = state.options;
  for (let start = 0; start < rows.length; start += batchSize) {
    const slice = rows.slice(start, start + batchSize);
    const batch = rowsToArrow(slice, state.schema!);
    let version: number;
    if (!newIds && (await anyExists(current, slice))) {
      // A merge rewrites fragments that a concurrent compaction may be rewriting too.
      ({ version } = await state.lane.rewrite(() => current.mergeInsert('id').whenMatchedUpdateAll().whenNotMatchedInsertAll().execute(batch)));
    } else {
      ({ version } = await current.add(batch));
    }
    state.listCache.noteUpsert(version, slice);
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
