import { describe, expect } from 'vitest';
import { organizationCases } from './organizations.js';
import { keyCases } from './keys.js';
import { agentCases } from './agents.js';
import { threadCases } from './threads.js';
import { messageCases } from './messages.js';
import { logCases } from './logs.js';
import { leaseCases } from './leases.js';
import { jobCases } from './jobs.js';
import { turnCases } from './turns.js';
import { receiptCases } from './receipts.js';
import { repointCases } from './repoints.js';
import { learningCases } from './not-learned.js';
import { documentCases } from './uploads.js';
import { idempotencyCases } from './idempotency.js';
import { imageCases } from './images.js';
import { erasureCases } from './erasures.js';
import { ledgerCases } from './ledger.js';
import { rateLimitCases } from './rate-limits.js';
import { webhookCases } from './webhooks.js';
import { memoryMarkCases } from './memory-marks.js';
import { maintenanceRunCases } from './maintenance-runs.js';
import { storeCase, T0, type StoreCase } from './harness.js';
import { agent, organization } from './records.js';
import type { StoreConformanceOptions } from './types.js';

export type { StoreConformanceOptions } from './types.js';

/**
 * The `Store` conformance suite, one file of cases per store area (the port's file names), the
 * general contract (transactions) here. Run it against any adapter:
 *
 * @example
 * describeStoreConformance({ name: 'in-memory', create: async () => ({ store: inMemoryStore() }) });
 */
export function describeStoreConformance(options: StoreConformanceOptions): void {
  describe(`Store conformance: ${options.name}`, () => {
    const test = storeCase(options);
    organizationCases(test);
    keyCases(test);
    agentCases(test);
    threadCases(test);
    messageCases(test);
    logCases(test);
    leaseCases(test);
    transactionCases(test);
    jobCases(test);
    turnCases(test);
    receiptCases(test);
    repointCases(test);
    learningCases(test);
    documentCases(test);
    idempotencyCases(test);
    imageCases(test);
    erasureCases(test);
    ledgerCases(test);
    rateLimitCases(test);
    webhookCases(test);
    memoryMarkCases(test);
    maintenanceRunCases(test);
  });
}

/** Conformance cases of `transaction` (the general contract). */
function transactionCases(test: StoreCase) {
  test('transactions: writes commit together, and a rejection rolls every write back', async ({ store }) => {
    const committed = organization();
    await store.transaction(async (tx) => {
      await tx.organizations.insert({ organization: committed });
      await tx.agents.insert({ agent: agent(committed.id), maxLive: 10 });
    });
    expect(await store.organizations.get({ id: committed.id })).not.toBeNull();
    expect(await store.agents.list({ organizationId: committed.id })).toHaveLength(1);

    const rolledBack = organization();
    await expect(
      store.transaction(async (tx) => {
        await tx.organizations.insert({ organization: rolledBack });
        await tx.leases.acquire({ name: 'tx', holder: 'a', ttlMs: 1000, now: T0 });
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(await store.organizations.get({ id: rolledBack.id })).toBeNull();
    expect(await store.leases.get({ name: 'tx' })).toBeNull();
  });

  test('transactions: concurrent transactions do not lose each other\'s writes', async ({ store }) => {
    const org = organization();
    await store.organizations.insert({ organization: org });
    await Promise.all(
      Array.from({ length: 5 }, () =>
        store.transaction(async (tx) => {
          await tx.agents.insert({ agent: agent(org.id), maxLive: 100 });
        }),
      ),
    );
    expect(await store.agents.list({ organizationId: org.id })).toHaveLength(5);
  });
}
