import type { Table } from '@lancedb/lancedb';
import type { MemoryHitRecord, MemoryRecord } from '@memory-agents/core/adapter';
import { recordReader, sqlString } from './rows.js';
import { agentFilter, type IndexState } from './state.js';

/** The agent's records with these ids, by id (btree lookups on `id`, in bounded IN lists). */
export function recordsById(state: IndexState, current: Table, agentId: string, ids: readonly string[]): Promise<Map<string, MemoryRecord>> {
  const reader = recordReader(state.hasHitColumn);
  return byIds(current, agentId, ids, reader.recordColumns, reader.readRecord);
}

/** The same as search hits carry them: without the vector column. */
export function hitRecordsById(state: IndexState, current: Table, agentId: string, ids: readonly string[]): Promise<Map<string, MemoryHitRecord>> {
  const reader = recordReader(state.hasHitColumn);
  return byIds(current, agentId, ids, reader.hitColumns, reader.readHit);
}

async function byIds<T extends { id: string }>(
  current: Table,
  agentId: string,
  ids: readonly string[],
  columns: readonly string[],
  read: (row: Record<string, unknown>) => T,
): Promise<Map<string, T>> {
  const found = new Map<string, T>();
  const unique = [...new Set(ids)];
  for (let start = 0; start < unique.length; start += 1000) {
    const list = unique.slice(start, start + 1000).map(sqlString).join(', ');
    const rows = await current.query().where(`${agentFilter(agentId)} AND id IN (${list})`).select([...columns]).toArray();
    for (const row of rows) {
      const record = read(row);
      found.set(record.id, record);
    }
  }
  return found;
}

/**
 * The agent's share of the table's rows, which decides how its searches filter. Counted (two index
 * lookups, under a millisecond) at most every 10 s and after every write of this instance; it only
 * steers the plan, and a stale share costs time, never results.
 */
export async function agentShare(state: IndexState, current: Table, agentId: string): Promise<number> {
  const { agentShares, queue } = state;
  const cached = agentShares.get(agentId);
  if (cached && cached.generation === queue.generation && Date.now() - cached.at < 10_000) return cached.share;
  const [rows, total] = await Promise.all([current.countRows(agentFilter(agentId)), current.countRows()]);
  const share = total === 0 ? 0 : rows / total;
  if (agentShares.size >= 10_000) agentShares.clear();
  agentShares.set(agentId, { share, at: Date.now(), generation: queue.generation });
  return share;
}
