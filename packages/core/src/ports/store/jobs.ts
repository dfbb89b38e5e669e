import type { MemorySourceRef } from '../memory-index.js';
import type { ModelUsage } from '../model-usage.js';
import type { LearningReason, LearningReport } from './not-learned.js';

/**
 * Store area `jobs`: observation jobs and their turns.
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

/**
 * Where a turn of a job stands: `pending` until learned; `read` once its input words were charged
 * (billing on: a resumed job never charges it again; with billing off a turn goes from `pending`
 * straight to a final state); `committed` (learned) and `failed` are final.
 */
export type TurnState = 'pending' | 'read' | 'committed' | 'failed';

/** Where a piece of a document comes from (the details of a document job's turn). */
export type DocumentTurnDetails = {
  sourceId: string;
  /** Null only in turns stored before the filename was kept per turn. */
  filename: string | null;
  /** 1-based page the piece starts on, or null when the format has no pages. */
  page: number | null;
  pageEnd: number | null;
  /** 0-based index of the piece in the whole document; null in turns stored before it was kept. */
  piece: number | null;
};

/**
 * The details of a turn: a document piece's origin, or none (`{}`) for a turn that was said; and
 * when the observe body said so, when its memories expire (issue 42).
 */
export type TurnDetails = (DocumentTurnDetails | { [K in keyof DocumentTurnDetails]?: undefined }) & {
  expiresAt?: string;
  /** The extraction policy rule that kept the writer from this turn (issue 44), as a sentence. */
  excludedBy?: string;
};

export type TurnRecord = {
  jobId: string;
  /** 0-based position in the job. */
  turnIndex: number;
  speaker: string;
  text: string;
  /** ISO date-time of the observation. */
  timestamp: string;
  tags: string[];
  state: TurnState;
  /** Learning reason when `failed`. */
  failureReason: LearningReason | null;
  /** Where a document turn comes from in its file; no fields for other turns. */
  details: TurnDetails;
};

/**
 * Memories a job's learning superseded (issue 33, receipts): `turnIndex` is the turn whose memory
 * replaced them, null for a supersession without a successor ("no longer true").
 */
export type JobSupersession = { turnIndex: number | null; memoryIds: string[] };

/**
 * A memory a turn's learning wrote that the agent's extraction policy did not keep (issue 44): its
 * category (null: none) and the rule, as the sentence the receipt shows.
 */
export type JobPolicyDrop = { turnIndex: number; category: string | null; rule: string };

/**
 * Model tokens one batch of a job's learning used (issue 33, receipts): the turns the batch sent to
 * the models (ascending) and, per model id, the tokens (the writer's language model, and the
 * embedder under its id with `outputTokens` 0).
 */
export type JobModelUsage = { turnIndexes: number[]; usage: ModelUsage[] };

/**
 * A turn of a job merged into an existing memory as a near-duplicate (issue 33): no memory of its
 * own, its source added to `memoryId`'s `alsoFrom`.
 */
