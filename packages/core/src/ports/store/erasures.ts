/**
 * Store area `erasures`: erasure jobs (`POST .../memories/erase`, issue 30) and the storage
 * reclaim that follows them.
 * Part of the {@link Store} port (see `index.ts` for the general contract: absent is `null`,
 * records are copies, backend failures reject).
 */

/** What an erasure removes: everything derived from one source, thread, observation or end user. */
export type ErasureTarget = { kind: 'source' | 'thread' | 'observation' | 'end_user'; id: string };

export type ErasureStatus = 'queued' | 'running' | 'completed' | 'failed';

/** What an erasure removed so far. */
export type ErasureCounts = {
  /** Memory records removed from the index. */
  memories: number;
  /** Threads removed (with their messages). */
  threads: number;
  /** Observation jobs removed (with their stored turns, details and learning records). */
  observations: number;
  /** Stored originals (and figure crops) removed from the blob store. */
  originals: number;
  /** Idempotent replays forgotten. */
  replays: number;
};

export type ErasureRecord = {
  /** `era_` id. */
  id: string;
  organizationId: string;
  agentId: string;
  /** The end user who asked (`X-SP-End-User`), or null for the organization. */
  endUserId: string | null;
  target: ErasureTarget;
  status: ErasureStatus;
  counts: ErasureCounts;
  /** Why it failed, when `failed`. */
  error: string | null;
  createdAt: string;
  updatedAt: string;
  startedAt: string | null;
  completedAt: string | null;
};

export type ErasureStore = {
  /** Inserts a new erasure; its id MUST be new. */
  insert(request: { erasure: ErasureRecord }): Promise<void>;
  /** The erasure, only when it belongs to the agent. */
  get(request: { agentId: string; erasureId: string }): Promise<ErasureRecord | null>;
  /** Applies `patch`; resolves the updated record (null when absent). */
  update(request: {
    erasureId: string;
    patch: Partial<Pick<ErasureRecord, 'status' | 'counts' | 'error' | 'startedAt' | 'completedAt'>>;
    updatedAt: string;
  }): Promise<ErasureRecord | null>;
  /** Erasures in any of `statuses`, across agents, oldest first (used on start to resume them). */
  listByStatus(request: { statuses: readonly ErasureStatus[] }): Promise<ErasureRecord[]>;
  /**
   * Makes the storage of deleted rows reclaimable so their bytes leave the live data files: a
   * PostgreSQL/PGlite store runs a plain `VACUUM` of the tables erasure deletes from (and of the
   * memory index's tables when they share the database). MUST NOT be called inside `transaction`;
   * a store with nothing to reclaim resolves at once.
   */
  reclaim(): Promise<void>;
};
