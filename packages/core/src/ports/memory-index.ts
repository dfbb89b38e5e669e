/**
 * Where learned memories live and are searched.
 *
 * A memory record is one retrievable unit (a fact, a turn, a document piece) together with the
 * reference to what it was learned from, so every hit can be cited.
 *
 * Contract:
 * - Every operation is scoped by `agentId`; `search` MUST NOT return records of another agent.
 * - `upsert` MUST be atomic per call from the reader's point of view: after it resolves every record
 *   is searchable by both channels; a record with an existing `id` is replaced.
 * - `upsert` with `newIds: true` is the caller's promise that no record's id is stored yet (the
 *   memories of a turn never read before). The index MAY then skip looking for existing ids (a plain
 *   append); it MUST still make every record searchable as above. The caller MUST NOT pass it for
 *   ids that may exist (a retried or resumed write): what an index does with an existing id then is
 *   unspecified (it may keep both rows).
 * - `upsert` MUST reject with `EmbedderMismatchError` when `embedder` differs from the fingerprint
 *   the index recorded on its first upsert (the fingerprint is recorded once per index).
 * - `search` returns two ranked candidate lists that core fuses: `lexical` (full-text, BM25-like
 *   score, higher is better; only records sharing at least one query term) and `semantic` (cosine
 *   similarity of `vector` to the record vectors, higher is better). Each list is ordered by score
 *   descending, ties broken by `id` ascending, and holds at most `limit` hits.
 * - A hit carries its record without the vector (`MemoryHitRecord`: no `vector` property): fusion
 *   needs ids, texts and scores, and reading 100 vectors back per search is most of a search's
 *   cost in a columnar store. `get` returns whole records, vectors included.
 * - `deleteBy` MUST remove every record matching all given fields; missing matches are not an error.
 *   With `ids`, only records whose id is listed match (an empty list removes nothing); ids of
 *   another agent MUST NOT be removed. After it resolves, no search returns a removed record, and
 *   (erasure) no byte of a removed record's text remains in storage the index controls (a columnar
 *   store compacts and drops old versions; a SQL table deletes the rows, the store/ops layer vacuums).
 * - Validity: `search` and `list` return only current records (`validTo === null`) unless asked
 *   otherwise (`asOf`, `includeHistory`); filters run inside the index, so a search for current
 *   facts costs no more than one without them.
 * - Expiry (issue 42): given `now`, `search` and `list` leave out records whose `expiresAt` is not
 *   null and <= `now` (inside the index, like validity); without `now` expiry is not looked at.
 *   `update` sets or clears `expiresAt` (`MemoryPatch.expiresAt`).
 * - `list` pages the agent's records newest first (`createdAt` desc, then `id` desc); following
 *   `nextCursor` until it is null visits every matching record exactly once while nothing changes.
 * - `update` patches validity, `suspicious`, `alsoFrom` and `expiresAt` of existing records of the agent; ids
 *   missing (or of another agent) are ignored. Text, vectors and sources never change through it.
 * - Every field of a record round-trips: `get`, `search` and `list` return what `upsert` stored
 *   (rows written before a field existed read back with its documented default).
 * - Persistence: an index opened again on the same storage MUST return what was upserted before.
 *
 * Re-embedding (issue 39: switching embedders on a live index). An index holds one *current*
 * generation of vectors (the fingerprint `embedder()` returns) and, while a re-embed runs, vectors
 * of one *target* generation beside it:
 * - `beginReembed({ target })` on an index with no fingerprint yet (empty) is a no-op. With `target`
 *   equal to the current fingerprint it MUST end any re-embed in progress and discard its target
 *   vectors (a switch back). With `target` equal to the re-embed in progress it is a no-op (vectors
 *   already written stay: a resumed run continues). Otherwise it MUST start a re-embed towards
 *   `target`, discarding the vectors of any other target. The target MUST persist with the index
 *   (a persistent index opened again reports the same re-embed and the vectors written so far).
 * - While a re-embed runs, `embedder()` still returns the current fingerprint and `search`, `get`,
 *   `list` and `findDuplicates` still read the current generation only: the semantic channel never
 *   compares a query vector with vectors of two embedders. The target dimensions MAY differ from
 *   the current ones (the index MUST store them however its schema requires).
 * - `reembedPending` returns records of every agent, current and history (superseded records too),
 *   that hold no target vector: id ascending (code-unit order), only ids greater than `after` when
 *   given, at most `limit`; empty when no re-embed runs. `reembedProgress` counts them: `total` is
 *   every record of the index, `done` those holding a target vector; null when no re-embed runs.
 * - `writeReembedded` MUST reject with `EmbedderMismatchError` unless `target` is the re-embed in
 *   progress, and with a `RangeError` (writing nothing) when a vector does not have its dimensions;
 *   ids not stored (deleted meanwhile) are ignored; a vector written again replaces the earlier one.
 *   It MUST NOT change what `search`, `get` or `list` return.
 * - During a re-embed `upsert` under the current fingerprint MUST be accepted, and every record it
 *   writes (new, or replacing one) holds no target vector until one is written for it; `upsert`
 *   under the target MUST reject with `EmbedderMismatchError` (the target is not current yet).
 *   `deleteBy` MUST remove the target vectors of the records it removes; records `copyAgent` writes
 *   MUST count in `total` and be pending until their target vector is written (or carry their
 *   source's target vector). `update` leaves target vectors alone.
 * - `finishReembed({ target })` resolves false, changing nothing, while a record is pending or when
 *   `target` is not the re-embed in progress. Otherwise it MUST switch atomically to the reader:
 *   `embedder()` returns `target`, every record's vector (`get`, the semantic channel) is its
 *   target vector, the old generation's vectors are dropped, `reembedProgress()` is null; it
 *   resolves true. Upserts then take `target` and reject the old fingerprint.
 */
