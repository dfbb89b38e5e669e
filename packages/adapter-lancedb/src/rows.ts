import { Bool, Field, FixedSizeList, Float32, Int32, RecordBatch, Schema, Struct, Table as ArrowTable, Utf8, makeData, vectorFromArray } from 'apache-arrow';
import { ServiceError } from '@memory-agents/core';
import {
  analyze,
  canonicalIso,
  duplicateKey,
  indexedText,
  memoryRecordDefaults,
  memorySourceColumns,
  memorySourceFromColumns,
  type EmbedderFingerprint,
  type MemoryHitRecord,
  type MemoryRecord,
} from '@memory-agents/core/adapter';

/** One table row: a memory record as columns. */
export type Row = {
  id: string;
  agent_id: string;
  organization_id: string;
  text: string;
  keywords: string;
  /** Analyzed terms (core's `analyze`), space-joined: the FTS index sees exactly core's analyzer. */
  terms: string;
  vector: Float32Array;
  speaker: string | null;
  occurred_at: string | null;
  created_at: string;
  source_kind: string;
  thread_id: string;
  observation_id: string;
  turn_index: number;
  source_id: string | null;
  page: number | null;
  filename: string | null;
  /**
   * The record as a search hit carries it (`MemoryHitRecord`, JSON): a search reads this one
   * column instead of fifteen (schema version 2; tables made by version 1 have no such column).
   */
  hit: string;
  // The memory record v2 (schema version 3; added to older tables with their defaults on open).
  /** `provenance.writer` ('unknown' on rows written before). */
  writer: string;
  job_id: string | null;
  span_start: number | null;
  span_end: number | null;
  /** `alsoFrom` as JSON ('[]' on rows written before). */
  also_from: string;
  /** `validFrom` in canonical ISO form (`toISOString`), so filters compare strings. */
  valid_from: string | null;
  /** `validTo` in canonical ISO form; null while current. */
  valid_to: string | null;
  superseded_by: string | null;
  suspicious: boolean;
  /** core's `duplicateKey(record)` (schema version 4; NULL on rows written before, never merged into). */
  duplicate_key: string | null;
  /** `expiresAt` in canonical ISO form, null for never (schema version 5, issue 42; NULL on rows written before). */
  expires_at: string | null;
};

/**
 * The v2 columns in table order, each with the SQL value a table made before them gets when they
 * are added on open (LanceDB `addColumns`): the port's defaults for rows written before.
 */
export const V2_COLUMNS: readonly { name: keyof Row; valueSql: string }[] = [
  { name: 'writer', valueSql: "'unknown'" },
  { name: 'job_id', valueSql: 'CAST(NULL AS STRING)' },
  { name: 'span_start', valueSql: 'CAST(NULL AS INT)' },
  { name: 'span_end', valueSql: 'CAST(NULL AS INT)' },
  { name: 'also_from', valueSql: "'[]'" },
  // NULLIF keeps the column nullable (a COALESCE with the non-null created_at would not be).
  { name: 'valid_from', valueSql: "NULLIF(COALESCE(occurred_at, created_at), '')" },
  { name: 'valid_to', valueSql: 'CAST(NULL AS STRING)' },
  { name: 'superseded_by', valueSql: 'CAST(NULL AS STRING)' },
  { name: 'suspicious', valueSql: 'false' },
];

/** Columns added after the v2 ones (schema version 4), with the value rows written before get. */
export const KEY_COLUMNS: readonly { name: keyof Row; valueSql: string }[] = [{ name: 'duplicate_key', valueSql: 'CAST(NULL AS STRING)' }];

/** Columns added after the duplicate key (schema version 5, expiry, issue 42): rows written before never expire. */
export const EXPIRY_COLUMNS: readonly { name: keyof Row; valueSql: string }[] = [{ name: 'expires_at', valueSql: 'CAST(NULL AS STRING)' }];

/** The columns a record is read back from (everything but `terms` and `hit`). */
export const RECORD_COLUMNS = [
  'id', 'agent_id', 'organization_id', 'text', 'keywords', 'vector', 'speaker', 'occurred_at', 'created_at',
  'source_kind', 'thread_id', 'observation_id', 'turn_index', 'source_id', 'page', 'filename',
  ...V2_COLUMNS.map((column) => column.name),
  'expires_at',
];

/** The columns a search hit is read from: a record without its vector (the port's `MemoryHitRecord`). */
export const HIT_COLUMNS = RECORD_COLUMNS.filter((name) => name !== 'vector');

/** How a table's records are read: from the `hit` column when it has one, else from the record columns. */
export type RecordReader = {
  /** Columns of a hit (no vector). */
  hitColumns: readonly string[];
  readHit: (row: Record<string, unknown>) => MemoryHitRecord;
  /** Columns of a whole record (vector included). */
  recordColumns: readonly string[];
  readRecord: (row: Record<string, unknown>) => MemoryRecord;
};

