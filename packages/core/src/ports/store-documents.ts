/**
 * Store areas of documents: ingests of uploaded files (sources), Idempotency-Key records and
 * uploaded images. Part of the {@link Store} port (see `store.ts` for the general contract:
 * absent is `null`, records are copies, backend failures reject).
 */

/** Where an upload is cut into turns (spec: observe-file `strategy`); the one list of them. */
export const CHUNK_STRATEGIES = ['auto', 'length', 'sentence', 'code', 'structure'] as const;
export type ChunkStrategy = (typeof CHUNK_STRATEGIES)[number];

/** Chunking settings an upload was read with. */
export type ChunkingSettings = { strategy: ChunkStrategy; maxChars: number; overlapChars: number };

/**
 * One reading of an uploaded file by an agent: the job that reads it and what the file became.
 * A `finish-learning` resume is a further record whose `resumes` names the first one (the root);
 * the root and its resumes form one upload whose state is computed from their turns.
 */
export type DocumentIngestRecord = {
  /** `obs_` id of the job that reads it; the record's key. */
  jobId: string;
  organizationId: string;
  agentId: string;
  threadId: string;
  /** `src_` content id of the original bytes (always set, also when storing them failed). */
  sourceId: string;
  /** True when the original bytes are in the BlobStore (then `source_id` is reported). */
  stored: boolean;
  filename: string;
  docFormat: string;
  mediaType: string;
  /** Size of the original in bytes. */
  bytes: number;
  chunking: ChunkingSettings;
  /** Pieces of the whole document (0 while a deferred conversion runs). */
  turnsTotal: number;
  figures: number;
  figuresDropped: number;
  wordsTotal: number;
  deferred: boolean;
  /** The root ingest this record resumes, or null for an upload (or a `here: true` re-read). */
  resumes: string | null;
  createdAt: string;
};

export type DocumentStore = {
  /** Inserts a record; its `jobId` MUST be new. */
  insert(request: { record: DocumentIngestRecord }): Promise<void>;
  get(request: { agentId: string; jobId: string }): Promise<DocumentIngestRecord | null>;
  /** Applies `patch` and resolves the updated record (null when absent). */
  update(request: {
    jobId: string;
    patch: Partial<Pick<DocumentIngestRecord, 'turnsTotal' | 'figures' | 'figuresDropped' | 'wordsTotal' | 'deferred' | 'docFormat' | 'mediaType'>>;
  }): Promise<DocumentIngestRecord | null>;
  /** Every record of the agent for these bytes, oldest first (creation order, then jobId). */
  listBySource(request: { agentId: string; sourceId: string }): Promise<DocumentIngestRecord[]>;
  /** Every record read in the thread, newest first. */
  listByThread(request: { agentId: string; threadId: string }): Promise<DocumentIngestRecord[]>;
  /** The oldest record with `stored` true for these bytes in the organization, or null. */
  findStored(request: { organizationId: string; sourceId: string }): Promise<DocumentIngestRecord | null>;
};

/** What an `Idempotency-Key` bound: one intended upload. */
export type IdempotencyRecord = {
  organizationId: string;
  key: string;
  /** Hash of what makes the request materially the same (path, bytes, chunking, flags). */
  fingerprint: string;
  /** `completed` once the response was recorded; `in_flight` before. */
  state: 'in_flight' | 'completed';
  /** HTTP status of the recorded response. */
  status: number | null;
  /** The recorded response body, exactly as sent (JSON text). */
  response: string | null;
  createdAt: string;
};

export type IdempotencyStore = {
  /**
   * Claims `key` for a new request: when the organization holds no record for it created at or
   * after `notBefore` (older ones are expired and replaced), inserts `record` (`in_flight`) and
   * resolves null. An `in_flight` record created before `inFlightNotBefore` (when given) was left
   * by a request that can no longer be running (its process stopped) and MUST be replaced the same
   * way; a `completed` record is never replaced before `notBefore`. Otherwise resolves the live
   * record untouched. Of N concurrent claims of one key exactly one MUST resolve null.
   */
  claim(request: {
    record: Omit<IdempotencyRecord, 'state' | 'status' | 'response'>;
    notBefore: string;
    inFlightNotBefore?: string | undefined;
  }): Promise<IdempotencyRecord | null>;
  /** Records the response of an in-flight key. */
  complete(request: { organizationId: string; key: string; status: number; response: string }): Promise<void>;
  /** Forgets a key (its request failed, so a retry runs afresh); a no-op when absent. */
  release(request: { organizationId: string; key: string }): Promise<void>;
};

/** An uploaded image (`img_` id = content hash scoped to the organization). */
export type ImageRecord = {
  id: string;
  organizationId: string;
  mediaType: string;
  bytes: number;
  width: number;
  height: number;
  createdAt: string;
};

export type ImageStore = {
  /** Inserts the image; an existing id of the organization is kept as it is (same bytes). */
  insert(request: { image: ImageRecord }): Promise<void>;
  /** Null when absent or owned by another organization. */
  get(request: { organizationId: string; imageId: string }): Promise<ImageRecord | null>;
};