export type MemoryIndex = {
  readonly specificationVersion: 'v1';
  readonly id: string;
  readonly capabilities: MemoryIndexCapabilities;
  /** Idempotent: opens storage and creates tables/indexes. */
  init(): Promise<void>;
  close(): Promise<void>;
  upsert(request: MemoryUpsertRequest): Promise<void>;
  search(request: MemorySearchRequest): Promise<MemorySearchResult>;
  /** Records by id (only of the agent); missing ids are left out. */
  get(request: { agentId: string; ids: readonly string[] }): Promise<MemoryRecord[]>;
  /**
   * Removes the agent's records matching every given field: `threadId`, `sourceId` (document
   * records only), `observationId` and `ids` (superseded memories an LLM writer names).
   */
  deleteBy(request: MemoryDeleteRequest): Promise<void>;
  /** The agent's records, newest first (createdAt desc, id desc), filtered, one page at a time. */
  list(request: MemoryListRequest): Promise<MemoryListResult>;
  /** Changes validity/suspicious/alsoFrom of existing records of the agent (missing ids ignored). */
  update(request: MemoryUpdateRequest): Promise<void>;
  /**
   * Replaces the full-text keywords of existing records of the agent (missing ids, or ids of
   * another agent, ignored): used to take a deleted memory's words out of its neighbours' keywords
   * (issue 41). Erasure-grade, as `deleteBy`: after it resolves no search matches a record by a
   * word only its old keywords held, and no byte of the old keywords remains in storage the index
   * controls (beyond what the store/ops layer vacuums).
   */
  rewriteKeywords(request: MemoryKeywordsRequest): Promise<void>;
  /**
   * Copies every record of `fromAgentId` to `toAgentId` (new ids via `newId`), keeping text,
   * vectors and references. Used by `restore_from`.
   */
  copyAgent(request: { fromAgentId: string; toAgentId: string; toOrganizationId: string; newId: () => string }): Promise<{ copied: number }>;
  stats(request: { agentId: string }): Promise<{ count: number }>;
  /**
   * Optional: the records of every agent in the index (for the metrics' index size). Cheap: a
   * count the backend keeps, not a scan where avoidable.
   */
  count?(): Promise<number>;
  /**
   * Optional readiness probe: resolves when the backend answers (one cheap round trip), rejects
   * (best: `service_unavailable`) when it does not. Without it readiness asks `embedder()`.
   */
  ping?(): Promise<void>;
  /** The fingerprint recorded on first upsert (or switched to by `finishReembed`), or null while empty. */
  embedder(): Promise<EmbedderFingerprint | null>;
  /** Starts (or resumes, or with the current fingerprint cancels) a re-embed towards `target`; see the contract above. */
  beginReembed(request: { target: EmbedderFingerprint }): Promise<void>;
  /** The re-embed in progress and how far it is, or null when none runs. */
  reembedProgress(): Promise<ReembedProgress | null>;
  /** Records (every agent, history too) still without a target vector, id ascending after `after`. */
  reembedPending(request: { limit: number; after?: string | null }): Promise<ReembedPendingRecord[]>;
  /** Stores target-generation vectors for records by id; searches do not see them until the switch. */
  writeReembedded(request: { target: EmbedderFingerprint; vectors: readonly ReembeddedVector[] }): Promise<void>;
  /** Switches to the target generation when nothing is pending; false (nothing changed) otherwise. */
  finishReembed(request: { target: EmbedderFingerprint }): Promise<boolean>;
  /**
   * Optional (issue 33, near-duplicates merged when learned): the agent's current records
   * (`validTo === null`) whose duplicate key (core's `duplicateKey(record)`, computed by the index
   * when it stores a record) is one of `keys`, in one round trip. Records stored before the index
   * kept keys have none and are never returned. Without it, learning merges nothing.
   */
  findDuplicates?(request: MemoryDuplicatesRequest): Promise<MemoryHitRecord[]>;
};