export function recordReader(hasHitColumn: boolean): RecordReader {
  return hasHitColumn
    ? { hitColumns: ['hit'], readHit: hitFromPayload, recordColumns: ['hit', 'vector'], readRecord: fromRow }
    : { hitColumns: HIT_COLUMNS, readHit: hitFromRow, recordColumns: RECORD_COLUMNS, readRecord: fromRow };
}

export const META_EMBEDDER_ID = 'memory_agents.embedder_id';
export const META_EMBEDDER_DIMENSIONS = 'memory_agents.embedder_dimensions';
const META_SCHEMA_VERSION = 'memory_agents.schema_version';

/** Which optional column groups a table has: `hit` (version 2 on), the v2 record columns (version 3 on), `duplicate_key` (version 4 on), `expires_at` (version 5 on). */
export type SchemaShape = { hit: boolean; v2: boolean; keys?: boolean; expiry?: boolean };

/**
 * The table's schema; the embedder fingerprint is part of its metadata. `hit: false` is the
 * schema of a table created before the `hit` column (version 1), which such a table keeps;
 * `v2: false` one created before the memory record v2 columns (versions 1 and 2), which get them
 * added, at the end, when the table is opened.
 */
export function tableSchema(fingerprint: EmbedderFingerprint, shape: SchemaShape = { hit: true, v2: true, keys: true, expiry: true }): Schema {
  const hitColumn = shape.hit;
  const utf8 = (name: string, nullable = false) => new Field(name, new Utf8(), nullable);
  return new Schema(
    [
      utf8('id'), utf8('agent_id'), utf8('organization_id'), utf8('text'), utf8('keywords'), utf8('terms'),
      new Field('vector', new FixedSizeList(fingerprint.dimensions, new Field('item', new Float32(), true)), false),
      utf8('speaker', true), utf8('occurred_at', true), utf8('created_at'),
      utf8('source_kind'), utf8('thread_id'), utf8('observation_id'), new Field('turn_index', new Int32(), false),
      utf8('source_id', true), new Field('page', new Int32(), true), utf8('filename', true),
      ...(hitColumn ? [utf8('hit')] : []),
      ...(shape.v2
        ? [
            utf8('writer'), utf8('job_id', true), new Field('span_start', new Int32(), true), new Field('span_end', new Int32(), true),
            utf8('also_from'), utf8('valid_from', true), utf8('valid_to', true), utf8('superseded_by', true), new Field('suspicious', new Bool(), false),
          ]
        : []),
      ...(shape.v2 && shape.keys ? [utf8('duplicate_key', true)] : []),
      ...(shape.v2 && shape.keys && shape.expiry ? [utf8('expires_at', true)] : []),
    ],
    // The fingerprint lives in the table's own schema metadata, so it is created atomically with
    // the table: two processes racing to create it cannot record different embedders.
    new Map([
      [META_EMBEDDER_ID, fingerprint.id],
      [META_EMBEDDER_DIMENSIONS, String(fingerprint.dimensions)],
      [META_SCHEMA_VERSION, shape.v2 && shape.keys && shape.expiry ? '5' : shape.v2 && shape.keys ? '4' : shape.v2 ? '3' : hitColumn ? '2' : '1'],
    ]),
  );
}

/** A SQL string literal for a Lance (DataFusion) filter: single quotes doubled, NUL rejected. */
/** The where clause of one agent's rows. */
export const agentFilter = (agentId: string) => `agent_id = ${sqlString(agentId)}`;

/** `column IN (…)` of quoted values (the caller makes sure the list is not empty). */
export const inList = (column: string, values: readonly string[]) => `${column} IN (${[...new Set(values)].map(sqlString).join(', ')})`;

export function sqlString(value: string): string {
  if (value.includes('\u0000')) throw new ServiceError('invalid_request', 'identifier contains a NUL character');
  return `'${value.replaceAll("'", "''")}'`;
}

export function toRow(record: MemoryRecord): Row {
  const columns: Omit<Row, 'hit' | 'duplicate_key'> = {
    id: record.id,
    agent_id: record.agentId,
    organization_id: record.organizationId,
    text: record.text,
    keywords: record.keywords,
    terms: analyze(indexedText(record)).join(' '),
    vector: record.vector,
    speaker: record.speaker,
    occurred_at: record.occurredAt,
    created_at: record.createdAt,
    ...memorySourceColumns(record.source),
    writer: record.provenance.writer,
    job_id: record.provenance.jobId,
    span_start: record.provenance.span?.start ?? null,
    span_end: record.provenance.span?.end ?? null,
    also_from: JSON.stringify(record.alsoFrom),
    valid_from: record.validFrom === null ? null : canonicalIso(record.validFrom),
    valid_to: record.validTo === null ? null : canonicalIso(record.validTo),
    superseded_by: record.supersededBy,
    suspicious: record.suspicious,
    expires_at: record.expiresAt === null ? null : canonicalIso(record.expiresAt),
  };
  // Built from the columns, so a hit read from `hit` equals one read from the columns, except that
  // it keeps validity as given (the columns hold it canonical, for filters).
  const hit: MemoryHitRecord = { ...hitFromRow(columns), validFrom: record.validFrom, validTo: record.validTo, expiresAt: record.expiresAt };
  return { ...columns, hit: JSON.stringify(hit), duplicate_key: duplicateKey(record) };
}

