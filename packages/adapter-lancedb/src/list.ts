import {
  applyMemoryPatch,
  canonicalIso,
  compareNewestFirst,
  decodeListCursor,
  encodeListCursor,
  isAfterPosition,
  mergePatches,
  type MemoryListRequest,
  type MemoryListResult,
  type MemoryUpdateRequest,
} from '@memory-agents/core/adapter';
import { scheduleMaintenance } from './maintenance.js';
import { hitRecordsById, recordsById } from './reads.js';
import { sqlString, toRow } from './rows.js';
import { agentFilter, guard, inList, type IndexState } from './state.js';
import { writeRows } from './writes.js';

/**
 * `MemoryIndex.list`. Lance queries have no ORDER BY: the filtered rows' `id` and `created_at`
 * (two narrow columns) are read and ordered here, and only the page's records are read by id.
 * Filters run in the query (`where`); the createdAt/occurredAt ranges are checked on the read
 * values as instants, and a cursor narrows the query to rows at or before its position.
 */
export async function listRecords(state: IndexState, request: MemoryListRequest): Promise<MemoryListResult> {
  return guard('list', async () => {
    const position = request.cursor ? decodeListCursor(request.cursor) : null;
    const current = state.table;
    if (!current || request.threadIds?.length === 0) return { records: [], nextCursor: null };
    const clauses = [agentFilter(request.agentId)];
    if (!request.includeHistory) clauses.push('valid_to IS NULL');
    if (request.threadIds !== undefined) clauses.push(inList('thread_id', request.threadIds));
    if (request.sourceId !== undefined) clauses.push(`source_id = ${sqlString(request.sourceId)}`);
    if (request.observationId !== undefined) clauses.push(`observation_id = ${sqlString(request.observationId)}`);
    if (request.speaker !== undefined) clauses.push(`speaker = ${sqlString(request.speaker)}`);
    // A literal, case-insensitive substring: strpos has no wildcards to escape.
    if (request.textContains !== undefined) clauses.push(`strpos(lower(text), lower(${sqlString(request.textContains)})) > 0`);
    if (request.occurredAfter !== undefined || request.occurredBefore !== undefined) clauses.push('occurred_at IS NOT NULL');
    // created_at is written by core in canonical form: a string comparison narrows the read; the
    // exact position check below decides.
    if (position) clauses.push(`created_at <= ${sqlString(canonicalIso(position.createdAt))}`);
    const rows: Record<string, unknown>[] = await current.query().where(clauses.join(' AND ')).select(['id', 'created_at', 'occurred_at']).toArray();
    const bound = (value: string | undefined) => (value === undefined ? undefined : Date.parse(value));
    const [learnedAfter, learnedBefore, occurredAfter, occurredBefore] = [request.learnedAfter, request.learnedBefore, request.occurredAfter, request.occurredBefore].map(bound);
    const candidates = rows
      .map((row) => ({ id: String(row.id), createdAt: String(row.created_at), occurredAt: (row.occurred_at as string | null) ?? null }))
      .filter((row) => {
        if (position && !isAfterPosition(row, position)) return false;
        const learned = Date.parse(row.createdAt);
        if (learnedAfter !== undefined && !(learned >= learnedAfter)) return false;
        if (learnedBefore !== undefined && !(learned < learnedBefore)) return false;
        if (row.occurredAt === null) return occurredAfter === undefined && occurredBefore === undefined;
        const occurred = Date.parse(row.occurredAt);
        if (occurredAfter !== undefined && !(occurred >= occurredAfter)) return false;
        if (occurredBefore !== undefined && !(occurred < occurredBefore)) return false;
        return true;
      })
      .sort(compareNewestFirst);
    const size = Math.max(1, Math.floor(request.limit));
    const page = candidates.slice(0, size);
    const byId = await hitRecordsById(state, current, request.agentId, page.map((row) => row.id));
    const records = page.flatMap((row) => {
      const record = byId.get(row.id);
      return record ? [record] : [];
    });
    const last = page[page.length - 1];
    return { records, nextCursor: candidates.length > size && last ? encodeListCursor(last) : null };
  });
}

/** `MemoryIndex.update`, run in the write queue: the patched records are rewritten whole (one merge). */
export async function updateRecords(state: IndexState, { agentId, patches }: MemoryUpdateRequest): Promise<void> {
  const merged = mergePatches(patches);
  if (merged.length === 0) return;
  await state.queue.write(() =>
    guard('update', async () => {
      const current = state.table;
      if (!current) return;
      const found = await recordsById(state, current, agentId, merged.map((patch) => patch.id));
      const rows = merged.flatMap((patch) => {
        const record = found.get(patch.id);
        return record ? [toRow(applyMemoryPatch(record, patch))] : [];
      });
      if (rows.length === 0) return;
      await writeRows(state, current, rows, false);
      state.writesSinceOptimize++;
      scheduleMaintenance(state, current, await current.countRows());
    }),
  );
}
