import type { Store, StoreAreas } from '../../ports/store/index.js';
import { inMemoryAgents } from './agents.js';
import { inMemoryUploads } from './uploads.js';
import { inMemoryIdempotency } from './idempotency.js';
import { inMemoryImages } from './images.js';
import { inMemoryErasures } from './erasures.js';
import { inMemoryJobs } from './jobs.js';
import { inMemoryTurns } from './turns.js';
import { inMemoryReceipts } from './receipts.js';
import { inMemoryRepoints } from './repoints.js';
import { inMemoryKeys } from './keys.js';
import { inMemoryNotLearned } from './not-learned.js';
import { inMemoryLeases } from './leases.js';
import { inMemoryLedger } from './ledger.js';
import { inMemoryLogs } from './logs.js';
import { inMemoryMessages } from './messages.js';
import { inMemoryOrganizations } from './organizations.js';
import { inMemoryRateLimits } from './rate-limits.js';
import { emptyState, type State } from './state.js';
import { inMemoryThreads } from './threads.js';
import { inMemoryWebhooks } from './webhooks.js';
import { inMemoryMemoryMarks } from './memory-marks.js';
import { inMemoryMaintenanceRuns } from './maintenance-runs.js';

/** Serializes transactions with every other operation, FIFO. */
class Mutex {
  #tail: Promise<void> = Promise.resolve();
  lock<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#tail.then(fn);
    this.#tail = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }
}

/** Every area over `get()` (one file per area, as in the port). */
function areas(get: () => State): StoreAreas {
  return {
    organizations: inMemoryOrganizations(get),
    keys: inMemoryKeys(get),
    agents: inMemoryAgents(get),
    threads: inMemoryThreads(get),
    messages: inMemoryMessages(get),
    logs: inMemoryLogs(get),
    leases: inMemoryLeases(get),
    jobs: inMemoryJobs(get),
    turns: inMemoryTurns(get),
    receipts: inMemoryReceipts(get),
    repoints: inMemoryRepoints(get),
    notLearned: inMemoryNotLearned(get),
    ledger: inMemoryLedger(get),
    rateLimits: inMemoryRateLimits(),
    uploads: inMemoryUploads(get),
    idempotency: inMemoryIdempotency(get),
    images: inMemoryImages(get),
    erasures: inMemoryErasures(get),
    webhooks: inMemoryWebhooks(get),
    memoryMarks: inMemoryMemoryMarks(get),
    maintenanceRuns: inMemoryMaintenanceRuns(get),
  };
}

/** Wraps every method of every area so it runs under the mutex. */
function locked(inner: StoreAreas, mutex: Mutex): StoreAreas {
  const result: Record<string, Record<string, unknown>> = {};
  for (const [areaName, area] of Object.entries(inner) as [string, Record<string, (...args: unknown[]) => Promise<unknown>>][]) {
    result[areaName] = Object.fromEntries(
      Object.entries(area).map(([method, fn]) => [method, (...args: unknown[]) => mutex.lock(() => fn(...args))]),
    );
  }
  return result as unknown as StoreAreas;
}

/**
 * The reference `Store`: everything in process memory, nothing persisted. Operations are
 * serialized; a transaction runs alone and is rolled back (from a snapshot) when it rejects.
 *
 * @example
 * const service = createMemoryService({ store: inMemoryStore() });
 */
export function inMemoryStore(): Store {
  let state = emptyState();
  const mutex = new Mutex();
  const direct = areas(() => state);
  return {
    specificationVersion: 'v1',
    id: 'in-memory',
    capabilities: { persistent: false, shared: false },
    async init() {},
    async close() {},
    ...locked(direct, mutex),
    transaction(fn) {
      return mutex.lock(async () => {
        const snapshot = structuredClone(state);
        try {
          return await fn(direct);
        } catch (error) {
          state = snapshot;
          throw error;
        }
      });
    },
  };
}
