import {
  EmbedderMismatchError,
  ServiceError,
  analyze,
  assertEmbedderMatches,
  assertVectorDimensions,
  compareMemoryHits,
  dedupeRecordsById,
  indexedText,
  memorySourceFromColumns,
  type EmbedderFingerprint,
  type MemoryHit,
  type MemoryIndex,
  type MemoryRecord,
  type MemorySearchRequest,
  type MemorySearchResult,
} from '@memory-agents/core';
import { migrate } from './migrate.js';
import type { SqlClient } from './sql-client.js';

/** Options of {@link postgresMemoryIndex}. */
export type PostgresMemoryIndexOptions = {
  /** The database (PGlite or PostgreSQL); the caller owns it and closes it. */
  client: SqlClient;
  /**
   * Schema holding the index's tables (created if missing).
   * @default 'public'
   */
  schema?: string;
  /**
   * Row count from which an HNSW (`vector_cosine_ops`) index is built in the background, with
   * pgvector only. `null` never builds one: search stays exact. PGlite defaults to `null`, since
   * building HNSW in WebAssembly takes minutes and gigabytes at 100k rows.
   * @default 50000 on PostgreSQL with pgvector, null on PGlite
   */
  annThreshold?: number | null;
  /**
   * Rows per `INSERT … SELECT FROM unnest(…)` statement of an upsert (all in one transaction).
   * @default 500
   */
  batchSize?: number;
  /**
   * Without pgvector, semantic search scans the agent's vectors in JS. They are cached per agent
   * in this process, up to this many rows in all (about 1.5 kB each at 384 dimensions), and
   * checked against a per-agent version on every search, so writes by other processes are seen.
   * 0 disables the cache (every search then loads the agent's vectors).
   * @default 200000
   */
  vectorCacheRows?: number;
  /**
   * Receives failures of background work (the HNSW build); those never fail a caller.
   * @default writes a warning to stderr
   */
  onBackgroundError?: (error: unknown, operation: string) => void;
};

/** BM25 parameters, the same as the in-memory index. */
const K1 = 1.2;
const B = 0.75;

/** pgvector `vector`, or little-endian float32 bytes where pgvector is missing. */
type VectorKind = 'pgvector' | 'bytea';

const COLUMN_NAMES = [
  'id', 'agent_id', 'organization_id', 'text', 'keywords', 'embedding', 'speaker', 'occurred_at', 'created_at',
  'source_kind', 'thread_id', 'observation_id', 'turn_index', 'source_id', 'page', 'filename',
];
/** The record columns, optionally qualified by a table alias; vectors come back as text (both kinds). */
const columns = (alias = '') =>
  COLUMN_NAMES.map((name) => (name === 'embedding' ? `${alias}embedding::text AS embedding_text` : `${alias}${name}`)).join(', ');
const COLUMNS = columns();

type RecordRow = {
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
};

function quoteIdentifier(name: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(name)) throw new TypeError(`postgresMemoryIndex: invalid schema name ${JSON.stringify(name)}`);
  return `"${name}"`;
}

