/**
 * The `Store` port: one file per area (`organizations.ts` ... `images.ts`, each holding the area's
 * records and methods); this file holds the port itself, its capabilities and the general contract.
 * The in-memory adapter (`in-memory/store/`), the PostgreSQL adapter (`adapter-postgres/src/store/`)
 * and the conformance suite (`testing/conformance/store/`) use the same file names.
 */
import type { OrganizationStore } from './organizations.js';
import type { KeyStore } from './keys.js';
import type { AgentStore } from './agents.js';
import type { ThreadStore } from './threads.js';
import type { MessageStore } from './messages.js';
import type { LogStore } from './logs.js';
import type { LeaseStore } from './leases.js';
import type { JobStore } from './jobs.js';
import type { TurnStore } from './turns.js';
import type { ReceiptStore } from './receipts.js';
import type { RepointStore } from './repoints.js';
import type { NotLearnedStore } from './not-learned.js';
import type { LedgerStore } from './ledger.js';
import type { RateLimitStore } from './rate-limits.js';
import type { UploadStore } from './uploads.js';
import type { IdempotencyStore } from './idempotency.js';
import type { ImageStore } from './images.js';
import type { ErasureStore } from './erasures.js';
import type { WebhookStore } from './webhooks.js';
import type { MemoryMarkStore } from './memory-marks.js';
import type { MaintenanceRunStore } from './maintenance-runs.js';

export type * from './organizations.js';
export type * from './keys.js';
export type * from './agents.js';
export type * from './threads.js';
export type * from './messages.js';
export type * from './logs.js';
export type * from './leases.js';
export type * from './jobs.js';
export type * from './turns.js';
export type * from './receipts.js';
export type * from './repoints.js';
export type * from './not-learned.js';
export type * from './ledger.js';
export type * from './rate-limits.js';
export type * from './uploads.js';
export type * from './idempotency.js';
export type * from './images.js';
export type * from './erasures.js';
export type * from './webhooks.js';
export type * from './memory-marks.js';
export type * from './maintenance-runs.js';
export { FINAL_JOB_STATUSES, readJobDetails } from './jobs.js';
export { readTurnDetails } from './turns.js';
export { CHUNK_STRATEGIES } from './uploads.js';
export { LEARNING_REASONS } from './not-learned.js';
export { WEBHOOK_EVENT_TYPES } from './webhooks.js';

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
  readonly turns: TurnStore;
  readonly receipts: ReceiptStore;
  readonly repoints: RepointStore;
  readonly notLearned: NotLearnedStore;
  readonly ledger: LedgerStore;
  readonly rateLimits: RateLimitStore;
  readonly uploads: UploadStore;
  readonly idempotency: IdempotencyStore;
  readonly images: ImageStore;
  readonly erasures: ErasureStore;
  readonly webhooks: WebhookStore;
  readonly memoryMarks: MemoryMarkStore;
  readonly maintenanceRuns: MaintenanceRunStore;
};
