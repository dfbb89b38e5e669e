import {
  memorySourceFromColumns,
  type EmbedderFingerprint,
  type MemoryHitRecord,
  type MemoryRecord,
  type MemoryRecordV2Fields,
  type MemorySourceRef,
} from '@memory-agents/core/adapter';
import type { SqlClient } from '../sql-client.js';
import { parseVector } from './vectors.js';

/** pgvector `vector`, or little-endian float32 bytes where pgvector is missing. */
export type VectorKind = 'pgvector' | 'bytea';

/** The index's tables, schema-qualified and quoted. */
export type IndexTables = {
  schema: string;
  records: string;
  meta: string;
  agents: string;
  terms: string;
  /** One row per (record, distinct term), keyed by integers (`term_id`, `rec`): the full-text channel's postings. */
  postings: string;
};

/** What the parts of the index share: the client, the tables, and what `init` learned. */
export type IndexState = {
  client: SqlClient;
  tables: IndexTables;
  vectorKind: VectorKind;
  fingerprint: EmbedderFingerprint | null;
  hasAnnIndex: boolean;
};

export function quoteIdentifier(name: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(name)) throw new TypeError(`postgresMemoryIndex: invalid schema name ${JSON.stringify(name)}`);
  return `"${name}"`;
}

export function indexTables(schemaName: string): IndexTables {
  const schema = quoteIdentifier(schemaName);
  return {
    schema,
    records: `${schema}.memory_index_records`,
    meta: `${schema}.memory_index_meta`,
    agents: `${schema}.memory_index_agents`,
    terms: `${schema}.memory_index_terms`,
    postings: `${schema}.memory_index_postings`,
  };
}

/** BM25's term-frequency part (k1 1.2, b 0.75) as SQL: the order of a term's postings. */
export const impact = (tf: string, length: string, averageLength: string) =>
  `(${tf}::float8 * 2.2 / (${tf} + 1.2 * (0.25 + 0.75 * ${length} / coalesce(${averageLength}, greatest(${length}, 1)))))::real`;

