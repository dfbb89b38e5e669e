import type { MemorySourceRef } from '../memory-index.js';

/**
 * Store area `repoints`: an erasure's re-points of memories a job's turns were merged into
 * (issue 33), kept durably so a resumed erasure can finish them. Entries go with their job.
 * Part of the {@link Store} port (see `index.ts` for the general contract).
 */

/**
 * An erasure's intent to re-point one memory of the (erased) job to the turns merged into it
 * (issue 33), recorded before the memory is deleted and written anew: what a resumed erasure needs
 * to write it again when the process stopped in between. Ids, dates and flags of the memory only,
 * never its text (nor anything else read from the erased turn).
 */
export type JobRepoint = {
  /** The `mem_` id the rewritten memory keeps. */
  memoryId: string;
  organizationId: string;
  agentId: string;
  /** The memory's `createdAt` ("when it was learned"), kept through the rewrite. */
  createdAt: string;
  /** The memory's `provenance.writer`. */
  writer: string;
  validTo: string | null;
  supersededBy: string | null;
  suspicious: boolean;
  /** The memory's `expiresAt` (issue 42) [null: never expires, also for entries recorded before]. */
  expiresAt?: string | null;
  /** The merged turns still kept, in the memory's `alsoFrom` order: the first stored one becomes its source. */
  remaining: MemorySourceRef[];
};

export type RepointStore = {
  /**
   * Erasure: records, durably and before the memory is deleted, that the job's memory
   * `repoint.memoryId` is being re-pointed (see {@link JobRepoint}); a memory recorded again for
   * the job replaces its entry. Ignored when the job is absent. Goes with the job (`delete`).
   */
  record(request: { jobId: string; repoint: JobRepoint }): Promise<void>;
  /** What {@link RepointStore.record} recorded for the job and was not cleared, by memory id ascending. */
  list(request: { jobId: string }): Promise<JobRepoint[]>;
  /** Forgets the job's entry for `memoryId` (its rewrite is written); an absent entry is not an error. */
  clear(request: { jobId: string; memoryId: string }): Promise<void>;
};
