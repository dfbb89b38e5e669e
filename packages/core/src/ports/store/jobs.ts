import type { LearningReason, LearningReport } from './learning.js';

/**
 * Store area `jobs`: observation jobs and their turns.
 * Part of the {@link Store} port (see `index.ts` for the general contract: absent is `null`,
 * records are copies, backend failures reject).
 */

export type JobStatus = 'queued' | 'converting' | 'processing' | 'committed' | 'failed' | 'cancelled' | 'interrupted';

/** Statuses after which a job never changes (spec "States / Observation job"). */
export const FINAL_JOB_STATUSES: readonly JobStatus[] = ['committed', 'failed', 'cancelled'];

export type JobKind = 'observe' | 'document' | 'respond';

export type JobRecord = {
  /** `obs_` id. */
  id: string;
  organizationId: string;
  agentId: string;
  threadId: string;
  /** The person the job was sent for, or null. */
  endUserId: string | null;
  /** Request id of the call that created the job. */
  requestId: string;
  kind: JobKind;
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
  /** Kind-specific data (document jobs keep their source and chunking settings here). */
  details: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
};

/**
 * Where a turn of a job stands: `pending` until learned; `read` once its input words were charged
 * (billing on: a resumed job never charges it again; with billing off a turn goes from `pending`
 * straight to a final state); `committed` (learned) and `failed` are final.
 */
export type TurnState = 'pending' | 'read' | 'committed' | 'failed';

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
  /** Kind-specific data (document turns keep their page). */
  details: Record<string, unknown>;
};

export type JobStore = {
  /**
   * Inserts the job with all its turns atomically and assigns `seq`. With `onlyIfIdle`, the insert
   * happens only when the agent has no job in a non-final status (the agent's single ingestion
   * slot): of N concurrent calls for an idle agent exactly one succeeds. Resolves the stored job,
   * or null when refused.
   */
  insert(request: { job: Omit<JobRecord, 'seq'>; turns: TurnRecord[]; onlyIfIdle: boolean }): Promise<JobRecord | null>;
  get(request: { agentId: string; jobId: string }): Promise<JobRecord | null>;
  /**
   * Applies `patch` and resolves the updated job (null when absent). With `ifStatus`, atomically
   * applies it only while the job's status is one of those, and resolves null otherwise (a job
   * cancelled meanwhile MUST NOT be overwritten by a worker settling it).
   */
  update(request: {
    jobId: string;
    patch: Partial<Omit<JobRecord, 'id' | 'seq' | 'organizationId' | 'agentId' | 'threadId'>>;
    ifStatus?: readonly JobStatus[];
  }): Promise<JobRecord | null>;
  /** The agent's oldest job (lowest `seq`) not in a final status, or null. */
  nextForAgent(request: { agentId: string }): Promise<JobRecord | null>;
  /** Jobs of the thread not in a final status with a lower `seq` (the job's queue depth). */
  countAhead(request: { threadId: string; seq: number }): Promise<number>;
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
  /** Counts of the job's turns per state. */
  turnCounts(request: { jobId: string }): Promise<Record<TurnState, number>>;
  /** Turns of the agent's jobs in state `committed` (what the agent has learned). */
  countCommittedTurns(request: { agentId: string }): Promise<number>;
  /** Marks every non-final job of the thread cancelled (thread deletion). Resolves their ids. */
  cancelForThread(request: { threadId: string; at: string }): Promise<string[]>;
  /** Jobs of the organization not in a final status, oldest first (by `seq`). */
  listUnfinished(request: { organizationId: string }): Promise<JobRecord[]>;
  /**
   * Appends turns after the job's last one (a deferred document conversion finishing) and adds
   * their number to `turnsTotal`, atomically. Resolves the updated job, or null when absent.
   */
  appendTurns(request: { jobId: string; turns: TurnRecord[] }): Promise<JobRecord | null>;
};
