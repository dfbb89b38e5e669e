import type { Table } from '@lancedb/lancedb';
import { Field, FixedSizeList, Float32, Schema, Utf8 } from 'apache-arrow';
import {
  assertReembedWrite,
  sameFingerprint,
  type EmbedderFingerprint,
  type ReembedPendingRecord,
  type ReembedProgress,
  type ReembeddedVector,
} from '@memory-agents/core/adapter';
import { META_EMBEDDER_DIMENSIONS, META_EMBEDDER_ID, recordReader, rowsToArrow, sqlString, tableSchema, toRow, type Row } from './rows.js';
import { guard, type IndexState } from './state.js';
import { adopt, createScalarIndexes, openCommitted } from './table.js';
import { cancelSettle, scheduleMaintenance } from './maintenance.js';

/**
 * Re-embedding (issue 39) on LanceDB. A table's vector column has fixed dimensions, so a new
 * generation is a new table:
 * - while a re-embed runs, the target vectors live in a side table `<name>__reembed` (`id`, the
 *   columns `deleteBy` filters on, `vector` of the target's dimensions; the target fingerprint in
 *   its schema metadata). Writes keep it a subset of the records: an upsert drops the side rows of
 *   the ids it replaces, a delete the side rows it matches, a vector is written only for a stored id;
 * - the switch streams every record into a new table `<name>__g<time>` with its target vector (in
 *   batches: bounded memory), builds its full-text and scalar indexes, then points the one-row
 *   table `<name>__current` at it (one LanceDB commit: the switch), adopts it and drops the side
 *   table and the old one. An index opened later reads the pointer first; leftovers of a switch
 *   cut short (a new table never pointed at, an old one not dropped, a side table of the target
 *   that became current) are dropped when it opens.
 */

const SIDE = '__reembed';
const POINTER = '__current';
const GENERATION = '__g';
/** Ids compared with the side table per query. */
const ID_CHUNK = 1000;

/** Where the current generation lives: the pointer's table, else the configured name. */
export async function currentTableName(state: IndexState, names: readonly string[]): Promise<string> {
  const base = state.options.tableName;
  if (!names.includes(base + POINTER)) return base;
  const pointer = await openCommitted(state.connection!, base + POINTER);
  if (!pointer) return base;
  try {
    const [row] = await pointer.query().limit(1).toArray();
    return typeof row?.name === 'string' ? row.name : base;
  } finally {
    pointer.close();
  }
}

/** Opens the side table of a re-embed in progress, and drops what a switch cut short left behind. */
export async function openReembed(state: IndexState, names: readonly string[]): Promise<void> {
  const base = state.options.tableName;
  const connection = state.connection!;
  for (const name of names) {
    // A generation table not pointed at (a switch cut short before its pointer, or after it the
    // old one); the configured name only once the pointer moved away from it.
    const stale = name.startsWith(base + GENERATION) || (name === base && names.includes(base + POINTER));
    if (stale && name !== state.tableName) await connection.dropTable(name);
  }
  if (!names.includes(base + SIDE)) return;
  const side = await openCommitted(connection, base + SIDE);
  const target = side ? fingerprintOf((await side.schema()).metadata) : null;
  if (!side || !state.fingerprint || !target || sameFingerprint(target, state.fingerprint)) {
    side?.close();
    await connection.dropTable(base + SIDE);
    return;
  }
  state.side = side;
  state.target = target;
}

function fingerprintOf(metadata: Map<string, string>): EmbedderFingerprint | null {
  const id = metadata.get(META_EMBEDDER_ID);
  const dimensions = Number(metadata.get(META_EMBEDDER_DIMENSIONS));
  return id && dimensions > 0 ? { id, dimensions } : null;
}

/** The side table's schema: what `deleteBy` filters on, and the target vector. */
function sideSchema(target: EmbedderFingerprint): Schema {
  const utf8 = (name: string, nullable = false) => new Field(name, new Utf8(), nullable);
  return new Schema(
    [utf8('id'), utf8('agent_id'), utf8('thread_id'), utf8('observation_id'), utf8('source_id', true), new Field('vector', new FixedSizeList(target.dimensions, new Field('item', new Float32(), true)), false)],
    new Map([
      [META_EMBEDDER_ID, target.id],
      [META_EMBEDDER_DIMENSIONS, String(target.dimensions)],
    ]),
  );
}