/** The migrations, written for the vector column type chosen when the first one runs. */
export function migrations(tables: IndexTables, vectorKind: VectorKind) {
  const { records: table, meta, agents, terms, postings } = tables;
  return [
    {
      version: 1,
      name: 'memory index records',
      sql: `
        CREATE TABLE ${meta} (key text PRIMARY KEY, value text NOT NULL);
        INSERT INTO ${meta} (key, value) VALUES ('vector_kind', '${vectorKind}');
        CREATE TABLE ${table} (
          id text PRIMARY KEY,
          agent_id text NOT NULL,
          organization_id text NOT NULL,
          text text NOT NULL,
          keywords text NOT NULL,
          -- core's analyze(text || ' ' || keywords), duplicates kept: BM25 term frequencies.
          terms text[] NOT NULL,
          term_count integer NOT NULL,
          embedding ${vectorKind === 'pgvector' ? 'vector' : 'bytea'} NOT NULL,
          embedding_norm double precision NOT NULL,
          speaker text,
          occurred_at text,
          created_at text NOT NULL,
          source_kind text NOT NULL,
          thread_id text NOT NULL,
          observation_id text NOT NULL,
          turn_index integer NOT NULL,
          source_id text,
          page integer,
          filename text
        );
        CREATE INDEX memory_index_records_agent ON ${table} (agent_id) INCLUDE (term_count);
        CREATE INDEX memory_index_records_terms ON ${table} USING gin (terms);
        CREATE INDEX memory_index_records_thread ON ${table} (agent_id, thread_id);
        CREATE INDEX memory_index_records_observation ON ${table} (agent_id, observation_id);
        CREATE INDEX memory_index_records_source ON ${table} (agent_id, source_id) WHERE source_id IS NOT NULL;
      `,
    },
    {
      version: 2,
      name: 'memory index agent versions',
      // Bumped in every write transaction of an agent (the row lock also serializes writers of
      // one agent), so a process can tell whether its cached vectors of the agent are current.
      sql: `CREATE TABLE ${agents} (agent_id text PRIMARY KEY, version bigint NOT NULL);`,
    },
    {
      version: 3,
      name: 'memory index term statistics',
      // BM25's corpus statistics kept per agent by every write (under the agent's version row
      // lock), so a search reads N, the average length and each query term's document frequency
      // from a few rows instead of counting them over every record that shares a term.
      sql: `
        ALTER TABLE ${agents} ADD COLUMN row_count bigint NOT NULL DEFAULT 0, ADD COLUMN term_total bigint NOT NULL DEFAULT 0;
        INSERT INTO ${agents} AS a (agent_id, version, row_count, term_total)
          SELECT agent_id, 1, count(*), coalesce(sum(term_count), 0) FROM ${table} GROUP BY agent_id
          ON CONFLICT (agent_id) DO UPDATE SET version = a.version + 1, row_count = excluded.row_count, term_total = excluded.term_total;
        CREATE TABLE ${terms} (agent_id text NOT NULL, term text NOT NULL, df integer NOT NULL, PRIMARY KEY (agent_id, term));
        INSERT INTO ${terms} (agent_id, term, df)
          SELECT r.agent_id, u.term, count(*) FROM ${table} r CROSS JOIN LATERAL (SELECT DISTINCT unnest(r.terms) AS term) u GROUP BY 1, 2;
      `,
    },
    {
      version: 4,
      name: 'memory index postings',
      // The full-text channel reads postings instead of records (issue 15 profile: the ~5,000
      // candidates of a search at 100k touched most pages of the records table, ~2 kB a row with
      // the vector inline, and of a narrow (id, terms) copy too). One row per record and distinct
      // term, read index-only from (agent_id, term, impact DESC) INCLUDE (id, tf, term_count):
      // a term's records come best first, so a common term is read only as far as needed.
      // `impact` is BM25's term-frequency part with the agent's average length when written (an
      // order only: scores use the current average). The records keep `terms` (the write path
      // reads replaced terms there); their GIN index is no longer read. Writers of a version before
      // this migration do not maintain the postings: stop them before starting a process that applies it.
      sql: `
        CREATE TABLE ${postings} (agent_id text NOT NULL, term text NOT NULL, impact real NOT NULL, id text NOT NULL, tf integer NOT NULL, term_count integer NOT NULL);
        INSERT INTO ${postings} (agent_id, term, impact, id, tf, term_count)
          SELECT r.agent_id, u.term, ${impact('u.tf', 'r.term_count', `(SELECT greatest(a.term_total::float8 / greatest(a.row_count, 1), 1) FROM ${agents} a WHERE a.agent_id = r.agent_id)`)},
            r.id, u.tf, r.term_count
          FROM ${table} r CROSS JOIN LATERAL (SELECT term, count(*)::int AS tf FROM unnest(r.terms) AS term GROUP BY term) u;
        CREATE INDEX memory_index_postings_term ON ${postings} (agent_id, term, impact DESC) INCLUDE (id, tf, term_count);
        CREATE INDEX memory_index_postings_id ON ${postings} (id, term) INCLUDE (tf, term_count);
        DROP INDEX IF EXISTS ${tables.schema}.memory_index_records_terms;
      `,
    },
    {
      version: 5,
      name: 'memory index integer postings',
      // Postings keyed by integers (issue 15, upserts): a record's `rec` and a term's `term_id`
      // (per agent and term, kept in the statistics table) instead of the agent, term and record id
      // as text. Each memory writes ~26 postings into two indexes; with 8-byte keys those indexes
      // are ~2.3x smaller and take their inserts ~2.5x faster (docs/benchmarks.md). The term index
      // no longer needs the agent: a term id belongs to one agent. Writers of a version before this
      // migration do not maintain these postings: stop them before starting a process that applies it.
      sql: `
        ALTER TABLE ${table} ADD COLUMN rec bigint GENERATED BY DEFAULT AS IDENTITY;
        CREATE UNIQUE INDEX memory_index_records_rec ON ${table} (rec);
        ALTER TABLE ${terms} ADD COLUMN term_id bigint GENERATED BY DEFAULT AS IDENTITY;
        CREATE UNIQUE INDEX memory_index_terms_id ON ${terms} (term_id);
        CREATE TABLE ${tables.schema}.memory_index_postings_v5 (term_id bigint NOT NULL, rec bigint NOT NULL, impact real NOT NULL, tf integer NOT NULL, term_count integer NOT NULL);
        INSERT INTO ${tables.schema}.memory_index_postings_v5 (term_id, rec, impact, tf, term_count)
          SELECT t.term_id, r.rec, p.impact, p.tf, p.term_count FROM ${postings} p
          JOIN ${terms} t ON t.agent_id = p.agent_id AND t.term = p.term JOIN ${table} r ON r.id = p.id;
        DROP TABLE ${postings};
        ALTER TABLE ${tables.schema}.memory_index_postings_v5 RENAME TO memory_index_postings;
        CREATE INDEX memory_index_postings_term ON ${postings} (term_id, impact DESC) INCLUDE (rec, tf, term_count);
        CREATE INDEX memory_index_postings_rec ON ${postings} (rec, term_id) INCLUDE (tf, term_count);
      `,
    },
    {
      version: 6,
      name: 'memory record v2',
      // Provenance, alsoFrom, validity and the suspicious flag (issues 30/32/33). Rows written
      // before get the port's defaults: writer 'unknown', no job or span, alsoFrom [], valid from
      // occurred_at ?? created_at, current, not suspicious. Validity stays text as given (it
      // round-trips); comparisons go through memory_index_ts, which reads an unparseable value as
      // NULL instead of failing the query. "Current only" (valid_to IS NULL) is every search's
      // filter: the superseded records of an agent are found through a partial index.
      sql: `
        ALTER TABLE ${table}
          ADD COLUMN writer text NOT NULL DEFAULT 'unknown',
          ADD COLUMN job_id text,
          ADD COLUMN span_start integer,
          ADD COLUMN span_end integer,
          ADD COLUMN also_from jsonb NOT NULL DEFAULT '[]'::jsonb,
          ADD COLUMN valid_from text,
          ADD COLUMN valid_to text,
          ADD COLUMN superseded_by text,
          ADD COLUMN suspicious boolean NOT NULL DEFAULT false;
        UPDATE ${table} SET valid_from = coalesce(occurred_at, created_at);
        CREATE FUNCTION ${tables.schema}.memory_index_ts(value text) RETURNS timestamptz LANGUAGE plpgsql IMMUTABLE AS $body$
        BEGIN
          RETURN value::timestamptz;
        EXCEPTION WHEN others THEN
          RETURN NULL;
        END
        $body$;
        CREATE INDEX memory_index_records_history ON ${table} (agent_id) INCLUDE (rec) WHERE valid_to IS NOT NULL;
        CREATE INDEX memory_index_records_listed ON ${table} (agent_id, created_at COLLATE "C" DESC, id COLLATE "C" DESC);
      `,
    },
    {
      version: 7,
      name: 'memory index duplicate keys',
      // Near-duplicates merged when learned (issue 33): core's duplicateKey(record), written with
      // every record, looked up once per learning batch among the agent's current records. Rows
      // written before have none (NULL) and are never merged into.
      sql: `
        ALTER TABLE ${table} ADD COLUMN duplicate_key text;
        CREATE INDEX memory_index_records_duplicates ON ${table} (agent_id, duplicate_key) WHERE duplicate_key IS NOT NULL AND valid_to IS NULL;
      `,
    },
    {
      version: 8,
      name: 'memory index re-embedding',
      // Switching embedders on a live index (issue 39): the target generation's vector beside the
      // current one, NULL until written (any dimensions: the column type has none). The target's
      // fingerprint is the meta row 'reembed_target'. At the switch the current columns are
      // dropped and these renamed in their place (reembed.ts), then added again, empty.
      sql: `ALTER TABLE ${table} ADD COLUMN reembedding ${vectorKind === 'pgvector' ? 'vector' : 'bytea'}, ADD COLUMN reembedding_norm double precision;`,
    },
    {
      version: 9,
      name: 'memory expiry',
      // When a memory expires (issue 42): canonical ISO text (written through canonicalIso, so it
      // compares as a string with the search's canonical \`now\`), NULL for never (rows written
      // before). The agent's expiring records, usually few, are read through a partial index, as
      // the superseded ones are.
      sql: `
        ALTER TABLE ${table} ADD COLUMN expires_at text;
        CREATE INDEX memory_index_records_expiring ON ${table} (agent_id) INCLUDE (rec, expires_at) WHERE expires_at IS NOT NULL;
      `,
    },
  ];
}

