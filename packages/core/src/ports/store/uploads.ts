/**
 * Store area `documents`: ingests of uploaded files (sources).
 * Part of the {@link Store} port (see `index.ts` for the general contract: absent is `null`,
 * records are copies, backend failures reject).
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
export type UploadRecord = {
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

export type UploadStore = {
  /** Inserts a record; its `jobId` MUST be new. */
  insert(request: { record: UploadRecord }): Promise<void>;
  get(request: { agentId: string; jobId: string }): Promise<UploadRecord | null>;
  /** Applies `patch` and resolves the updated record (null when absent). */
  update(request: {
    jobId: string;
    patch: Partial<Pick<UploadRecord, 'turnsTotal' | 'figures' | 'figuresDropped' | 'wordsTotal' | 'deferred' | 'docFormat' | 'mediaType'>>;
  }): Promise<UploadRecord | null>;
  /** Every record of the agent for these bytes, oldest first (creation order, then jobId). */
  listBySource(request: { agentId: string; sourceId: string }): Promise<UploadRecord[]>;
  /** Every record read in the thread, newest first. */
  listByThread(request: { agentId: string; threadId: string }): Promise<UploadRecord[]>;
  /** The oldest record with `stored` true for these bytes in the organization, or null. */
  findStored(request: { organizationId: string; sourceId: string }): Promise<UploadRecord | null>;
};
