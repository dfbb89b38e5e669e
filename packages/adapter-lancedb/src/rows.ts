import { Field, FixedSizeList, Float32, Int32, RecordBatch, Schema, Struct, Table as ArrowTable, Utf8, makeData, vectorFromArray } from 'apache-arrow';
import { ServiceError } from '@memory-agents/core';
import {
  analyze,
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
};

/** The columns a record is read back from (everything but `terms` and `hit`). */
export const RECORD_COLUMNS = [
  'id', 'agent_id', 'organization_id', 'text', 'keywords', 'vector', 'speaker', 'occurred_at', 'created_at',
  'source_kind', 'thread_id', 'observation_id', 'turn_index', 'source_id', 'page', 'filename',
];

/** The columns a search hit is read from: a record without its vector (the port's `MemoryHitRecord`). */
export const HIT_COLUMNS = RECORD_COLUMNS.filter((name) => name !== 'vector');

export const META_EMBEDDER_ID = 'memory_agents.embedder_id';
export const META_EMBEDDER_DIMENSIONS = 'memory_agents.embedder_dimensions';
const META_SCHEMA_VERSION = 'memory_agents.schema_version';

/**
 * The table's schema; the embedder fingerprint is part of its metadata. `hitColumn: false` is the
 * schema of a table created before the `hit` column (version 1), which such a table keeps.
 */
export function tableSchema(fingerprint: EmbedderFingerprint, hitColumn = true): Schema {
  const utf8 = (name: string, nullable = false) => new Field(name, new Utf8(), nullable);
  return new Schema(
    [
      utf8('id'), utf8('agent_id'), utf8('organization_id'), utf8('text'), utf8('keywords'), utf8('terms'),
      new Field('vector', new FixedSizeList(fingerprint.dimensions, new Field('item', new Float32(), true)), false),
      utf8('speaker', true), utf8('occurred_at', true), utf8('created_at'),
      utf8('source_kind'), utf8('thread_id'), utf8('observation_id'), new Field('turn_index', new Int32(), false),
      utf8('source_id', true), new Field('page', new Int32(), true), utf8('filename', true),
      ...(hitColumn ? [utf8('hit')] : []),
    ],
    // The fingerprint lives in the table's own schema metadata, so it is created atomically with
    // the table: two processes racing to create it cannot record different embedders.
    new Map([
      [META_EMBEDDER_ID, fingerprint.id],
      [META_EMBEDDER_DIMENSIONS, String(fingerprint.dimensions)],
      [META_SCHEMA_VERSION, hitColumn ? '2' : '1'],
    ]),
  );
}

/** A SQL string literal for a Lance (DataFusion) filter: single quotes doubled, NUL rejected. */
export function sqlString(value: string): string {
  if (value.includes('\u0000')) throw new ServiceError('invalid_request', 'identifier contains a NUL character');
  return `'${value.replaceAll("'", "''")}'`;
}

export function toRow(record: MemoryRecord): Row {
  const columns: Omit<Row, 'hit'> = {
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
  };
  // Built from the columns, so a hit read from `hit` equals one read from the columns.
  return { ...columns, hit: JSON.stringify(hitFromRow(columns)) };
}

/** A search hit's record from the `hit` column. */
export function hitFromPayload(row: Record<string, unknown>): MemoryHitRecord {
  return JSON.parse(String(row.hit)) as MemoryHitRecord;
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
  return { ...hitFromRow(row), vector: toFloat32(vectorValue) };
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
  return { ...base, ...memoryRecordDefaults(base) };
}