/** SQL reading an ISO date-time column as timestamptz (NULL when unparseable), for validity and range filters. */
export const timestampOf = (tables: IndexTables, column: string) => `${tables.schema}.memory_index_ts(${column})`;

const COLUMN_NAMES = [
  'id', 'agent_id', 'organization_id', 'text', 'keywords', 'embedding', 'speaker', 'occurred_at', 'created_at',
  'source_kind', 'thread_id', 'observation_id', 'turn_index', 'source_id', 'page', 'filename',
  'writer', 'job_id', 'span_start', 'span_end', 'also_from', 'valid_from', 'valid_to', 'superseded_by', 'suspicious',
  'expires_at',
];
/** The record columns, optionally qualified by a table alias; vectors come back as text (both kinds). */
export const columns = (alias = '') =>
  COLUMN_NAMES.map((name) => (name === 'embedding' ? `${alias}embedding::text AS embedding_text` : `${alias}${name}`)).join(', ');
export const COLUMNS = columns();
/** The columns of a search hit: the record without its vector, plus its stored norm. */
export const hitColumns = (alias = '') =>
  [...COLUMN_NAMES.filter((name) => name !== 'embedding').map((name) => `${alias}${name}`), `${alias}embedding_norm`].join(', ');
export const HIT_COLUMNS = hitColumns();