/**
 * A search hit's record from the `hit` column. A row written before the v2 fields carries none of
 * them in its JSON: they read back as the port's defaults (which the added columns hold too).
 */
export function hitFromPayload(row: Record<string, unknown>): MemoryHitRecord {
  const hit = JSON.parse(String(row.hit)) as MemoryHitRecord;
  if (hit.provenance === undefined) return { ...hit, ...memoryRecordDefaults(hit) };
  return hit.expiresAt === undefined ? { ...hit, expiresAt: null } : hit;
}

/**
 * The rows as one Arrow record batch of `schema`, built column by column: the vectors are copied
 * into one Float32Array for the fixed-size-list column. (LanceDB's `makeArrowTable` over row
 * objects converts every float through a generic builder: ~5 ms against ~1 ms for 100 rows.)
 */
export function rowsToArrow(rows: readonly Row[], schema: Schema): ArrowTable {
  const children = schema.fields.map((field) => {
    if (field.name === 'vector') {
      const dimensions = (field.type as FixedSizeList).listSize;
      const flat = new Float32Array(rows.length * dimensions);
      rows.forEach((row, i) => flat.set(row.vector, i * dimensions));
      const child = makeData({ type: new Float32(), length: flat.length, nullCount: 0, data: flat });
      return makeData({ type: field.type as FixedSizeList, length: rows.length, nullCount: 0, child });
    }
    const name = field.name as keyof Row;
    return vectorFromArray(
      rows.map((row) => row[name]),
      field.type,
    ).data[0]!;
  });
  const data = makeData({ type: new Struct(schema.fields), length: rows.length, nullCount: 0, children });
  return new ArrowTable(schema, [new RecordBatch(schema, data)]);
}

/**
 * A copy of a vector cell. Arrow hands out a `Vector` whose `toArray()` is a view of the column's
 * own Float32Array (copied here in one step); iterating it element by element costs far more.
 */
function toFloat32(value: { toArray?: () => Float32Array } | Iterable<number> | null): Float32Array {
  if (value === null || value === undefined) return new Float32Array(0);
  if (value instanceof Float32Array) return value.slice();
  if (typeof (value as { toArray?: unknown }).toArray === 'function') {
    const array = (value as { toArray: () => unknown }).toArray();
    if (array instanceof Float32Array) return array.slice();
    return Float32Array.from(array as ArrayLike<number>);
  }
  return Float32Array.from(value as Iterable<number>);
}

/** A vector cell as a Float32Array without copying when Arrow allows (for reading, not keeping). */
export function vectorView(value: unknown): Float32Array {
  if (value instanceof Float32Array) return value;
  const array = (value as { toArray?: () => unknown } | null)?.toArray?.();
  return array instanceof Float32Array ? array : toFloat32(value as Iterable<number> | null);
}

export function fromRow(row: Record<string, unknown>): MemoryRecord {
  const vectorValue = row.vector as { toArray?: () => Float32Array } | Iterable<number> | null;
  return { ...(row.hit === undefined ? hitFromRow(row) : hitFromPayload(row)), vector: toFloat32(vectorValue) };
}

/** A search hit's record from a row of {@link HIT_COLUMNS} (a vector column, if read, is left out). */
export function hitFromRow(row: Record<string, unknown>): MemoryHitRecord {
  const base = {
    id: String(row.id),
    organizationId: String(row.organization_id),
    agentId: String(row.agent_id),
    text: String(row.text),
    keywords: String(row.keywords),
    speaker: (row.speaker as string | null) ?? null,
    occurredAt: (row.occurred_at as string | null) ?? null,
    source: memorySourceFromColumns(row),
    createdAt: String(row.created_at),
  };
  if (row.writer === undefined) return { ...base, ...memoryRecordDefaults(base) };
  const spanStart = row.span_start as number | null;
  const spanEnd = row.span_end as number | null;
  return {
    ...base,
    provenance: {
      writer: String(row.writer),
      jobId: (row.job_id as string | null) ?? null,
      span: spanStart === null || spanStart === undefined || spanEnd === null || spanEnd === undefined ? null : { start: Number(spanStart), end: Number(spanEnd) },
    },
    alsoFrom: JSON.parse(String(row.also_from ?? '[]')) as MemoryHitRecord['alsoFrom'],
    validFrom: (row.valid_from as string | null) ?? null,
    validTo: (row.valid_to as string | null) ?? null,
    supersededBy: (row.superseded_by as string | null) ?? null,
    suspicious: Boolean(row.suspicious),
    expiresAt: (row.expires_at as string | null | undefined) ?? null,
  };
}
