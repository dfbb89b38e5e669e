import type { LimitOverrides } from './limit-overrides.js';
import type { DocumentStore, IdempotencyStore, ImageStore } from './store-documents.js';
import type { LedgerStore, RateLimitStore } from './store-credits.js';

/**
 * Transactional state of the service, grouped by area.
 *
 * General contract:
 * - Absent records resolve `null` (or an empty list), never throw.
 * - Every method takes one object argument and returns plain data (no driver types).
 * - Records returned are copies: mutating them MUST NOT change stored state.
 * - Backend failures MUST reject; the service maps them to `service_unavailable`.
 * - `transaction(fn)` runs `fn` with a store whose writes commit together when `fn` resolves and
 *   are rolled back when it rejects. Transactions MUST NOT be nested.
 */
export type Store = StoreAreas & {
  readonly specificationVersion: 'v1';
  readonly id: string;
  readonly capabilities: StoreCapabilities;
  /** Idempotent: connects and applies migrations. */
  init(): Promise<void>;
  /** Closes what the adapter opened itself; idempotent. */
  close(): Promise<void>;
  transaction<T>(fn: (store: StoreAreas) => Promise<T>): Promise<T>;
};

export type StoreCapabilities = {
  /** Survives a process restart. */
  readonly persistent: boolean;
  /** Several processes may share it (job leases and limits hold across them). */
  readonly shared: boolean;
};

export type StoreAreas = {
  readonly organizations: OrganizationStore;
  readonly keys: KeyStore;
  readonly agents: AgentStore;
  readonly threads: ThreadStore;
  readonly messages: MessageStore;
  readonly logs: LogStore;
  readonly leases: LeaseStore;
  readonly jobs: JobStore;
  readonly learning: LearningStore;
  readonly ledger: LedgerStore;
  readonly rateLimits: RateLimitStore;
  readonly documents: DocumentStore;
  readonly idempotency: IdempotencyStore;
  readonly images: ImageStore;
};

// ---------------------------------------------------------------------------------------------
// Organizations

export type OrganizationRecord = {
  id: string;
  name: string;
  limits: LimitOverrides;
  createdAt: string;
};

export type OrganizationStore = {
  insert(request: { organization: OrganizationRecord }): Promise<void>;
  get(request: { id: string }): Promise<OrganizationRecord | null>;
  list(): Promise<OrganizationRecord[]>;
  /** Replaces `limits` whole. Resolves the updated record, or null when absent. */
  updateLimits(request: { id: string; limits: LimitOverrides }): Promise<OrganizationRecord | null>;
};

// ---------------------------------------------------------------------------------------------
// API keys

export type KeyRecord = {
  /** The public part of `sp_<key_id>_<secret>`; safe to log. */
  keyId: string;
  organizationId: string;
  /** Hex SHA-256 of the secret; the secret itself is never stored. */
  secretHash: string;
  createdAt: string;
  expiresAt: string;
  revokedAt: string | null;
};

export type KeyStore = {
  /**
   * Inserts the key only if the organization holds fewer than `maxLive` keys that are neither
   * revoked nor expired at `now`. Of N concurrent inserts at the ceiling, only as many succeed as
   * there are free places. Resolves false when the ceiling is reached.
   */
  insert(request: { key: KeyRecord; maxLive: number; now: string }): Promise<boolean>;
  get(request: { keyId: string }): Promise<KeyRecord | null>;
  /**
   * The key and its organization in one read: what authentication needs per request (a shared
   * database answers it in one round trip). Null when the key, or its organization, is absent.
   */
  getWithOrganization(request: { keyId: string }): Promise<{ key: KeyRecord; organization: OrganizationRecord } | null>;
  /** Every key of the organization, newest first, revoked and expired included. */
  list(request: { organizationId: string }): Promise<KeyRecord[]>;
  /** Sets `revokedAt` once; resolves the record (null when absent). Revoking twice keeps the first time. */
  revoke(request: { keyId: string; at: string }): Promise<KeyRecord | null>;
};

// ---------------------------------------------------------------------------------------------
// Agents

export type AgentStatus = 'initializing' | 'ready' | 'failed' | 'deleting' | 'deleted';

export type AgentConfig = {
  role: string;
  objective: string;
  metadata?: Record<string, unknown>;
};

export type AgentRecord = {
  id: string;
  organizationId: string;
  status: AgentStatus;
  config: AgentConfig;
  visibility: 'external';
  resumedFromTurn: number;
  /** Agent whose memory this one restores, while initializing. */
  restoreFrom: string | null;
  createdAt: string;
  updatedAt: string;
};

export type AgentStore = {
  /**
   * Inserts the agent only if the organization owns fewer than `maxLive` agents whose status is
   * not `deleting`/`deleted`. Concurrent inserts at the ceiling MUST NOT exceed it. Resolves false
   * when the ceiling is reached.
   */
  insert(request: { agent: AgentRecord; maxLive: number }): Promise<boolean>;
  get(request: { organizationId: string; agentId: string }): Promise<AgentRecord | null>;
  /** Agents not `deleting`/`deleted`, newest first (by `createdAt`, then id descending). */
  list(request: { organizationId: string }): Promise<AgentRecord[]>;
  /** Agents in any of `statuses`, across organizations (used on start to resume work). */
  listByStatus(request: { statuses: AgentStatus[] }): Promise<AgentRecord[]>;
  update(request: {
    organizationId: string;
    agentId: string;
    patch: Partial<Pick<AgentRecord, 'status' | 'config' | 'resumedFromTurn' | 'restoreFrom'>>;
    updatedAt: string;
  }): Promise<AgentRecord | null>;
  /** Removes the agent and everything under it (threads, messages, logs, and later areas' rows). */
  delete(request: { organizationId: string; agentId: string }): Promise<void>;
};

