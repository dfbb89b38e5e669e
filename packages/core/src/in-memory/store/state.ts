import type {
  AgentRecord,
  BillingAccountRecord,
  ErasureRecord,
  UploadRecord,
  IdempotencyRecord,
  ImageRecord,
  JobRecord,
  JobModelUsage,
  JobRepoint,
  JobPolicyDrop,
  JobSupersession,
  KeyRecord,
  NotLearnedRecord,
  LeaseRecord,
  LedgerEntryRecord,
  LogRecord,
  MaintenanceRunRecord,
  MemoryMarkRecord,
  MessageRecord,
  OrganizationRecord,
  ThreadRecord,
  TurnRecord,
  WebhookDeliveryRecord,
  WebhookEndpointRecord,
} from '../../ports/store/index.js';

/** Everything the in-memory store holds, every area's part; cloned whole for transaction rollback. */
export type State = {
  organizations: Map<string, OrganizationRecord>;
  keys: Map<string, KeyRecord>;
  agents: Map<string, AgentRecord>;
  threads: Map<string, ThreadRecord>;
  messages: Map<string, (MessageRecord & { seq: number })[]>;
  logs: LogRecord[];
  leases: Map<string, LeaseRecord>;
  jobs: Map<string, JobRecord>;
  turns: Map<string, TurnRecord[]>;
  /** Per job, the memories its learning superseded (receipts). */
  supersessions: Map<string, JobSupersession[]>;
  /** Per job, the model tokens of its learning batches (receipts). */
  modelUsage: Map<string, JobModelUsage[]>;
  /** Per job, turn index -> the memory the turn was merged into (receipts, erasure). */
  merges: Map<string, Map<number, string>>;
  /** Per job, memories the extraction policy did not keep (receipts, issue 44). */
  policyDrops: Map<string, JobPolicyDrop[]>;
  /** Per job, memory id -> an erasure's re-pointing not yet written (erasure). */
  repoints: Map<string, Map<string, JobRepoint>>;
  notLearned: NotLearnedRecord[];
  /** Arrival order of messages, log entries, jobs and ids of learning records. */
  sequence: number;
  ledger: { accounts: Map<string, BillingAccountRecord>; entries: LedgerEntryRecord[]; sequence: number };
  ingests: Map<string, UploadRecord>;
  idempotency: Map<string, IdempotencyRecord>;
  images: Map<string, ImageRecord>;
  erasures: Map<string, ErasureRecord>;
  /** Per agent id then memory id, the memory's mark (issue 42). */
  memoryMarks: Map<string, Map<string, MemoryMarkRecord>>;
  /** Maintenance runs by id (issue 43). */
  maintenanceRuns: Map<string, MaintenanceRunRecord>;
  webhooks: { endpoints: Map<string, WebhookEndpointRecord>; deliveries: Map<string, WebhookDeliveryRecord & { claimedBy: string | null; claimExpiresAt: number }>; sequence: number };
};

export function emptyState(): State {
  return {
    organizations: new Map(),
    keys: new Map(),
    agents: new Map(),
    threads: new Map(),
    messages: new Map(),
    logs: [],
    leases: new Map(),
    jobs: new Map(),
    turns: new Map(),
    supersessions: new Map(),
    modelUsage: new Map(),
    merges: new Map(),
    policyDrops: new Map(),
    repoints: new Map(),
    notLearned: [],
    sequence: 0,
    ledger: { accounts: new Map(), entries: [], sequence: 0 },
    ingests: new Map(),
    idempotency: new Map(),
    images: new Map(),
    erasures: new Map(),
    memoryMarks: new Map(),
    maintenanceRuns: new Map(),
    webhooks: { endpoints: new Map(), deliveries: new Map(), sequence: 0 },
  };
}

export const copy = <T>(value: T): T => structuredClone(value);
/** Counts against the organization's agents (an agent being imported does). */
export const isLive = (status: string) => status !== 'deleting' && status !== 'deleted';
/** Listed: live and not being imported. */
export const isListed = (status: string) => isLive(status) && status !== 'importing';
export const newestFirst = (a: { createdAt: string; id: string }, b: { createdAt: string; id: string }) =>
  a.createdAt === b.createdAt ? (a.id < b.id ? 1 : a.id > b.id ? -1 : 0) : a.createdAt < b.createdAt ? 1 : -1;

/** Forgets the jobs (and their turns) that `matches` selects, as deleting an agent or thread does. */
export function deleteJobs(state: State, matches: (job: JobRecord) => boolean): void {
  for (const [id, job] of state.jobs) {
    if (!matches(job)) continue;
    state.jobs.delete(id);
    state.turns.delete(id);
    state.supersessions.delete(id);
    state.modelUsage.delete(id);
    state.merges.delete(id);
    state.policyDrops.delete(id);
    state.repoints.delete(id);
  }
}

/** Forgets the ingests of an agent (or of one thread), as deletion of that agent or thread does. */
export function deleteIngests(state: State, matches: (record: UploadRecord) => boolean): void {
  for (const [jobId, record] of state.ingests) if (matches(record)) state.ingests.delete(jobId);
}