/** What `findDuplicates` looks for: duplicate keys of the agent's current records. */
export type MemoryDuplicatesRequest = { agentId: string; keys: readonly string[] };

export type MemoryUpsertRequest = {
  records: readonly MemoryRecord[];
  embedder: EmbedderFingerprint;
  /**
   * True when the caller knows no record's id is stored yet, so the index may append without
   * looking for existing ids (see the contract above).
   * @default false
   */
  newIds?: boolean;
};

export type MemoryIndexCapabilities = {
  /** Vector search is approximate (ANN) above some size. */
  readonly approximateVectors: boolean;
  /** Survives a process restart. */
  readonly persistent: boolean;
};

export type EmbedderFingerprint = { id: string; dimensions: number };

/** A re-embed in progress: from the current fingerprint to the target, `done` of `total` records. */
export type ReembedProgress = { from: EmbedderFingerprint; to: EmbedderFingerprint; done: number; total: number };

/** A record still to re-embed: what embedding it needs (learning embeds `text`). */
export type ReembedPendingRecord = { id: string; agentId: string; text: string };

/** One target-generation vector for a stored record. */
export type ReembeddedVector = { id: string; vector: Float32Array };

/** What `deleteBy` removes: the agent's records matching every field given. */
export type MemoryDeleteRequest = {
  agentId: string;
  threadId?: string;
  sourceId?: string;
  observationId?: string;
  /** Only these record ids; an empty list matches nothing. */
  ids?: readonly string[];
  /** Only records whose `source.threadId` is one of these; an empty list matches nothing. */
  threadIds?: readonly string[];
};

/** A page request of `list`: the agent's records matching every filter given. */
export type MemoryListRequest = {
  agentId: string;
  /** Page size, 1..1000. */
  limit: number;
  /** Opaque, from a previous page of the SAME agent and filters; absent or null: the first page. */
  cursor?: string | null;
  /** Records whose `source.threadId` is one of these. */
  threadIds?: readonly string[];
  /** Document records of this `src_`. */
  sourceId?: string;
  observationId?: string;
  speaker?: string;
  /** `createdAt` range, ISO date-times: inclusive lower bound. */
  learnedAfter?: string;
  /** `createdAt` range: exclusive upper bound. */
  learnedBefore?: string;
  /** `occurredAt` range: inclusive lower bound (records without `occurredAt` do not match). */
  occurredAfter?: string;
  /** `occurredAt` range: exclusive upper bound (records without `occurredAt` do not match). */
  occurredBefore?: string;
  /** Case-insensitive substring of `text`. */
  textContains?: string;
  /** @default false: only current records (`validTo === null`). */
  includeHistory?: boolean;
  /** Expiry (issue 42): an ISO date-time => records with `expiresAt <= now` are left out; absent => all. */
  now?: string;
  /** Retention (issue 42): an ISO date-time => only records that expired at or before it (`expiresAt <= expiredBefore`). */
  expiredBefore?: string;
};

export type MemoryListResult = {
  records: MemoryHitRecord[];
  /** Cursor of the next page, null on the last one. */
  nextCursor: string | null;
};

/** Changes to one existing record; absent fields stay as they are. */
export type MemoryPatch = {
  id: string;
  validTo?: string | null;
  supersededBy?: string | null;
  suspicious?: boolean;
  alsoFrom?: MemorySourceRef[];
  /** When the record expires (issue 42); null: never. */
  expiresAt?: string | null;
};