export type JobMerge = { turnIndex: number; memoryId: string };

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
  /** Turns of a job in order, from `fromIndex`, at most `limit`. */
  listTurns(request: { jobId: string; fromIndex: number; limit: number }): Promise<TurnRecord[]>;
  /**
   * The turns named by `refs` (job id and turn index), read in one call: resolves those that exist,
   * each once (a ref named twice yields one turn), ordered by job id then turn index; refs naming
   * no turn are left out. Used where many jobs' turns are needed at once (a chat answer's citations).
   */
  getTurns(request: { refs: readonly { jobId: string; turnIndex: number }[] }): Promise<TurnRecord[]>;
  /** Sets the state (and failure reason) of the given turns; the job's `turnsProcessed` is recomputed. */
  setTurnStates(request: { jobId: string; turnIndexes: number[]; state: TurnState; failureReason?: LearningReason | null }): Promise<void>;
  /**
   * Records memories the job's learning superseded (appended to what is recorded; a memory id
   * recorded again for the job is kept once). Ignored when the job is absent.
   */
  recordSupersessions(request: { jobId: string; supersessions: readonly JobSupersession[] }): Promise<void>;
  /** What {@link JobStore.recordSupersessions} recorded for the job, one entry per turn (null last), ids in recording order. */
  supersessions(request: { jobId: string }): Promise<JobSupersession[]>;
  /**
   * Records the model tokens of one learning batch. It replaces what is recorded for every earlier
   * batch of the job that shares a turn with it (a batch re-run after a crash replaces, never adds);
   * a batch with no usage is not kept. Ignored when the job is absent.
   */
  recordModelUsage(request: { jobId: string; batch: JobModelUsage }): Promise<void>;
  /** What {@link JobStore.recordModelUsage} kept for the job, by first turn index, models in recorded order. */
  modelUsage(request: { jobId: string }): Promise<JobModelUsage[]>;
  /**
   * Records turns of the job merged into existing memories; a turn recorded again keeps the latest
   * memory id. Ignored when the job is absent. Goes with the job (`delete`).
   */
  recordMerges(request: { jobId: string; merges: readonly JobMerge[] }): Promise<void>;
  /** What {@link JobStore.recordMerges} recorded for the job, by turn index ascending. */
  merges(request: { jobId: string }): Promise<JobMerge[]>;
  /**
   * Records memories of the job's turns the extraction policy did not keep (issue 44, receipts);
   * a turn recorded again replaces its earlier entries (a resumed batch). Ignored when the job is
   * absent. Goes with the job (`delete`).
   */
  recordPolicyDrops(request: { jobId: string; drops: readonly JobPolicyDrop[] }): Promise<void>;
  /** What {@link JobStore.recordPolicyDrops} recorded for the job, by turn index ascending then recording order. */
  policyDrops(request: { jobId: string }): Promise<JobPolicyDrop[]>;
  /**
   * Erasure: records, durably and before the memory is deleted, that the job's memory
   * `repoint.memoryId` is being re-pointed (see {@link JobRepoint}); a memory recorded again for
   * the job replaces its entry. Ignored when the job is absent. Goes with the job (`delete`).
   */
  recordRepoint(request: { jobId: string; repoint: JobRepoint }): Promise<void>;
  /** What {@link JobStore.recordRepoint} recorded for the job and was not cleared, by memory id ascending. */
  repoints(request: { jobId: string }): Promise<JobRepoint[]>;
  /** Forgets the job's entry for `memoryId` (its rewrite is written); an absent entry is not an error. */
  clearRepoint(request: { jobId: string; memoryId: string }): Promise<void>;
  /** Counts of the job's turns per state. */
  turnCounts(request: { jobId: string }): Promise<Record<TurnState, number>>;
  /** Turns of the agent's jobs in state `committed` (what the agent has learned). */
  countCommittedTurns(request: { agentId: string }): Promise<number>;
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

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const numberOrNull = (value: unknown): number | null => (typeof value === 'number' && Number.isFinite(value) ? value : null);

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

/** The typed details of a turn from what a store kept (see {@link readJobDetails}). */
export function readTurnDetails(raw: unknown): TurnDetails {
  const expiry = {
    ...(isRecord(raw) && typeof raw.expiresAt === 'string' ? { expiresAt: raw.expiresAt } : {}),
    ...(isRecord(raw) && typeof raw.excludedBy === 'string' ? { excludedBy: raw.excludedBy } : {}),
  };
  if (!isRecord(raw) || typeof raw.sourceId !== 'string') return expiry;
  return {
    ...expiry,
    sourceId: raw.sourceId,
    filename: typeof raw.filename === 'string' ? raw.filename : null,
    page: numberOrNull(raw.page),
    pageEnd: numberOrNull(raw.pageEnd),
    piece: numberOrNull(raw.piece),
  };
}
