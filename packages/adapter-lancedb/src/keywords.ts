import type { MemoryKeywordsRequest } from '@memory-agents/core/adapter';
import { purgeDeleted, scheduleSettle } from './maintenance.js';
import { recordsById } from './reads.js';
import { toRow } from './rows.js';
import { guard, type IndexState } from './state.js';
import { writeRows } from './writes.js';

/**
 * `MemoryIndex.rewriteKeywords` (issue 41), run in the write queue: the records are rewritten whole
 * with their new keywords (one merge, so `terms` and the full-text index follow), then the old row
 * versions are purged as a delete purges them ({@link purgeDeleted}): no byte of the old keywords
 * stays in the directory once it resolves.
 */
export async function rewriteRecordKeywords(state: IndexState, { agentId, records }: MemoryKeywordsRequest): Promise<void> {
  const wanted = new Map(records.map((record) => [record.id, record.keywords]));
  if (wanted.size === 0) return;
  await state.queue.write(() =>
    guard('rewriteKeywords', async () => {
      const current = state.table;
      if (!current) return;
      const found = await recordsById(state, current, agentId, [...wanted.keys()]);
      const rows = [...found.values()].map((record) => toRow({ ...record, keywords: wanted.get(record.id)! }));
      if (rows.length === 0) return;
      await writeRows(state, current, rows, false);
      state.writesSinceOptimize++;
      scheduleSettle(state);
      if (!state.isClosed) await purgeDeleted(state, current);
    }),
  );
}
