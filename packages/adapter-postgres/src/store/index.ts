import type { StoreAreas } from '@memory-agents/core/adapter';
import type { SqlClient } from '../sql-client.js';
import { postgresAgents } from './agents.js';
import { postgresUploads } from './uploads.js';
import { postgresIdempotency } from './idempotency.js';
import { postgresImages } from './images.js';
import { postgresJobs } from './jobs.js';
import { postgresTurns } from './turns.js';
import { postgresReceipts } from './receipts.js';
import { postgresRepoints } from './repoints.js';
import { postgresKeys } from './keys.js';
import { postgresNotLearned } from './not-learned.js';
import { postgresLeases } from './leases.js';
import { postgresLedger } from './ledger.js';
import { postgresLogs } from './logs.js';
import { postgresMessages } from './messages.js';
import { postgresOrganizations } from './organizations.js';
import { postgresRateLimits } from './rate-limits.js';
import { postgresThreads } from './threads.js';
import { postgresErasures } from './erasures.js';
import { postgresWebhooks } from './webhooks.js';
import { postgresMemoryMarks } from './memory-marks.js';
import { postgresMaintenanceRuns } from './maintenance-runs.js';

/**
 * The store areas over one client (the pool, or one transaction's connection): one file per area,
 * the file names of the port (`@memory-agents/core`'s `ports/store/`).
 */
export function postgresStoreAreas(db: SqlClient): StoreAreas {
  return {
    organizations: postgresOrganizations(db),
    keys: postgresKeys(db),
    agents: postgresAgents(db),
    threads: postgresThreads(db),
    messages: postgresMessages(db),
    logs: postgresLogs(db),
    leases: postgresLeases(db),
    jobs: postgresJobs(db),
    turns: postgresTurns(db),
    receipts: postgresReceipts(db),
    repoints: postgresRepoints(db),
    notLearned: postgresNotLearned(db),
    ledger: postgresLedger(db),
    rateLimits: postgresRateLimits(db),
    uploads: postgresUploads(db),
    idempotency: postgresIdempotency(db),
    images: postgresImages(db),
    erasures: postgresErasures(db),
    webhooks: postgresWebhooks(db),
    memoryMarks: postgresMemoryMarks(db),
    maintenanceRuns: postgresMaintenanceRuns(db),
  };
}
