import {
  EmbedderMismatchError,
  type EmbedderFingerprint,
  type MemoryHit,
  type MemoryHitRecord,
  type MemoryListRequest,
  type MemoryListResult,
  type MemoryPatch,
  type MemoryRecord,
  type MemorySearchRequest,
  type MemorySourceRef,
} from '../ports/memory-index.js';

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

/** Whether two fingerprints name the same embedder (id and dimensions). */
export function sameFingerprint(a: EmbedderFingerprint | null, b: EmbedderFingerprint | null): boolean {
  if (a === null || b === null) return a === b;
  return a.id === b.id && a.dimensions === b.dimensions;
}

/**
 * Checks a `writeReembedded` request before anything is written: `EmbedderMismatchError` unless
 * `given` is the re-embed in progress (`target`), a `RangeError` when a vector has other dimensions.
 */
export function assertReembedWrite(current: EmbedderFingerprint | null, target: EmbedderFingerprint | null, given: EmbedderFingerprint, vectors: readonly { id: string; vector: Float32Array }[]): void {
  if (target === null || !sameFingerprint(target, given)) throw new EmbedderMismatchError(target ?? current ?? given, given);
  for (const { id, vector } of vectors) {
    if (!(vector instanceof Float32Array) || vector.length !== target.dimensions) {
      throw new RangeError(`memory record ${id}: vector must be a Float32Array of ${target.dimensions} dimensions`);
    }
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
  filter: { agentId: string; threadId?: string; sourceId?: string; observationId?: string; ids?: readonly string[]; threadIds?: readonly string[] },
): boolean {
  if (record.agentId !== filter.agentId) return false;
  if (filter.ids !== undefined && !filter.ids.includes(record.id)) return false;
  if (filter.threadIds !== undefined && !filter.threadIds.includes(record.source.threadId)) return false;
  if (filter.threadId !== undefined && record.source.threadId !== filter.threadId) return false;
  if (filter.observationId !== undefined && record.source.observationId !== filter.observationId) return false;
  if (filter.sourceId !== undefined && (record.source.kind !== 'document' || record.source.sourceId !== filter.sourceId)) return false;
  return true;
}

/** A deep copy whose vector and source can be changed by the caller without touching the index. */
export function cloneMemoryRecord(record: MemoryRecord): MemoryRecord {
  return { ...copyV2(record), source: { ...record.source }, vector: new Float32Array(record.vector) };
}

/** A copy whose nested v2 fields (provenance, span, alsoFrom) are not shared with `record`. */
function copyV2<T extends MemoryHitRecord>(record: T): T {
  return {
    ...record,
    provenance: { ...record.provenance, span: record.provenance.span ? { ...record.provenance.span } : null },
    alsoFrom: record.alsoFrom.map((source) => ({ ...source })),
  };
}

/** A record as a search hit carries it (no vector), its source copied. */
export function hitRecord(record: MemoryRecord): MemoryHitRecord {
  const { vector: _vector, ...rest } = record;
  return { ...copyV2(rest), source: { ...record.source } };
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

/** `provenance.writer` of records written before provenance was recorded. */
export const UNKNOWN_WRITER = 'unknown';

/** The v2 fields of a memory record (provenance, validity, flags). */
export type MemoryRecordV2Fields = Pick<MemoryRecord, 'provenance' | 'alsoFrom' | 'validFrom' | 'validTo' | 'supersededBy' | 'suspicious' | 'expiresAt'>;

/**
 * The v2 fields a record written before they existed reads back with: writer 'unknown', no job,
 * no span, learned from its source only, valid from `occurredAt ?? createdAt`, current, not
 * suspicious. Also the starting point of a record built by hand (tests, benches).
 */
export function memoryRecordDefaults(record: Pick<MemoryRecord, 'occurredAt' | 'createdAt'>): MemoryRecordV2Fields {
  return {
    provenance: { writer: UNKNOWN_WRITER, jobId: null, span: null },
    alsoFrom: [],
    validFrom: record.occurredAt ?? record.createdAt,
    validTo: null,
    supersededBy: null,
    suspicious: false,
    expiresAt: null,
  };
}

/** An ISO date-time in the one canonical form (`toISOString`), so stored values compare as strings; throws a `RangeError` when unparseable. */
export function canonicalIso(value: string): string {
  const time = Date.parse(value);
  if (Number.isNaN(time)) throw new RangeError(`not an ISO date-time: ${JSON.stringify(value)}`);
  return new Date(time).toISOString();
}

/**
 * Whether a record is valid at `asOf` (absent: current, `validTo === null`; else `validFrom` null or
 * <= asOf, and `validTo` null or > asOf).
 */
export function isValidAt(record: Pick<MemoryRecord, 'validFrom' | 'validTo'>, asOf?: string): boolean {
  if (asOf === undefined) return record.validTo === null;
  const at = Date.parse(asOf);
  if (record.validFrom !== null && Date.parse(record.validFrom) > at) return false;
  if (record.validTo !== null && Date.parse(record.validTo) <= at) return false;
  return true;
}

/** Whether a record has not expired at `now` (absent: expiry not looked at; issue 42). */
export function isUnexpiredAt(record: Pick<MemoryRecord, 'expiresAt'>, now?: string): boolean {
  if (now === undefined || record.expiresAt === null) return true;
  return Date.parse(record.expiresAt) > Date.parse(now);
}

/** Whether a record passes the filters of a search (validity, expiry and `threadIds`). */
export function matchesSearchFilter(record: MemoryHitRecord, request: Pick<MemorySearchRequest, 'asOf' | 'threadIds' | 'now'>): boolean {
  if (request.threadIds !== undefined && !request.threadIds.includes(record.source.threadId)) return false;
  if (!isUnexpiredAt(record, request.now)) return false;
  return isValidAt(record, request.asOf);
}

/** Whether a record matches every filter of a `list` request (the cursor aside). */
export function matchesListFilter(record: MemoryHitRecord, request: MemoryListRequest): boolean {
  if (record.agentId !== request.agentId) return false;
  if (!request.includeHistory && record.validTo !== null) return false;
  if (!isUnexpiredAt(record, request.now)) return false;
  if (request.expiredBefore !== undefined && (record.expiresAt === null || Date.parse(record.expiresAt) > Date.parse(request.expiredBefore))) return false;
  if (request.threadIds !== undefined && !request.threadIds.includes(record.source.threadId)) return false;
  if (request.sourceId !== undefined && (record.source.kind !== 'document' || record.source.sourceId !== request.sourceId)) return false;
  if (request.observationId !== undefined && record.source.observationId !== request.observationId) return false;
  if (request.speaker !== undefined && record.speaker !== request.speaker) return false;
  const learned = Date.parse(record.createdAt);
  if (request.learnedAfter !== undefined && !(learned >= Date.parse(request.learnedAfter))) return false;
  if (request.learnedBefore !== undefined && !(learned < Date.parse(request.learnedBefore))) return false;
  if (request.occurredAfter !== undefined || request.occurredBefore !== undefined) {
    if (record.occurredAt === null) return false;
    const occurred = Date.parse(record.occurredAt);
    if (request.occurredAfter !== undefined && !(occurred >= Date.parse(request.occurredAfter))) return false;
    if (request.occurredBefore !== undefined && !(occurred < Date.parse(request.occurredBefore))) return false;
  }
  if (request.textContains !== undefined && !record.text.toLowerCase().includes(request.textContains.toLowerCase())) return false;
  return true;
}

/** Where a `list` page ends: the last record's `createdAt` and `id`. */
export type MemoryListPosition = { createdAt: string; id: string };

/** The opaque cursor of a list position (base64url JSON). */
export function encodeListCursor(position: MemoryListPosition): string {
  return Buffer.from(JSON.stringify({ c: position.createdAt, i: position.id }), 'utf8').toString('base64url');
}

/** The position of a cursor made by {@link encodeListCursor}; throws a `RangeError` for anything else. */
export function decodeListCursor(cursor: string): MemoryListPosition {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw new RangeError('memory list cursor is not one this index made');
  }
  const value = parsed as { c?: unknown; i?: unknown } | null;
  if (typeof value !== 'object' || value === null || typeof value.c !== 'string' || typeof value.i !== 'string' || Number.isNaN(Date.parse(value.c))) {
    throw new RangeError('memory list cursor is not one this index made');
  }
  return { createdAt: value.c, id: value.i };
}

/** List order: `createdAt` descending (as instants), then `id` descending (code-unit order). */
export function compareNewestFirst(a: MemoryListPosition, b: MemoryListPosition): number {
  const at = Date.parse(a.createdAt);
  const bt = Date.parse(b.createdAt);
  if (at !== bt) return bt - at;
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}

/** Whether a record comes after the cursor's position in list order. */
export function isAfterPosition(record: MemoryListPosition, position: MemoryListPosition): boolean {
  return compareNewestFirst(record, position) > 0;
}

/**
 * One page of `list` over records already in memory (the reference behaviour every index must
 * match): filter, order newest first, skip to the cursor, cut at `limit`.
 */
export function listPage(records: Iterable<MemoryHitRecord>, request: MemoryListRequest): MemoryListResult {
  const position = request.cursor ? decodeListCursor(request.cursor) : null;
  const matching: MemoryHitRecord[] = [];
  for (const record of records) {
    if (!matchesListFilter(record, request)) continue;
    if (position && !isAfterPosition(record, position)) continue;
    matching.push(record);
  }
  matching.sort(compareNewestFirst);
  return pageOf(matching, request.limit);
}

/** The first `limit` of records already in list order, with the next cursor when more follow. */
export function pageOf(ordered: MemoryHitRecord[], limit: number): MemoryListResult {
  const size = Math.max(1, Math.floor(limit));
  const records = ordered.slice(0, size);
  const last = records[records.length - 1];
  return { records, nextCursor: ordered.length > size && last ? encodeListCursor(last) : null };
}

/** A record with a patch applied (absent patch fields keep their values). */
export function applyMemoryPatch<T extends MemoryHitRecord>(record: T, patch: MemoryPatch): T {
  return {
    ...record,
    ...(patch.validTo !== undefined ? { validTo: patch.validTo } : {}),
    ...(patch.supersededBy !== undefined ? { supersededBy: patch.supersededBy } : {}),
    ...(patch.suspicious !== undefined ? { suspicious: patch.suspicious } : {}),
    ...(patch.alsoFrom !== undefined ? { alsoFrom: patch.alsoFrom.map((source) => ({ ...source })) } : {}),
    ...(patch.expiresAt !== undefined ? { expiresAt: patch.expiresAt } : {}),
  };
}

/** Last patch wins per id, so a backend applies one change per record. */
export function mergePatches(patches: readonly MemoryPatch[]): MemoryPatch[] {
  const byId = new Map<string, MemoryPatch>();
  for (const patch of patches) byId.set(patch.id, { ...byId.get(patch.id), ...stripUndefined(patch) });
  return [...byId.values()];
}

function stripUndefined(patch: MemoryPatch): MemoryPatch {
  return Object.fromEntries(Object.entries(patch).filter(([, value]) => value !== undefined)) as MemoryPatch;
}

/**
 * A record as `copyAgent` writes it: its new id from `newIds` (old id -> new id), and `supersededBy`
 * pointing at the copy of the record that superseded it (kept as it is when that one was not copied).
 */
export function copiedRecord<T extends MemoryHitRecord>(record: T, newIds: ReadonlyMap<string, string>): T {
  const supersededBy = record.supersededBy === null ? null : (newIds.get(record.supersededBy) ?? record.supersededBy);
  return { ...record, id: newIds.get(record.id)!, supersededBy };
}
