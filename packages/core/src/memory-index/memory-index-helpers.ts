import { EmbedderMismatchError, type EmbedderFingerprint, type MemoryHit, type MemoryHitRecord, type MemoryRecord, type MemorySourceRef } from '../ports/memory-index.js';

/**
 * Plumbing every `MemoryIndex` adapter shares, kept here once so backends agree on the details:
 * fingerprint comparison, hit order, cosine, and the deletion filter.
 */

/** Rejects with `EmbedderMismatchError` unless `given` equals `recorded` (id and dimensions). */
export function assertEmbedderMatches(recorded: EmbedderFingerprint | null, given: EmbedderFingerprint): void {
  if (recorded && (recorded.id !== given.id || recorded.dimensions !== given.dimensions)) {
    throw new EmbedderMismatchError(recorded, given);
  }
}

/** Throws a `RangeError` when a record's vector does not have `dimensions` finite entries. */
export function assertVectorDimensions(records: readonly MemoryRecord[], dimensions: number): void {
  for (const record of records) {
    if (!(record.vector instanceof Float32Array) || record.vector.length !== dimensions) {
      throw new RangeError(`memory record ${record.id}: vector must be a Float32Array of ${dimensions} dimensions`);
    }
  }
}

/** The port's hit order: score descending, ties by id ascending (code-unit order, like SQL `COLLATE "C"`). */
export function compareMemoryHits(a: MemoryHit, b: MemoryHit): number {
  if (a.score !== b.score) return b.score - a.score;
  return a.record.id < b.record.id ? -1 : a.record.id > b.record.id ? 1 : 0;
}

/** Cosine similarity; 0 when either vector is all zeros. */
export function cosineSimilarity(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  let normA = 0;
  let normB = 0;
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    dot += x * y;
    normA += x * x;
    normB += y * y;
  }
  if (normA === 0 || normB === 0) return 0;
  return dot / Math.sqrt(normA * normB);
}

/** Last record wins when one upsert call names the same id twice. */
export function dedupeRecordsById(records: readonly MemoryRecord[]): MemoryRecord[] {
  const byId = new Map<string, MemoryRecord>();
  for (const record of records) {
    byId.delete(record.id);
    byId.set(record.id, record);
  }
  return [...byId.values()];
}

/** The text the full-text channel indexes: the shown text plus the hidden keywords. */
export function indexedText(record: Pick<MemoryRecord, 'text' | 'keywords'>): string {
  return record.keywords ? `${record.text} ${record.keywords}` : record.text;
}

/** Whether `record` matches every given field of a `deleteBy` request. */
export function matchesDeleteFilter(
  record: MemoryRecord,
  filter: { agentId: string; threadId?: string; sourceId?: string; observationId?: string; ids?: readonly string[] },
): boolean {
  if (record.agentId !== filter.agentId) return false;
  if (filter.ids !== undefined && !filter.ids.includes(record.id)) return false;
  if (filter.threadId !== undefined && record.source.threadId !== filter.threadId) return false;
  if (filter.observationId !== undefined && record.source.observationId !== filter.observationId) return false;
  if (filter.sourceId !== undefined && (record.source.kind !== 'document' || record.source.sourceId !== filter.sourceId)) return false;
  return true;
}

/** A deep copy whose vector and source can be changed by the caller without touching the index. */
export function cloneMemoryRecord(record: MemoryRecord): MemoryRecord {
  return { ...record, source: { ...record.source }, vector: new Float32Array(record.vector) };
}

/** A record as a search hit carries it (no vector), its source copied. */
export function hitRecord(record: MemoryRecord): MemoryHitRecord {
  const { vector: _vector, ...rest } = record;
  return { ...rest, source: { ...record.source } };
}

/** A memory's source reference as flat columns, the way table-based indexes store it. */
export type MemorySourceColumns = {
  source_kind: 'turn' | 'document';
  thread_id: string;
  observation_id: string;
  turn_index: number;
  source_id: string | null;
  page: number | null;
  filename: string | null;
};

/** Flattens a source reference into columns (document fields null for a turn). */
export function memorySourceColumns(source: MemorySourceRef): MemorySourceColumns {
  return {
    source_kind: source.kind,
    thread_id: source.threadId,
    observation_id: source.observationId,
    turn_index: source.turnIndex,
    source_id: source.kind === 'document' ? source.sourceId : null,
    page: source.kind === 'document' ? source.page : null,
    filename: source.kind === 'document' ? source.filename : null,
  };
}

/** The source reference stored as columns by `memorySourceColumns` (values as a driver returns them). */
export function memorySourceFromColumns(row: Record<string, unknown>): MemorySourceRef {
  const base = { threadId: String(row.thread_id), observationId: String(row.observation_id), turnIndex: Number(row.turn_index) };
  if (row.source_kind !== 'document') return { kind: 'turn', ...base };
  return {
    kind: 'document',
    ...base,
    sourceId: String(row.source_id ?? ''),
    page: row.page === null || row.page === undefined ? null : Number(row.page),
    filename: String(row.filename ?? ''),
  };
}