async function dropSide(state: IndexState): Promise<void> {
  state.side?.close();
  state.side = null;
  state.target = null;
  const name = state.options.tableName + SIDE;
  if ((await state.connection!.tableNames()).includes(name)) await state.connection!.dropTable(name);
}

export function beginReembed(state: IndexState, next: EmbedderFingerprint): Promise<void> {
  return state.queue.write(() =>
    guard('beginReembed', async () => {
      if (!state.table || !state.fingerprint || sameFingerprint(state.target, next)) return;
      await dropSide(state);
      if (sameFingerprint(state.fingerprint, next)) return;
      state.side = await state.connection!.createEmptyTable(state.options.tableName + SIDE, sideSchema(next), { mode: 'overwrite' });
      state.target = { id: next.id, dimensions: next.dimensions };
    }),
  );
}

export function reembedProgress(state: IndexState): Promise<ReembedProgress | null> {
  return guard('reembedProgress', async () => {
    const { side, target, table, fingerprint } = state;
    if (!side || !target || !table || !fingerprint) return null;
    const [done, total] = await Promise.all([side.countRows(), table.countRows()]);
    return { from: { ...fingerprint }, to: { ...target }, done, total };
  });
}

/**
 * The smallest `count` ids greater than `after`, streamed from the table's `id` column (no
 * ordered scan in LanceDB: one pass over the ids, keeping at most 2 × `count` of them).
 */
async function smallestIds(table: Table, after: string | null, count: number): Promise<string[]> {
  let kept: string[] = [];
  const query = table.query().select(['id']);
  if (after !== null) query.where(`id > ${sqlString(after)}`);
  for await (const batch of query) {
    const column = batch.getChild('id')!;
    for (let i = 0; i < batch.numRows; i++) kept.push(String(column.get(i)));
    if (kept.length > count * 2) kept = kept.sort(compareIds).slice(0, count);
  }
  return kept.sort(compareIds).slice(0, count);
}

const compareIds = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const idList = (ids: readonly string[]) => `id IN (${ids.map(sqlString).join(', ')})`;

export function reembedPending(state: IndexState, limit: number, after: string | null): Promise<ReembedPendingRecord[]> {
  return guard('reembedPending', async () => {
    const { side, table } = state;
    if (!side || !table || limit <= 0) return [];
    let cursor = after;
    const wanted = Math.floor(limit);
    for (;;) {
      // Candidates in id order; those with a side row are done. After a restart the done ones
      // come first: each pass skips up to 4 × limit of them.
      const candidates = await smallestIds(table, cursor, Math.max(wanted * 4, 256));
      if (candidates.length === 0) return [];
      const done = new Set<string>();
      for (let start = 0; start < candidates.length; start += ID_CHUNK) {
        const rows = await side.query().where(idList(candidates.slice(start, start + ID_CHUNK))).select(['id']).toArray();
        for (const row of rows) done.add(String(row.id));
      }
      const pending = candidates.filter((id) => !done.has(id)).slice(0, wanted);
      if (pending.length > 0) {
        const rows = await table.query().where(idList(pending)).select(['id', 'agent_id', 'text']).toArray();
        return rows
          .map((row: Record<string, unknown>) => ({ id: String(row.id), agentId: String(row.agent_id), text: String(row.text) }))
          .sort((a: ReembedPendingRecord, b: ReembedPendingRecord) => compareIds(a.id, b.id));
      }
      cursor = candidates.at(-1)!;
    }
  });
}

