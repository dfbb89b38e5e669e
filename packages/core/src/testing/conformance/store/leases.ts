import { expect } from 'vitest';
import type { StoreCase } from './harness.js';
import { T0 } from './harness.js';

/** Conformance cases of the `leases` area. */
export function leaseCases(test: StoreCase) {
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
}