export type MemoryUpdateRequest = { agentId: string; patches: readonly MemoryPatch[] };

/** `rewriteKeywords`: each record's new `keywords` (the whole string). */
export type MemoryKeywordsRequest = { agentId: string; records: readonly { id: string; keywords: string }[] };

/** The `provenance.writer` of a memory a person's edit wrote (issue 42). */
export const EDIT_WRITER = 'edit';

/** How a memory was produced (issue 30). */
export type MemoryProvenance = {
  /** `MemoryWriter.id` of the writer that produced it ['unknown' for rows written before]. */
  writer: string;
  /** The `job_` id of the learning job, or null. */
  jobId: string | null;
  /**
   * Character span [start, end) in the source turn's text (UTF-16 units) when the memory is a
   * verbatim slice of it; null when the writer paraphrased.
   */
  span: MemorySpan | null;
};

/** A [start, end) range of UTF-16 code units. */
export type MemorySpan = { start: number; end: number };

/** What a memory was learned from; cited in chat answers. */
export type MemorySourceRef =
  | { kind: 'turn'; threadId: string; observationId: string; turnIndex: number }
  | { kind: 'document'; threadId: string; observationId: string; turnIndex: number; sourceId: string; page: number | null; filename: string };

export type MemoryRecord = {
  /** `mem_` id. */
  id: string;
  organizationId: string;
  agentId: string;
  /** The text shown in `memory_context` and checked against the source for `verified`. */
  text: string;
  /**
   * Extra text indexed for full-text search only (resolved dates, speaker, entities, neighbouring
   * context). Never shown; may be empty.
   */
  keywords: string;
  vector: Float32Array;
  speaker: string | null;
  /** ISO date-time the memory refers to (the observation timestamp, or a resolved date), or null. */
  occurredAt: string | null;
  source: MemorySourceRef;
  /** ISO date-time the record was written ("when it was learned"). */
  createdAt: string;
  /** How the record was produced (issue 30). */
  provenance: MemoryProvenance;
  /** Other turns this memory was also learned from (near-duplicates merged into it) [[]]. */
  alsoFrom: MemorySourceRef[];
  /**
   * ISO date-time the fact became true: a date resolved from the text, else the turn's timestamp
   * [occurredAt ?? createdAt for rows written before].
   */
  validFrom: string | null;
  /** ISO date-time the fact stopped being true (superseded), null while current. */
  validTo: string | null;
  /** The `mem_` id of the record that superseded it, or null. */
  supersededBy: string | null;
  /** Instruction-like content flagged when learned (issue 33). */
  suspicious: boolean;
  /**
   * ISO date-time the memory expires (issue 42): from then on (`expiresAt <= now`) a search or list
   * given `now` leaves it out; null (the default for rows written before) never expires.
   */
  expiresAt: string | null;
};

export type MemorySearchRequest = {
  agentId: string;
  /** Full-text query; empty string means no lexical channel. */
  text: string;
  /** Query vector; null means no semantic channel. */
  vector: Float32Array | null;
  /** Maximum hits per channel. */
  limit: number;
  /**
   * Validity: absent => only current records (validTo === null); an ISO date-time => records true
   * then (validFrom null or <= asOf, and validTo null or > asOf).
   */
  asOf?: string;
  /** Restrict to these thread ids (end-user narrowing); absent => all threads of the agent. */
  threadIds?: readonly string[];
  /**
   * Expiry (issue 42): an ISO date-time => records with `expiresAt <= now` are left out; absent =>
   * expiry is not looked at (audit).
   */
  now?: string;
};

/** A record as a search hit carries it: everything but the vector. */
export type MemoryHitRecord = Omit<MemoryRecord, 'vector'>;

export type MemoryHit = { record: MemoryHitRecord; score: number };

export type MemorySearchResult = {
  lexical: MemoryHit[];
  semantic: MemoryHit[];
};

/** Thrown by `upsert` when the index was built by another embedder. */
export class EmbedderMismatchError extends Error {
  readonly recorded: EmbedderFingerprint;
  readonly given: EmbedderFingerprint;
  constructor(recorded: EmbedderFingerprint, given: EmbedderFingerprint) {
    super(`memory index was built with embedder ${recorded.id} (${recorded.dimensions} dims), not ${given.id} (${given.dimensions} dims)`);
    this.name = 'EmbedderMismatchError';
    this.recorded = recorded;
    this.given = given;
  }
}