export type RecordRow = {
  id: string;
  agent_id: string;
  organization_id: string;
  text: string;
  keywords: string;
  embedding_text: string;
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
  writer: string;
  job_id: string | null;
  span_start: number | null;
  span_end: number | null;
  /** jsonb: parsed by the driver (a string only if a driver hands jsonb back as text). */
  also_from: MemorySourceRef[] | string;
  valid_from: string | null;
  valid_to: string | null;
  superseded_by: string | null;
  suspicious: boolean;
  expires_at: string | null;
};

/** A row of {@link hitColumns}. */
export type HitRow = Omit<RecordRow, 'embedding_text'> & { embedding_norm: number };

/** A search hit's record (no vector) from a row of {@link hitColumns}. */
export function hitFromRow(row: HitRow): MemoryHitRecord {
  return {
    id: row.id,
    organizationId: row.organization_id,
    agentId: row.agent_id,
    text: row.text,
    keywords: row.keywords,
    speaker: row.speaker,
    occurredAt: row.occurred_at,
    source: memorySourceFromColumns(row),
    createdAt: row.created_at,
    ...v2FromRow(row),
  };
}

/** The v2 fields of a row. */
function v2FromRow(row: Omit<RecordRow, 'embedding_text'>): MemoryRecordV2Fields {
  return {
    provenance: {
      writer: row.writer,
      jobId: row.job_id,
      span: row.span_start === null || row.span_end === null ? null : { start: Number(row.span_start), end: Number(row.span_end) },
    },
    alsoFrom: typeof row.also_from === 'string' ? (JSON.parse(row.also_from) as MemorySourceRef[]) : row.also_from,
    validFrom: row.valid_from,
    validTo: row.valid_to,
    supersededBy: row.superseded_by,
    suspicious: Boolean(row.suspicious),
    expiresAt: row.expires_at ?? null,
  };
}

export function fromRow(row: RecordRow): MemoryRecord {
  return {
    id: row.id,
    organizationId: row.organization_id,
    agentId: row.agent_id,
    text: row.text,
    keywords: row.keywords,
    vector: parseVector(row.embedding_text),
    speaker: row.speaker,
    occurredAt: row.occurred_at,
    source: memorySourceFromColumns(row),
    createdAt: row.created_at,
    ...v2FromRow(row),
  };
}