// ---------------------------------------------------------------------------------------------
// Threads and messages

export type ThreadStatus = 'provisioning' | 'ready' | 'deleting' | 'deleted';

export type ThreadRecord = {
  id: string;
  agentId: string;
  organizationId: string;
  /** The `eu_` id of the person who created it, or null when created without `X-SP-End-User`. */
  endUserId: string | null;
  status: ThreadStatus;
  title: string;
  metadata: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
};

export type ThreadStore = {
  insert(request: { thread: ThreadRecord }): Promise<void>;
  get(request: { agentId: string; threadId: string }): Promise<ThreadRecord | null>;
  /**
   * Threads of the agent not `deleting`/`deleted`, newest first (createdAt, then id descending);
   * with `endUserId`, only that person's threads.
   */
  list(request: { agentId: string; endUserId?: string }): Promise<ThreadRecord[]>;
  /** Threads in any of `statuses`, across agents and organizations (used on start to resume deletions). */
  listByStatus(request: { statuses: ThreadStatus[] }): Promise<ThreadRecord[]>;
  update(request: { agentId: string; threadId: string; patch: Partial<Pick<ThreadRecord, 'status' | 'title' | 'metadata'>>; updatedAt: string }): Promise<ThreadRecord | null>;
  /** Removes the thread and its messages. */
  delete(request: { agentId: string; threadId: string }): Promise<void>;
};

export type MessageRecord = {
  threadId: string;
  agentId: string;
  speaker: string;
  text: string;
  timestamp: string;
  sourceIds: string[];
};

export type MessageStore = {
  /**
   * Appends in order; a later append sorts after an earlier one. With `logEntries`, also appends
   * them to the activity log as `LogStore.append` would (increasing `logId`s, in order), in the same
   * call and atomically with the messages: both are stored or neither (an answered chat turn
   * records its messages and activity in one store round trip).
   */
  append(request: { messages: MessageRecord[]; logEntries?: Omit<LogRecord, 'logId'>[] }): Promise<void>;
  /** The `limit` most recent messages of the thread, oldest first. */
  listRecent(request: { threadId: string; limit: number }): Promise<MessageRecord[]>;
};

// ---------------------------------------------------------------------------------------------
// Activity logs

export type LogRecord = {
  /** Assigned by the store, increasing. */
  logId: number;
  organizationId: string;
  agentId: string;
  threadId: string;
  userId: string;
  actorEmail: string;
  actorDisplayName: string;
  direction: string;
  route: string;
  requestId: string;
  createdAt: string;
};

export type LogStore = {
  /** Assigns increasing `logId`s and returns them. */
  append(request: { entries: Omit<LogRecord, 'logId'>[] }): Promise<number[]>;
  /** Newest first; with `beforeLogId`, only entries with a smaller id. */
  list(request: { agentId: string; limit: number; beforeLogId?: number }): Promise<LogRecord[]>;
};

// ---------------------------------------------------------------------------------------------
// Leases (named, expiring, exclusive)

export type LeaseRecord = { name: string; holder: string; expiresAt: number };

export type LeaseStore = {
  /**
   * Takes the lease when it is free, expired, or already held by `holder` (then it is extended).
   * Of N concurrent calls for a free lease by different holders, exactly one MUST succeed.
   */
  acquire(request: { name: string; holder: string; ttlMs: number; now: number }): Promise<boolean>;
  /** Extends a lease still held by `holder`; false when it was lost (expired and taken). */
  renew(request: { name: string; holder: string; ttlMs: number; now: number }): Promise<boolean>;
  /** Frees the lease when held by `holder`; a no-op otherwise. */
  release(request: { name: string; holder: string }): Promise<void>;
  get(request: { name: string }): Promise<LeaseRecord | null>;
};

// ---------------------------------------------------------------------------------------------
// Observation jobs and their turns

export type JobStatus = 'queued' | 'converting' | 'processing' | 'committed' | 'failed' | 'cancelled' | 'interrupted';

/** Statuses after which a job never changes (spec "States / Observation job"). */
export const FINAL_JOB_STATUSES: readonly JobStatus[] = ['committed', 'failed', 'cancelled'];

export type JobKind = 'observe' | 'document' | 'respond';

/** The turns a finished job did not learn, and why (spec "ObservationLearning"). */
export type LearningReport = {
  /** 1-based inclusive ranges of the job's turns. */
  ranges: { first: number; last: number }[];
  reason: string;
  message: string;
  /** Decimal string of credits refunded for the input side, or null when nothing was charged. */
  refundedCredits: string | null;
};

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
  failureReason: string | null;
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
  setTurnStates(request: { jobId: string; turnIndexes: number[]; state: TurnState; failureReason?: string | null }): Promise<void>;
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

// ---------------------------------------------------------------------------------------------
// Learning records (turns not learned, per thread)

export type LearningRecord = LearningReport & {
  /** Assigned by the store, increasing. */
  id: number;
  organizationId: string;
  agentId: string;
  threadId: string;
  jobId: string;
  /** Request id of the call whose turns were not learned. */
  requestId: string;
  /** True once a chat response in the thread reported it. */
  reported: boolean;
  createdAt: string;
};

export type LearningStore = {
  insert(request: { record: Omit<LearningRecord, 'id' | 'reported'> }): Promise<number>;
  /** Newest first; with `beforeId`, only records with a smaller id. */
  list(request: { threadId: string; limit: number; beforeId?: number }): Promise<LearningRecord[]>;
  /**
   * Marks the thread's unreported records reported and resolves them, oldest first. Of concurrent
   * calls, each record is returned by exactly one.
   */
  takeUnreported(request: { threadId: string }): Promise<LearningRecord[]>;
};
