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
 *   another agent MUST NOT be removed. After it resolves, no search returns a removed record.
 * - Persistence: an index opened again on the same storage MUST return what was upserted before.
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
  /** The fingerprint recorded on first upsert, or null while empty. */
  embedder(): Promise<EmbedderFingerprint | null>;
};

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

/** What `deleteBy` removes: the agent's records matching every field given. */
export type MemoryDeleteRequest = {
  agentId: string;
  threadId?: string;
  sourceId?: string;
  observationId?: string;
  /** Only these record ids; an empty list matches nothing. */
  ids?: readonly string[];
};

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
  /** ISO date-time the record was written. */
  createdAt: string;
};

export type MemorySearchRequest = {
  agentId: string;
  /** Full-text query; empty string means no lexical channel. */
  text: string;
  /** Query vector; null means no semantic channel. */
  vector: Float32Array | null;
  /** Maximum hits per channel. */
  limit: number;
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
