import {
  applyMemoryPatch,
  canonicalIso,
  compareNewestFirst,
  decodeListCursor,
  encodeListCursor,
  isAfterPosition,
  mergePatches,
  type MemoryListPosition,
  type MemoryListRequest,
  type MemoryListResult,
  type MemoryUpdateRequest,
} from '@memory-agents/core/adapter';
import type { Table } from '@lancedb/lancedb';
import { buildAgentList, lowerBound, type AgentList, type ListEntry } from './list-cache.js';
import { scheduleMaintenance } from './maintenance.js';
import { hitRecordsById, recordsById } from './reads.js';
import { sqlString, toRow } from './rows.js';
import { agentFilter, guard, inList, type IndexState } from './state.js';
import { writeRows } from './writes.js';

/**
 * `MemoryIndex.list`. Lance queries have no ORDER BY, so pages come from the agent's ordered list
 * of narrow columns kept in memory (`list-cache.ts`: built by one column scan, brought along by
 * this instance's writes, rebuilt when the table version moved otherwise); only the page's records
 * are read, by id. A `textContains` filter reads the matching rows' positions from the table
 * instead ({@link listByQuery}).
 */
export async function listRecords(state: IndexState, request: MemoryListRequest): Promise<MemoryListResult> {
  return guard('list', async () => {
    const position = request.cursor ? decodeListCursor(request.cursor) : null;
    const current = state.table;
    if (!current || request.threadIds?.length === 0) return { records: [], nextCursor: null };
    if (request.textContains !== undefined) return listByQuery(state, current, request, position);
    const list = await agentList(state, current, request.agentId);
    const size = Math.max(1, Math.floor(request.limit));
    const matches = listFilter(request);
    const page: ListEntry[] = [];
    let more = false;
    const { entries } = list;
    // Entries are oldest first: walk back from the cursor's position (exclusive) or the end.
    let i = (position ? lowerBound(entries, { at: Date.parse(position.createdAt), id: position.id }) : entries.length) - 1;
    for (; i >= 0; i--) {
      const entry = entries[i]!;
      if (!matches(entry)) continue;
      if (page.length === size) {
        more = true;
        break;
      }
      page.push(entry);
    }
    const byId = await hitRecordsById(state, current, request.agentId, page.map((entry) => entry.id));
    const records = page.flatMap((entry) => {
      const record = byId.get(entry.id);
      return record ? [record] : [];
    });
    const last = page[page.length - 1];
    return { records, nextCursor: more && last ? encodeListCursor({ createdAt: new Date(last.at).toISOString(), id: last.id }) : null };
  });
}

/** The agent's list as of the table's current version, from the cache or one column scan. */
export async function agentList(state: IndexState, current: Table, agentId: string): Promise<AgentList> {
  const version = await current.version();
  const cached = state.listCache.get(agentId, version);
  if (cached) return cached;
  const built = await buildAgentList(current, agentId, version);
  state.listCache.set(agentId, built);
  return built;
}

/** The request's filters (all but `textContains`) over list entries. */
function listFilter(request: MemoryListRequest): (entry: ListEntry) => boolean {
  const bound = (value: string | undefined) => (value === undefined ? undefined : Date.parse(value));
  const [learnedAfter, learnedBefore, occurredAfter, occurredBefore] = [request.learnedAfter, request.learnedBefore, request.occurredAfter, request.occurredBefore].map(bound);
  const threads = request.threadIds === undefined ? null : new Set(request.threadIds);
  const now = bound(request.now);
  const expiredBefore = bound(request.expiredBefore);
  const { includeHistory, sourceId, observationId, speaker } = request;
  const occurredRange = occurredAfter !== undefined || occurredBefore !== undefined;
  return (entry) => {
    if (!includeHistory && !entry.current) return false;
    if (now !== undefined && entry.expires !== null && !(entry.expires > now)) return false;
    if (expiredBefore !== undefined && (entry.expires === null || entry.expires > expiredBefore)) return false;
    if (threads !== null && !threads.has(entry.threadId)) return false;
    if (sourceId !== undefined && entry.sourceId !== sourceId) return false;
    if (observationId !== undefined && entry.observationId !== observationId) return false;
    if (speaker !== undefined && entry.speaker !== speaker) return false;
    if (learnedAfter !== undefined && !(entry.at >= learnedAfter)) return false;
    if (learnedBefore !== undefined && !(entry.at < learnedBefore)) return false;
    if (occurredRange) {
      if (entry.occurred === null) return false;
      if (occurredAfter !== undefined && !(entry.occurred >= occurredAfter)) return false;
      if (occurredBefore !== undefined && !(entry.occurred < occurredBefore)) return false;
    }
    return true;
  };
}

/**
 * `list` with `textContains`: the matching rows' `id` and `created_at` are read with every filter
 * in the query (`where`) and ordered here; the createdAt/occurredAt ranges are checked on the read
 * values as instants, and a cursor narrows the query to rows at or before its position.
 */
async function listByQuery(state: IndexState, current: Table, request: MemoryListRequest, position: MemoryListPosition | null): Promise<MemoryListResult> {
  const clauses = [agentFilter(request.agentId)];
  if (!request.includeHistory) clauses.push('valid_to IS NULL');
  if (request.now !== undefined) clauses.push(`(expires_at IS NULL OR expires_at > ${sqlString(canonicalIso(request.now))})`);
  if (request.expiredBefore !== undefined) clauses.push(`(expires_at IS NOT NULL AND expires_at <= ${sqlString(canonicalIso(request.expiredBefore))})`);
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
