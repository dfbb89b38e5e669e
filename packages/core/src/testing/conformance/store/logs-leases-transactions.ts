import { expect } from 'vitest';
import { logEntry } from './agents-and-threads.js';
import type { storeCase } from './harness.js';
import { T0 } from './harness.js';
import { agent, organization } from './records.js';

export function logLeaseTransactionCases(test: ReturnType<typeof storeCase>) {
  test('logs: ids increase, list is newest first and pages with beforeLogId', async ({ store }) => {
    const org = organization();
    await store.organizations.insert({ organization: org });
    const record = agent(org.id);
    await store.agents.insert({ agent: record, maxLive: 10 });
    const ids = await store.logs.append({ entries: Array.from({ length: 5 }, () => logEntry(org.id, record.id, '')) });
    expect([...ids].sort((a, b) => a - b)).toEqual(ids);
    const first = await store.logs.list({ agentId: record.id, limit: 2 });
    expect(first.map((e) => e.logId)).toEqual([ids[4], ids[3]]);
    const second = await store.logs.list({ agentId: record.id, limit: 10, beforeLogId: first[1]!.logId });
    expect(second.map((e) => e.logId)).toEqual([ids[2], ids[1], ids[0]]);
    expect(second[0]).toMatchObject({ route: 'chat', direction: 'user', userId: org.id, requestId: 'req_1' });
  });

  test('leases: exactly one of many concurrent acquirers wins', async ({ store }) => {
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => store.leases.acquire({ name: 'ingest:a', holder: `h${i}`, ttlMs: 10_000, now: T0 })),
    );
    expect(results.filter(Boolean)).toHaveLength(1);
    const winner = `h${results.indexOf(true)}`;
    expect((await store.leases.get({ name: 'ingest:a' }))?.holder).toBe(winner);
  });

  test('leases: the holder re-acquires and renews; others wait until expiry', async ({ store }) => {
    expect(await store.leases.acquire({ name: 'l', holder: 'a', ttlMs: 1000, now: T0 })).toBe(true);
    expect(await store.leases.acquire({ name: 'l', holder: 'a', ttlMs: 1000, now: T0 + 10 })).toBe(true);
    expect(await store.leases.acquire({ name: 'l', holder: 'b', ttlMs: 1000, now: T0 + 500 })).toBe(false);
    expect(await store.leases.renew({ name: 'l', holder: 'a', ttlMs: 1000, now: T0 + 900 })).toBe(true);
    expect(await store.leases.acquire({ name: 'l', holder: 'b', ttlMs: 1000, now: T0 + 1500 })).toBe(false);
    expect(await store.leases.acquire({ name: 'l', holder: 'b', ttlMs: 1000, now: T0 + 1901 })).toBe(true);
    expect(await store.leases.renew({ name: 'l', holder: 'a', ttlMs: 1000, now: T0 + 1902 })).toBe(false);
  });

  test('leases: release frees only when held by the caller', async ({ store, reopen }) => {
    await store.leases.acquire({ name: 'l', holder: 'a', ttlMs: 1000, now: T0 });
    await store.leases.release({ name: 'l', holder: 'b' });
    expect((await store.leases.get({ name: 'l' }))?.holder).toBe('a');
    if (reopen) expect((await (await reopen()).leases.get({ name: 'l' }))?.expiresAt).toBe(T0 + 1000);
    await store.leases.release({ name: 'l', holder: 'a' });
    expect(await store.leases.get({ name: 'l' })).toBeNull();
    expect(await store.leases.acquire({ name: 'l', holder: 'b', ttlMs: 1000, now: T0 })).toBe(true);
  });

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
