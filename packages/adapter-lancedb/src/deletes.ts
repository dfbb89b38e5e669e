import type { MemoryDeleteRequest } from '@memory-agents/core/adapter';
import { purgeDeleted, scheduleSettle } from './maintenance.js';
import { sqlString } from './rows.js';
import { agentFilter, guard, inList, type IndexState } from './state.js';
import type { ListEntry } from './list-cache.js';
import { LaneClosedError } from './maintenance-lane.js';
import { buildScalarIndexes } from './table.js';
import { deleteReembedded } from './reembed.js';

/**
 * `MemoryIndex.deleteBy`, run in the write queue. Resolves once no byte of a removed record
 * remains in the table's directory (old versions and fragments cleaned: {@link purgeDeleted}).
 */
export async function deleteRecords(state: IndexState, { agentId, threadId, sourceId, observationId, ids, threadIds }: MemoryDeleteRequest): Promise<void> {
  // An empty id or thread list matches nothing (port contract), not every record.
  if (ids !== undefined && ids.length === 0) return;
  if (threadIds !== undefined && threadIds.length === 0) return;
  await state.queue.write(() =>
    guard('deleteBy', async () => {
      const table = state.table;
      if (!table) return;
      const before = await table.countRows();
      const clauses = [agentFilter(agentId)];
      if (threadId !== undefined) clauses.push(`thread_id = ${sqlString(threadId)}`);
      if (observationId !== undefined) clauses.push(`observation_id = ${sqlString(observationId)}`);
      if (sourceId !== undefined) clauses.push(`source_id = ${sqlString(sourceId)}`);
      if (threadIds !== undefined) clauses.push(inList('thread_id', threadIds));
      // A delete rewrites deletion files of fragments a concurrent compaction may be rewriting.
      await state.lane.rewrite(async () => {
        const threads = threadIds === undefined ? null : new Set(threadIds);
        const matches = (entry: ListEntry) =>
          (threadId === undefined || entry.threadId === threadId) &&
          (observationId === undefined || entry.observationId === observationId) &&
          (sourceId === undefined || entry.sourceId === sourceId) &&
          (threads === null || threads.has(entry.threadId));
        if (ids === undefined) {
          // A delete of nothing is noted neither (lists then check the table again): only a
          // version known to be this commit is applied.
          const { version, numDeletedRows } = await table.delete(clauses.join(' AND '));
          if (numDeletedRows > 0) state.listCache.noteDelete(version, agentId, matches);
          if (numDeletedRows > 0) await deleteReembedded(state, clauses.join(' AND '));
        } else {
          // Bounded IN lists, as in `get`.
          const unique = [...new Set(ids)];
          for (let start = 0; start < unique.length; start += 1000) {
            const chunk = unique.slice(start, start + 1000);
            const where = [...clauses, `id IN (${chunk.map(sqlString).join(', ')})`].join(' AND ');
            const { version, numDeletedRows } = await table.delete(where);
            const chosen = new Set(chunk);
            if (numDeletedRows > 0) state.listCache.noteDelete(version, agentId, (entry) => chosen.has(entry.id) && matches(entry));
            if (numDeletedRows > 0) await deleteReembedded(state, where);
          }
        }
      });
      state.writesSinceOptimize++;
      scheduleSettle(state);
      // Deleted rows keep counting in the full-text statistics until the index is rebuilt, which
      // skews every agent's BM25 ranking; rebuild here once a deletion is a noticeable share.
      const after = await table.countRows();
      const deleted = before - after;
      if (deleted > 0 && deleted >= Math.max(1, after / 100) && after > 0) {
        state.rowsSinceReindex = 0;
        // In the lane, after any build running there (closing drops it: the rows are gone anyway).
        await state.lane.run('full-text index rebuild', () => buildScalarIndexes(state, table)).catch((error: unknown) => {
          if (!(error instanceof LaneClosedError)) throw error;
        });
      }
      // Erasure: the removed rows' bytes leave the directory before the delete resolves.
      if (deleted > 0 && !state.isClosed) await purgeDeleted(state, table);
    }),
  );
}