/** The one migration, written for the vector column type chosen when it first runs. */
function migrations(schema: string, vectorKind: VectorKind) {
  const table = `${schema}.memory_index_records`;
  return [
    {
      version: 1,
      name: 'memory index records',
      sql: `
        CREATE TABLE ${schema}.memory_index_meta (key text PRIMARY KEY, value text NOT NULL);
        INSERT INTO ${schema}.memory_index_meta (key, value) VALUES ('vector_kind', '${vectorKind}');
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
      sql: `CREATE TABLE ${schema}.memory_index_agents (agent_id text PRIMARY KEY, version bigint NOT NULL);`,
    },
  ];
}

/** One agent's vectors, as of `version`: a dense slab with swap-remove, like the in-memory index. */
class CachedAgentVectors {
  ids: string[] = [];
  slotOf = new Map<string, number>();
  slab: Float32Array;
  norms: Float64Array;
  lastUsed = 0;

  constructor(
    readonly dimensions: number,
    public version: string,
    capacity: number,
  ) {
    this.slab = new Float32Array(Math.max(16, capacity) * dimensions);
    this.norms = new Float64Array(Math.max(16, capacity));
  }

  get size(): number {
    return this.ids.length;
  }

  set(id: string, vector: Float32Array, vectorNorm: number): void {
    let slot = this.slotOf.get(id);
    if (slot === undefined) {
      slot = this.ids.length;
      if ((slot + 1) * this.dimensions > this.slab.length) {
        const slab = new Float32Array(this.slab.length * 2);
        slab.set(this.slab);
        this.slab = slab;
        const norms = new Float64Array(this.norms.length * 2);
        norms.set(this.norms);
        this.norms = norms;
      }
      this.ids.push(id);
      this.slotOf.set(id, slot);
    }
    this.slab.set(vector.subarray(0, this.dimensions), slot * this.dimensions);
    this.norms[slot] = vectorNorm;
  }

  remove(id: string): void {
    const slot = this.slotOf.get(id);
    if (slot === undefined) return;
    const last = this.ids.length - 1;
    const lastId = this.ids[last]!;
    if (slot !== last) {
      this.slab.copyWithin(slot * this.dimensions, last * this.dimensions, (last + 1) * this.dimensions);
      this.norms[slot] = this.norms[last]!;
      this.ids[slot] = lastId;
      this.slotOf.set(lastId, slot);
    }
    this.ids.pop();
    this.slotOf.delete(id);
  }

  /** Exact top `limit` by cosine, ties by id ascending. */
  top(vector: Float32Array, queryNorm: number, limit: number): { id: string; score: number }[] {
    const d = this.dimensions;
    const query = Float64Array.from(vector);
    const slab = this.slab;
    const top: { id: string; score: number }[] = [];
    for (let slot = 0; slot < this.ids.length; slot++) {
      const rowNorm = this.norms[slot]!;
      let score = 0;
      if (rowNorm !== 0 && queryNorm !== 0) {
        let dot0 = 0;
        let dot1 = 0;
        const base = slot * d;
        let i = 0;
        for (; i + 1 < d; i += 2) {
          dot0 += query[i]! * slab[base + i]!;
          dot1 += query[i + 1]! * slab[base + i + 1]!;
        }
        if (i < d) dot0 += query[i]! * slab[base + i]!;
        score = (dot0 + dot1) / (rowNorm * queryNorm);
      }
      const id = this.ids[slot]!;
      if (top.length === limit) {
        const worst = top[limit - 1]!;
        if (score < worst.score || (score === worst.score && id > worst.id)) continue;
      }
      let position = top.length;
      while (position > 0) {
        const previous = top[position - 1]!;
        if (previous.score > score || (previous.score === score && previous.id < id)) break;
        position--;
      }
      top.splice(position, 0, { id, score });
      if (top.length > limit) top.pop();
    }
    return top;
  }
}

const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/** Float32 little-endian bytes, as hex (bytea columns are filled with `decode(…, 'hex')`). */
function vectorHex(vector: Float32Array): string {
  const bytes = Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);
  if (LITTLE_ENDIAN) return bytes.toString('hex');
  const copy = Buffer.from(bytes);
  copy.swap32();
  return copy.toString('hex');
}

function vectorFromBytes(bytes: Uint8Array): Float32Array {
  const copy = new Uint8Array(bytes); // aligned, owned
  if (!LITTLE_ENDIAN) Buffer.from(copy.buffer).swap32();
  return new Float32Array(copy.buffer, 0, copy.byteLength >> 2);
}

const vectorLiteral = (vector: Float32Array, kind: VectorKind) => (kind === 'pgvector' ? `[${Array.from(vector).join(',')}]` : vectorHex(vector));

/** Parses `embedding::text`: `[1,2]` from pgvector, `\\x0000803f…` from bytea. */
function parseVector(text: string): Float32Array {
  if (text.startsWith('\\x')) return vectorFromBytes(Buffer.from(text.slice(2), 'hex'));
  const inner = text.slice(1, -1).trim();
  if (inner === '') return new Float32Array(0);
  return Float32Array.from(inner.split(','), Number);
}

function fromRow(row: RecordRow): MemoryRecord {
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
  };
}

function norm(vector: Float32Array): number {
  let sum = 0;
  for (const value of vector) sum += value * value;
  return Math.sqrt(sum);
}

/**
 * A `MemoryIndex` in PostgreSQL or PGlite, in its own tables (`memory_index_records`,
 * `memory_index_meta`) with its own migration table (`memory_index_migrations`).
 *
 * - Lexical: Okapi BM25 (k1 1.2, b 0.75) computed in SQL, per agent, over core's analyzed terms
 *   (`terms text[]`, GIN-indexed, matched with `&&`), so stemming, stop words and scores agree
 *   with the in-memory index.
 * - Semantic: pgvector cosine (`<=>`) when the database has it (HNSW from `annThreshold` rows),
 *   otherwise a `bytea` column (float32 little-endian) and exact cosine in JS over the agent's
 *   vectors, streamed from the database on each search (correct; linear in the agent's size).
 * - Every upsert is one transaction; the fingerprint is recorded with `INSERT … ON CONFLICT DO
 *   NOTHING` inside it, so concurrent first writers cannot record two embedders.
 *
 * @example
 * const client = await openSqlClient({ dataDir: 'memory://' });
 * const index = postgresMemoryIndex({ client });
 * await index.init();
 */
export function postgresMemoryIndex(options: PostgresMemoryIndexOptions): MemoryIndex {
  const { client } = options;
  const schema = quoteIdentifier(options.schema ?? 'public');
  const records = `${schema}.memory_index_records`;
  const meta = `${schema}.memory_index_meta`;
  const agents = `${schema}.memory_index_agents`;
  const batchSize = options.batchSize ?? 500;
  const onBackgroundError =
    options.onBackgroundError ??
    ((error: unknown, operation: string) => process.stderr.write(`postgresMemoryIndex ${operation} failed: ${String(error)}\n`));

  let starting: Promise<void> | null = null;
  let vectorKind: VectorKind = 'bytea';
  let fingerprint: EmbedderFingerprint | null = null;
  const configuredAnnThreshold = options.annThreshold !== undefined ? options.annThreshold : client.dialect === 'pglite' ? null : 50_000;
  let annThreshold: number | null = null;
  let hasAnnIndex = false;
  let rowsSinceAnnCheck = 0;
  let background: Promise<void> = Promise.resolve();
  const vectorCacheRows = options.vectorCacheRows ?? 200_000;
  const vectorCache = new Map<string, CachedAgentVectors>();
  let cacheClock = 0;

  /**
   * Bumps the versions of `agentIds` inside a write transaction, in a fixed order (no deadlocks
   * between writers of several agents), and returns the new versions.
   */
  async function bumpVersions(tx: SqlClient, agentIds: readonly string[]): Promise<Map<string, string>> {
    const sorted = [...new Set(agentIds)].sort();
    if (sorted.length === 0) return new Map();
    const { rows } = await tx.query<{ agent_id: string; version: string | number }>(
      `INSERT INTO ${agents} (agent_id, version) SELECT a, 1 FROM unnest($1::text[]) WITH ORDINALITY AS u(a, n) ORDER BY n
       ON CONFLICT (agent_id) DO UPDATE SET version = ${agents}.version + 1 RETURNING agent_id, version`,
      [sorted],
    );
    return new Map(rows.map((row) => [row.agent_id, String(row.version)]));
  }

  /**
   * After this process's write committed: when the cache held exactly the version before it, the
   * write is applied in place (writers of an agent are serialized, so that is the new state);
   * otherwise the agent's cache is dropped and reloaded on its next search.
   */
  function afterWrite(versions: Map<string, string>, apply: (agentId: string, cached: CachedAgentVectors) => void): void {
    for (const [agentId, version] of versions) {
      const cached = vectorCache.get(agentId);
      if (!cached) continue;
      if (BigInt(cached.version) + 1n === BigInt(version)) {
        apply(agentId, cached);
        cached.version = version;
      } else {
        vectorCache.delete(agentId);
      }
    }
  }

  function evictFor(rows: number): void {
    let total = rows;
    for (const cached of vectorCache.values()) total += cached.size;
    const byAge = [...vectorCache.entries()].sort((a, b) => a[1].lastUsed - b[1].lastUsed);
    for (const [agentId, cached] of byAge) {
      if (total <= vectorCacheRows) break;
      vectorCache.delete(agentId);
      total -= cached.size;
    }
  }

  /** The agent's vectors at its current version: from the cache, or loaded (and cached if they fit). */
  async function agentVectors(agentId: string, dimensions: number): Promise<CachedAgentVectors> {
    // Version first, vectors second: vectors at least as new as the version label can only cause
    // an extra reload later, never a stale hit.
    const { rows: versionRows } = await client.query<{ version: string | number }>(`SELECT version FROM ${agents} WHERE agent_id = $1`, [agentId]);
    const version = String(versionRows[0]?.version ?? '0');
    const cached = vectorCache.get(agentId);
    if (cached && cached.version === version && cached.dimensions === dimensions) {
      cached.lastUsed = ++cacheClock;
      return cached;
    }
    vectorCache.delete(agentId);
    const { rows } = await client.query<{ id: string; embedding: Uint8Array; embedding_norm: number }>(
      `SELECT id, embedding, embedding_norm FROM ${records} WHERE agent_id = $1`,
      [agentId],
    );
    const loaded = new CachedAgentVectors(dimensions, version, rows.length);
    for (const row of rows) loaded.set(row.id, vectorFromBytes(row.embedding), Number(row.embedding_norm));
    loaded.lastUsed = ++cacheClock;
    if (rows.length <= vectorCacheRows) {
      evictFor(rows.length);
      vectorCache.set(agentId, loaded);
    }
    return loaded;
  }

  async function guard<T>(operation: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (error) {
      if (error instanceof EmbedderMismatchError || error instanceof RangeError || error instanceof ServiceError) throw error;
      throw new ServiceError('service_unavailable', `The memory index (postgres) failed during ${operation}.`, { cause: error });
    }
  }

  async function start(): Promise<void> {
    let wantsVector = false;
    if (client.hasVector) {
      try {
        await client.exec('CREATE EXTENSION IF NOT EXISTS vector');
        // The extension lives in one schema of the database; a connection whose search_path leaves
        // that schema out cannot name its type or operators: exact search then, not a failed start.
        const { rows } = await client.query<{ visible: boolean }>("SELECT to_regtype('vector') IS NOT NULL AS visible");
        wantsVector = rows[0]?.visible === true;
      } catch {
        // Available but not installable by this role: fall back to bytea (exact, slower).
      }
    }
    await client.exec(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    await migrate(client, `${schema}.memory_index_migrations`, migrations(schema, wantsVector ? 'pgvector' : 'bytea'));
    const { rows } = await client.query<{ key: string; value: string }>(`SELECT key, value FROM ${meta}`);
    const values = new Map(rows.map((row) => [row.key, row.value]));
    vectorKind = values.get('vector_kind') === 'pgvector' ? 'pgvector' : 'bytea';
    const recorded = values.get('embedder');
    fingerprint = recorded ? (JSON.parse(recorded) as EmbedderFingerprint) : null;
    annThreshold = vectorKind === 'pgvector' ? configuredAnnThreshold : null;
    const { rows: indexes } = await client.query(
      `SELECT 1 FROM pg_indexes WHERE schemaname = $1 AND indexname = 'memory_index_records_embedding_hnsw'`,
      [options.schema ?? 'public'],
    );
    hasAnnIndex = indexes.length > 0;
  }

  async function ready(): Promise<void> {
    starting ??= guard('init', start).catch((error: unknown) => {
      starting = null;
      throw error;
    });
    await starting;
  }

  /** The fingerprint as recorded now (another process may have recorded it since init). */
  async function currentFingerprint(sql: SqlClient): Promise<EmbedderFingerprint | null> {
    if (fingerprint) return fingerprint;
    const { rows } = await sql.query<{ value: string }>(`SELECT value FROM ${meta} WHERE key = 'embedder'`);
    fingerprint = rows[0] ? (JSON.parse(rows[0].value) as EmbedderFingerprint) : null;
    return fingerprint;
  }

  async function insertRows(sql: SqlClient, batch: readonly MemoryRecord[]): Promise<void> {
    const column = <T>(pick: (record: MemoryRecord) => T) => batch.map(pick);
    const documentField = <T>(record: MemoryRecord, pick: (source: Extract<MemoryRecord['source'], { kind: 'document' }>) => T): T | null =>
      record.source.kind === 'document' ? pick(record.source) : null;
    const analyzed = batch.map((record) => analyze(indexedText(record)));
    await sql.query(
      `INSERT INTO ${records} (id, agent_id, organization_id, text, keywords, terms, term_count, embedding, embedding_norm,
         speaker, occurred_at, created_at, source_kind, thread_id, observation_id, turn_index, source_id, page, filename)
       SELECT u.id, u.agent_id, u.organization_id, u.text, u.keywords, string_to_array(u.terms, ' '), u.term_count,
         ${vectorKind === 'pgvector' ? 'u.embedding::vector' : "decode(u.embedding, 'hex')"}, u.embedding_norm,
         u.speaker, u.occurred_at, u.created_at, u.source_kind, u.thread_id, u.observation_id, u.turn_index, u.source_id, u.page, u.filename
       FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::int[], $8::text[], $9::float8[],
         $10::text[], $11::text[], $12::text[], $13::text[], $14::text[], $15::text[], $16::int[], $17::text[], $18::int[], $19::text[])
         AS u(id, agent_id, organization_id, text, keywords, terms, term_count, embedding, embedding_norm,
           speaker, occurred_at, created_at, source_kind, thread_id, observation_id, turn_index, source_id, page, filename)
       ON CONFLICT (id) DO UPDATE SET
         agent_id = excluded.agent_id, organization_id = excluded.organization_id, text = excluded.text,
         keywords = excluded.keywords, terms = excluded.terms, term_count = excluded.term_count,
         embedding = excluded.embedding, embedding_norm = excluded.embedding_norm, speaker = excluded.speaker,
         occurred_at = excluded.occurred_at, created_at = excluded.created_at, source_kind = excluded.source_kind,
         thread_id = excluded.thread_id, observation_id = excluded.observation_id, turn_index = excluded.turn_index,
         source_id = excluded.source_id, page = excluded.page, filename = excluded.filename`,
      [
        column((record) => record.id),
        column((record) => record.agentId),
        column((record) => record.organizationId),
        column((record) => record.text),
        column((record) => record.keywords),
        analyzed.map((terms) => terms.join(' ')),
        analyzed.map((terms) => terms.length),
        column((record) => vectorLiteral(record.vector, vectorKind)),
        column((record) => norm(record.vector)),
        column((record) => record.speaker),
        column((record) => record.occurredAt),
        column((record) => record.createdAt),
        column((record) => record.source.kind),
        column((record) => record.source.threadId),
        column((record) => record.source.observationId),
        column((record) => record.source.turnIndex),
        column((record) => documentField(record, (source) => source.sourceId)),
        column((record) => documentField(record, (source) => source.page)),
        column((record) => documentField(record, (source) => source.filename)),
      ],
    );
  }

  /** Builds the HNSW index once the table has `annThreshold` rows (checked every tenth of it). */
  function maybeBuildAnnIndex(written: number): void {
    if (annThreshold === null || hasAnnIndex || !fingerprint) return;
    rowsSinceAnnCheck += written;
    if (rowsSinceAnnCheck < Math.max(1, Math.floor(annThreshold / 10))) return;
    rowsSinceAnnCheck = 0;
    const threshold = annThreshold;
    const dimensions = fingerprint.dimensions;
    background = background.then(async () => {
      try {
        const { rows } = await client.query<{ n: number | string }>(`SELECT count(*) AS n FROM (SELECT 1 FROM ${records} LIMIT ${threshold}) t`);
        if (Number(rows[0]?.n ?? 0) < threshold || hasAnnIndex) return;
        await client.exec(
          `CREATE INDEX IF NOT EXISTS memory_index_records_embedding_hnsw ON ${records} USING hnsw ((embedding::vector(${dimensions})) vector_cosine_ops)`,
        );
        hasAnnIndex = true;
      } catch (error) {
        onBackgroundError(error, 'HNSW index build');
      }
    });
  }

  async function lexical(agentId: string, text: string, limit: number): Promise<MemoryHit[]> {
    const terms = [...new Set(analyze(text))];
    if (terms.length === 0) return [];
    const { rows } = await client.query<RecordRow & { score: number }>(
      `WITH query_terms AS (SELECT DISTINCT unnest($2::text[]) AS term),
       agent_stats AS (SELECT count(*)::float8 AS n, coalesce(avg(term_count), 0)::float8 AS average_length FROM ${records} WHERE agent_id = $1),
       candidates AS (SELECT id, terms, term_count FROM ${records} WHERE agent_id = $1 AND terms && $2::text[]),
       -- One row per (candidate, matching query term); array_positions counts the term in C
       -- instead of unnesting every candidate's terms.
       frequencies AS (
         SELECT * FROM (
           SELECT c.id, q.term, c.term_count, coalesce(cardinality(array_positions(c.terms, q.term)), 0)::float8 AS tf
           FROM candidates c CROSS JOIN query_terms q) AS counted
         WHERE tf > 0),
       document_frequencies AS (SELECT term, count(*)::float8 AS df FROM frequencies GROUP BY term),
       scores AS (
         SELECT f.id, sum(
           ln(1 + (s.n - d.df + 0.5) / (d.df + 0.5))
           * f.tf * ${K1 + 1} / (f.tf + ${K1} * (${1 - B} + ${B} * f.term_count / greatest(s.average_length, 1e-9)))) AS score
         FROM frequencies f JOIN document_frequencies d USING (term) CROSS JOIN agent_stats s
         GROUP BY f.id
         ORDER BY score DESC, f.id COLLATE "C" LIMIT $3)
       SELECT ${columns('r.')}, scores.score
       FROM scores JOIN ${records} r ON r.id = scores.id
       ORDER BY scores.score DESC, r.id COLLATE "C"`,
      [agentId, terms, limit],
    );
    return rows.map((row) => ({ record: fromRow(row), score: Number(row.score) }));
  }

  async function semantic(agentId: string, vector: Float32Array, limit: number): Promise<MemoryHit[]> {
    const dimensions = fingerprint?.dimensions ?? vector.length;
    if (vector.length !== dimensions) throw new RangeError(`query vector has ${vector.length} dimensions, the index ${dimensions}`);
    const queryNorm = norm(vector);
    if (vectorKind === 'bytea') return semanticInJs(agentId, vector, queryNorm, limit);
    // pgvector: order by distance alone so an HNSW index can serve it, then settle ties in JS,
    // fetching more while the tie at the cut may continue past what was fetched.
    const literal = vectorLiteral(vector, 'pgvector');
    let count = limit * 2 + 8;
    for (;;) {
      const fetchCount = count;
      const run = hasAnnIndex ? <T>(fn: (sql: SqlClient) => Promise<T>) => client.transaction(fn) : <T>(fn: (sql: SqlClient) => Promise<T>) => fn(client);
      const rows = await run(async (tx) => {
        if (hasAnnIndex) {
          // Keep scanning the graph until enough rows pass the agent filter (pgvector >= 0.8).
          await tx.query(`SELECT set_config('hnsw.iterative_scan', 'strict_order', true), set_config('hnsw.ef_search', $1, true)`, [
            String(Math.min(1000, Math.max(40, fetchCount * 2))),
          ]);
        }
        // The HNSW index is on the expression `embedding::vector(d)`; without it, skip the cast.
        const distance = hasAnnIndex ? `embedding::vector(${dimensions}) <=> $2::vector(${dimensions})` : 'embedding <=> $2::vector';
        const result = await tx.query<RecordRow & { distance: number | null }>(
          // Rank on (id, distance) first: converting every candidate's vector to text before the
          // sort would cost more than the distances themselves.
          `WITH nearest AS (SELECT id, ${distance} AS distance FROM ${records} WHERE agent_id = $1 ORDER BY ${distance} LIMIT $3)
           SELECT ${columns('r.')}, nearest.distance FROM nearest JOIN ${records} r ON r.id = nearest.id ORDER BY nearest.distance`,
          [agentId, literal, fetchCount],
        );
        return result.rows;
      });
      const hits = rows
        .map((row) => {
          const record = fromRow(row);
          const rowNorm = norm(record.vector);
          // Zero vectors have no direction: pgvector gives NaN, the port says similarity 0.
          const score = row.distance === null || Number.isNaN(Number(row.distance)) || rowNorm === 0 || queryNorm === 0 ? 0 : 1 - Number(row.distance);
          return { record, score };
        })
        .sort(compareMemoryHits);
      if (hits.length < fetchCount || hits.length <= limit) return hits.slice(0, limit);
      if (hits[hits.length - 1]!.score < hits[limit - 1]!.score - 1e-6) return hits.slice(0, limit);
      count *= 4;
    }
  }

  /**
   * Without pgvector: exact cosine in JS over the agent's vectors (bytea, cached per agent and
   * version), ties by id; then load the winning records.
   */
  async function semanticInJs(agentId: string, vector: Float32Array, queryNorm: number, limit: number): Promise<MemoryHit[]> {
    const vectors = await agentVectors(agentId, vector.length);
    const top = vectors.top(vector, queryNorm, limit);
    if (top.length === 0) return [];
    const { rows: full } = await client.query<RecordRow>(`SELECT ${COLUMNS} FROM ${records} WHERE agent_id = $1 AND id = ANY($2::text[])`, [
      agentId,
      top.map((hit) => hit.id),
    ]);
    const byId = new Map(full.map((row) => [row.id, fromRow(row)]));
    return top.flatMap((hit) => {
      const record = byId.get(hit.id);
      return record ? [{ record, score: hit.score }] : [];
    });
  }

  return {
    specificationVersion: 'v1',
    id: `postgres-memory-index:${client.dialect}`,
    capabilities: { approximateVectors: configuredAnnThreshold !== null && client.hasVector, persistent: true },

    async init() {
      await ready();
    },

    async close() {
      // The client belongs to the caller; only wait for background work.
      await background;
    },

    async upsert({ records: given, embedder, newIds }) {
      await ready();
      await guard('upsert', async () => {
        assertEmbedderMatches(await currentFingerprint(client), embedder);
        if (given.length === 0) return;
        assertVectorDimensions(given, embedder.dimensions);
        const unique = dedupeRecordsById(given);
        const written = await client.transaction(async (tx) => {
          // Recorded inside the transaction: the first committed upsert wins, the other rolls back.
          await tx.query(`INSERT INTO ${meta} (key, value) VALUES ('embedder', $1) ON CONFLICT (key) DO NOTHING`, [
            JSON.stringify({ id: embedder.id, dimensions: embedder.dimensions }),
          ]);
          const { rows } = await tx.query<{ value: string }>(`SELECT value FROM ${meta} WHERE key = 'embedder'`);
          assertEmbedderMatches(JSON.parse(rows[0]!.value) as EmbedderFingerprint, embedder);
          // Agents losing a record to another agent (an id upserted under a new agent) change too;
          // ids the caller declares new (`newIds`) cannot belong to anyone yet.
          const { rows: previous } = newIds
            ? { rows: [] as { id: string; agent_id: string }[] }
            : await tx.query<{ id: string; agent_id: string }>(`SELECT id, agent_id FROM ${records} WHERE id = ANY($1::text[])`, [
                unique.map((record) => record.id),
              ]);
          const agentOfId = new Map(unique.map((record) => [record.id, record.agentId]));
          const moved = previous.filter((row) => agentOfId.get(row.id) !== row.agent_id);
          const versions = await bumpVersions(tx, [...unique.map((record) => record.agentId), ...moved.map((row) => row.agent_id)]);
          for (let start = 0; start < unique.length; start += batchSize) await insertRows(tx, unique.slice(start, start + batchSize));
          return { versions, moved };
        });
        for (const row of written.moved) vectorCache.delete(row.agent_id);
        afterWrite(written.versions, (agentId, cached) => {
          for (const record of unique) if (record.agentId === agentId) cached.set(record.id, record.vector, norm(record.vector));
        });
        fingerprint ??= { id: embedder.id, dimensions: embedder.dimensions };
        maybeBuildAnnIndex(unique.length);
      });
    },

    async search(request: MemorySearchRequest): Promise<MemorySearchResult> {
      await ready();
      return guard('search', async () => {
        const limit = Math.max(0, Math.floor(request.limit));
        if (limit === 0) return { lexical: [], semantic: [] };
        const vector = request.vector;
        // Sequential on purpose: PGlite has one connection, and pg pools gain little here.
        const lexicalHits = request.text === '' ? [] : await lexical(request.agentId, request.text, limit);
        const semanticHits = vector === null || !(await currentFingerprint(client)) ? [] : await semantic(request.agentId, vector, limit);
        return { lexical: lexicalHits, semantic: semanticHits };
      });
    },

    async get({ agentId, ids }) {
      await ready();
      return guard('get', async () => {
        const unique = [...new Set(ids)];
        if (unique.length === 0) return [];
        const { rows } = await client.query<RecordRow>(`SELECT ${COLUMNS} FROM ${records} WHERE agent_id = $1 AND id = ANY($2::text[])`, [agentId, unique]);
        return rows.map(fromRow);
      });
    },

    async deleteBy({ agentId, threadId, sourceId, observationId, ids }) {
      await ready();
      // An empty id list matches nothing (port contract), not every record.
      if (ids !== undefined && ids.length === 0) return;
      await guard('deleteBy', async () => {
        const clauses = ['agent_id = $1'];
        const params: unknown[] = [agentId];
        const add = (column: string, value: string | undefined) => {
          if (value === undefined) return;
          params.push(value);
          clauses.push(`${column} = $${params.length}`);
        };
        add('thread_id', threadId);
        add('observation_id', observationId);
        add('source_id', sourceId);
        if (ids !== undefined) {
          params.push([...ids]);
          clauses.push(`id = ANY($${params.length}::text[])`);
        }
        const result = await client.transaction(async (tx) => {
          const versions = await bumpVersions(tx, [agentId]);
          const { rows } = await tx.query<{ id: string }>(`DELETE FROM ${records} WHERE ${clauses.join(' AND ')} RETURNING id`, params);
          return { versions, deleted: rows.map((row) => row.id) };
        });
        afterWrite(result.versions, (_, cached) => {
          for (const id of result.deleted) cached.remove(id);
        });
      });
    },

    async copyAgent({ fromAgentId, toAgentId, toOrganizationId, newId }) {
      await ready();
      return guard('copyAgent', async () => {
        const result = await client.transaction(async (tx) => {
          const { rows } = await tx.query<{ id: string }>(`SELECT id FROM ${records} WHERE agent_id = $1 ORDER BY id COLLATE "C"`, [fromAgentId]);
          if (rows.length === 0) return { copied: 0 };
          const oldIds = rows.map((row) => row.id);
          const newIds = oldIds.map(() => newId());
          await bumpVersions(tx, [toAgentId]);
          await tx.query(
            `INSERT INTO ${records} (id, agent_id, organization_id, text, keywords, terms, term_count, embedding, embedding_norm,
               speaker, occurred_at, created_at, source_kind, thread_id, observation_id, turn_index, source_id, page, filename)
             SELECT m.new_id, $3, $4, r.text, r.keywords, r.terms, r.term_count, r.embedding, r.embedding_norm,
               r.speaker, r.occurred_at, r.created_at, r.source_kind, r.thread_id, r.observation_id, r.turn_index, r.source_id, r.page, r.filename
             FROM unnest($1::text[], $2::text[]) AS m(old_id, new_id) JOIN ${records} r ON r.id = m.old_id`,
            [oldIds, newIds, toAgentId, toOrganizationId],
          );
          return { copied: oldIds.length };
        });
        vectorCache.delete(toAgentId);
        maybeBuildAnnIndex(result.copied);
        return result;
      });
    },

    async stats({ agentId }) {
      await ready();
      return guard('stats', async () => {
        const { rows } = await client.query<{ n: number | string }>(`SELECT count(*) AS n FROM ${records} WHERE agent_id = $1`, [agentId]);
        return { count: Number(rows[0]?.n ?? 0) };
      });
    },

    async embedder() {
      await ready();
      const recorded = await guard('embedder', () => currentFingerprint(client));
      return recorded ? { ...recorded } : null;
    },
  };
}
