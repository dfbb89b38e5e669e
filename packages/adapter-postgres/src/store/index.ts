import type { StoreAreas } from '@memory-agents/core/adapter';
import type { SqlClient } from '../sql-client.js';
import { postgresAgents } from './agents.js';
import { postgresDocuments } from './documents.js';
import { postgresIdempotency } from './idempotency.js';
import { postgresImages } from './images.js';
import { postgresJobs } from './jobs.js';
import { postgresKeys } from './keys.js';
import { postgresLearning } from './learning.js';
import { postgresLeases } from './leases.js';
import { postgresLedger } from './ledger.js';
import { postgresLogs } from './logs.js';
import { postgresMessages } from './messages.js';
import { postgresOrganizations } from './organizations.js';
import { postgresRateLimits } from './rate-limits.js';
import { postgresThreads } from './threads.js';

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
    learning: postgresLearning(db),
    ledger: postgresLedger(db),
    rateLimits: postgresRateLimits(db),
    documents: postgresDocuments(db),
    idempotency: postgresIdempotency(db),
    images: postgresImages(db),
  };
}
