import type { LearningReport } from './not-learned.js';
import type { TurnRecord } from './turns.js';

/**
 * Store area `jobs`: observation jobs (a job's turns are the area `turns`; what its learning did,
 * the area `receipts`; an erasure's re-points, the area `repoints`).
 * Part of the {@link Store} port (see `index.ts` for the general contract: absent is `null`,
 * records are copies, backend failures reject).
 */

export type JobStatus = 'queued' | 'converting' | 'processing' | 'committed' | 'failed' | 'cancelled' | 'interrupted';

/** Statuses after which a job never changes (spec "States / Observation job"). */
export const FINAL_JOB_STATUSES: readonly JobStatus[] = ['committed', 'failed', 'cancelled'];

/** What a job of kind `observe` or `respond` carries beyond the common fields: nothing. */
export type NoJobDetails = Record<string, never>;

/** What a document job knows of its file while it runs. */
export type DocumentJobDetails = {
  /** `src_` content id of the file's bytes. */
  sourceId: string;
  filename: string;
  /** True while the file's deferred conversion (text recognition) runs: the job has no turns yet. */
  converting: boolean;
  /** Pages the deferred conversion reads (set when the job was stored `converting`). */
  scannedPages?: number;
};

/** The kind-specific part of a job: `kind` says what its `details` hold. */
export type JobDetails =
  | { kind: 'observe'; details: NoJobDetails }
  | { kind: 'respond'; details: NoJobDetails }
  | { kind: 'document'; details: DocumentJobDetails };

export type JobKind = JobDetails['kind'];

/** A job: the common fields and, by `kind`, its typed `details` (see {@link JobDetails}). */
export type JobRecord = JobFields & JobDetails;

/** A job of kind `document`: its details say which file it reads. */
export type DocumentJobRecord = Extract<JobRecord, { kind: 'document' }>;

/** A job as `insert` takes it: before the store assigns `seq`. */
export type NewJobRecord = Omit<JobFields, 'seq'> & JobDetails;

/** The fields every job has, whatever its kind. */
export type JobFields = {
  /** `obs_` id. */
  id: string;
  organizationId: string;
  agentId: string;
  threadId: string;
  /** The person the job was sent for, or null. */
  endUserId: string | null;
  /** Request id of the call that created the job. */
  requestId: string;
  status: JobStatus;
  /** Arrival order across the whole store; assigned by `insert`. */
  seq: number;
  turnsTotal: number;
  /** Turns read so far (a turn counts once it is read, before its memory is committed). */
  turnsProcessed: number;
  error: string | null;
  /** True while the job waits behind another file of the agent (status `converting`). */
  queued: boolean;
  resumedAt: string | null;
  /** Set once a failed or cancelled job has settled. */
  learning: LearningReport | null;
  createdAt: string;
  updatedAt: string;
};

export type JobStore = {
  /**
   * Inserts the job with all its turns atomically and assigns `seq`. With `onlyIfIdle`, the insert
   * happens only when the agent has no job in a non-final status (the agent's single ingestion
   * slot): of N concurrent calls for an idle agent exactly one succeeds. Resolves the stored job,
   * or null when refused.
   */
  insert(request: { job: NewJobRecord; turns: TurnRecord[]; onlyIfIdle: boolean }): Promise<JobRecord | null>;
  get(request: { agentId: string; jobId: string }): Promise<JobRecord | null>;
  /**
   * Applies `patch` and resolves the updated job (null when absent). With `ifStatus`, atomically
   * applies it only while the job's status is one of those, and resolves null otherwise (a job
   * cancelled meanwhile MUST NOT be overwritten by a worker settling it).
   */
  update(request: {
    jobId: string;
    /** `details` replaces a document job's details (the only kind with any). */
    patch: Partial<Omit<JobFields, 'id' | 'seq' | 'organizationId' | 'agentId' | 'threadId'>> & { details?: DocumentJobDetails };
    ifStatus?: readonly JobStatus[];
  }): Promise<JobRecord | null>;
  /** The agent's oldest job (lowest `seq`) not in a final status, or null. */
  nextForAgent(request: { agentId: string }): Promise<JobRecord | null>;
  /** Jobs of the thread not in a final status with a lower `seq` (the job's queue depth). */
  countAhead(request: { threadId: string; seq: number }): Promise<number>;
  /**
   * The thread's jobs newest first (by `seq` descending), at most `limit`, only those with a `seq`
   * below `beforeSeq` when given (the next page of an inspector's list).
   */
  listForThread(request: { threadId: string; beforeSeq?: number; limit: number }): Promise<JobRecord[]>;
  /** Distinct agents that have a job not in a final status. */
  agentsWithUnfinishedJobs(): Promise<string[]>;
  /** Marks every non-final job of the thread cancelled (thread deletion). Resolves their ids. */
  cancelForThread(request: { threadId: string; at: string }): Promise<string[]>;
  /** Every job of the thread, whatever its status, oldest first (by `seq`): export reads them. */
  allForThread(request: { threadId: string }): Promise<JobRecord[]>;
  /** Jobs of the organization not in a final status, oldest first (by `seq`). */
  listUnfinished(request: { organizationId: string }): Promise<JobRecord[]>;
  /**
   * Appends turns after the job's last one (a deferred document conversion finishing) and adds
   * their number to `turnsTotal`, atomically. Resolves the updated job, or null when absent.
   */
  appendTurns(request: { jobId: string; turns: TurnRecord[] }): Promise<JobRecord | null>;
  /**
   * Erasure: removes the agent's jobs named by `jobIds` with their turns, their records of turns
   * not learned and their upload records (ids of another agent are ignored). Resolves how many
   * jobs were removed.
   */
  delete(request: { agentId: string; jobIds: readonly string[] }): Promise<number>;
};

/** Whether a stored JSON value is an object (not an array): for the `read…Details` readers. */
export const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The typed details of a job of `kind` from what a store kept (a JSON column): for adapters that
 * store `details` as untyped data, whatever version of the service wrote it. Throws on an unknown kind.
 */
export function readJobDetails(kind: unknown, raw: unknown): JobDetails {
  if (kind === 'observe' || kind === 'respond') return { kind, details: {} };
  if (kind !== 'document') throw new Error(`Unknown job kind ${JSON.stringify(kind)} in the store.`);
  const stored = isRecord(raw) ? raw : {};
  const details: DocumentJobDetails = {
    sourceId: typeof stored.sourceId === 'string' ? stored.sourceId : '',
    filename: typeof stored.filename === 'string' ? stored.filename : '',
    converting: stored.converting === true,
  };
  if (typeof stored.scannedPages === 'number') details.scannedPages = stored.scannedPages;
  return { kind, details };
}