export function writeReembedded(state: IndexState, given: EmbedderFingerprint, vectors: readonly ReembeddedVector[]): Promise<void> {
  return state.queue.write(() =>
    guard('writeReembedded', async () => {
      assertReembedWrite(state.fingerprint, state.target, given, vectors);
      const { side, table } = state;
      if (!side || !table || vectors.length === 0) return;
      const byId = new Map(vectors.map((entry) => [entry.id, entry.vector]));
      const ids = [...byId.keys()];
      const schema = sideSchema(state.target!);
      for (let start = 0; start < ids.length; start += ID_CHUNK) {
        const chunk = ids.slice(start, start + ID_CHUNK);
        // Only stored ids: the side table stays a subset of the records.
        const stored = await table.query().where(idList(chunk)).select(['id', 'agent_id', 'thread_id', 'observation_id', 'source_id']).toArray();
        if (stored.length === 0) continue;
        const rows = stored.map((row: Record<string, unknown>) => ({
          id: String(row.id),
          agent_id: String(row.agent_id),
          thread_id: String(row.thread_id),
          observation_id: String(row.observation_id),
          source_id: row.source_id === null || row.source_id === undefined ? null : String(row.source_id),
          vector: byId.get(String(row.id))!,
        }));
        await side.delete(idList(rows.map((row: { id: string }) => row.id)));
        await side.add(rowsToArrow(rows as unknown as Row[], schema));
      }
    }),
  );
}

/** An upsert replaced these ids (called in the write queue): their target vectors are stale. */
export async function forgetReembedded(state: IndexState, ids: readonly string[]): Promise<void> {
  if (!state.side) return;
  for (let start = 0; start < ids.length; start += ID_CHUNK) await state.side.delete(idList(ids.slice(start, start + ID_CHUNK)));
}

/** A delete removed the records matching `where` (called in the write queue): their target vectors go too. */
export async function deleteReembedded(state: IndexState, where: string): Promise<void> {
  if (state.side) await state.side.delete(where);
}

export function finishReembed(state: IndexState, given: EmbedderFingerprint): Promise<boolean> {
  return state.queue.write(() =>
    guard('finishReembed', async () => {
      const { side, target, table, connection } = state;
      if (!side || !target || !table || !sameFingerprint(target, given)) return false;
      // The side table holds only stored ids, so equal counts mean nothing is pending.
      const total = await table.countRows();
      if ((await side.countRows()) !== total) return false;
      cancelSettle(state);
      const base = state.options.tableName;
      const name = `${base}${GENERATION}${Date.now().toString(36)}`;
      const schema = tableSchema(target);
      const next = await connection!.createEmptyTable(name, schema, { mode: 'overwrite' });
      const reader = recordReader(state.hasHitColumn);
      const columns = reader.recordColumns.filter((column) => column !== 'vector');
      // Streamed: one batch of records (and their new vectors) in memory at a time.
      for await (const batch of table.query().select([...columns])) {
        const records = batch.toArray().map((row: Record<string, unknown>) => reader.readRecord({ ...rowObject(row, columns), vector: new Float32Array(0) }));
        for (let start = 0; start < records.length; start += ID_CHUNK) {
          const chunk = records.slice(start, start + ID_CHUNK);
          const found = await side.query().where(idList(chunk.map((record) => record.id))).select(['id', 'vector']).toArray();
          const vectorOf = new Map(found.map((row: Record<string, unknown>) => [String(row.id), toVector(row.vector)]));
          const rows = chunk.map((record) => {
            const vector = vectorOf.get(record.id);
            if (!vector) throw new Error(`lancedbMemoryIndex: no re-embedded vector for ${record.id}`);
            return toRow({ ...record, vector });
          });
          await next.add(rowsToArrow(rows, schema));
        }
      }
      await createScalarIndexes(next);
      // The switch: one commit of the pointer.
      await connection!.createTable(base + POINTER, [{ name }], { mode: 'overwrite' });
      const oldName = state.tableName;
      state.tableName = name;
      state.listCache.clear();
      state.agentShares.clear();
      await adopt(state, next);
      state.writesSinceOptimize = 0;
      state.rowsSinceReindex = 0;
      await dropSide(state);
      table.close();
      await connection!.dropTable(oldName);
      scheduleMaintenance(state, next, total);
      return true;
    }),
  );
}

/** A row of a streamed batch as a plain object of `columns`. */
function rowObject(row: Record<string, unknown>, columns: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const column of columns) out[column] = row[column];
  return out;
}

function toVector(value: unknown): Float32Array {
  const array = (value as { toArray?: () => unknown } | null)?.toArray?.();
  if (array instanceof Float32Array) return array.slice();
  return Float32Array.from((array ?? value) as ArrayLike<number>);
}
