import { describe } from 'vitest';
import { agentAndThreadCases } from './agents-and-threads.js';
import { storeCase } from './harness.js';
import { documentCases } from './documents.js';
import { jobCases } from './jobs.js';
import { ledgerCases } from './ledger.js';
import { logLeaseTransactionCases } from './logs-leases-transactions.js';
import { organizationAndKeyCases } from './organizations-and-keys.js';
import { rateLimitCases } from './rate-limits.js';
import type { StoreConformanceOptions } from './types.js';

export type { StoreConformanceOptions } from './types.js';

/**
 * The `Store` conformance suite. Run it against any adapter:
 *
 * @example
 * describeStoreConformance({ name: 'in-memory', create: async () => ({ store: inMemoryStore() }) });
 */
export function describeStoreConformance(options: StoreConformanceOptions): void {
  describe(`Store conformance: ${options.name}`, () => {
    const test = storeCase(options);
    organizationAndKeyCases(test);
    agentAndThreadCases(test);
    logLeaseTransactionCases(test);
    jobCases(test);
    documentCases(test);
    ledgerCases(test);
    rateLimitCases(test);
  });
}
