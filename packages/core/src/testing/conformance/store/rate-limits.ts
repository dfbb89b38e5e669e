import { expect } from 'vitest';
import type { StoreCase } from './harness.js';
import { T0 } from './harness.js';
import { key, organization } from './records.js';

const window = (key: string, limit: number, windowMs = 10_000) => ({ key, limit, windowMs });

/** Conformance cases of the `rate-limits` area. */
export function rateLimitCases(test: StoreCase) {
  test('rate limits: the N-th hit in a window is admitted, the N+1-th refused, and the window slides', async ({ store }) => {
    const key = `w-${Math.random()}`;
    for (let i = 0; i < 3; i++) {
      const hit = await store.rateLimits.hit({ windows: [window(key, 3)], now: T0 + i * 1000 });
      expect(hit).toMatchObject({ admitted: true, refusedKey: null, windows: [{ key, limit: 3, count: i + 1, resetAt: T0 + 10_000 }] });
    }
    const refused = await store.rateLimits.hit({ windows: [window(key, 3)], now: T0 + 9_999 });
    expect(refused).toEqual({ admitted: false, refusedKey: key, windows: [{ key, limit: 3, count: 3, resetAt: T0 + 10_000 }] });
    // The first hit leaves the window at T0 + 10 s: one place frees up, not three.
    const slid = await store.rateLimits.hit({ windows: [window(key, 3)], now: T0 + 10_000 });
    expect(slid).toMatchObject({ admitted: true, windows: [{ count: 3, resetAt: T0 + 11_000 }] });
    expect((await store.rateLimits.hit({ windows: [window(key, 3)], now: T0 + 10_500 })).admitted).toBe(false);
  });

  test('rate limits: a refused hit counts in no window (all or nothing)', async ({ store }) => {
    const subject = `s-${Math.random()}`;
    const organization = `o-${Math.random()}`;
    await store.rateLimits.hit({ windows: [window(subject, 1), window(organization, 5)], now: T0 });
    const refused = await store.rateLimits.hit({ windows: [window(subject, 1), window(organization, 5)], now: T0 + 1 });
    expect(refused.admitted).toBe(false);
    expect(refused.refusedKey).toBe(subject);
    // Another subject of the same organization: the refused call did not use an organization place.
    const other = `s2-${Math.random()}`;
    const hit = await store.rateLimits.hit({ windows: [window(other, 1), window(organization, 5)], now: T0 + 2 });
    expect(hit.windows[1]).toMatchObject({ key: organization, count: 2 });
  });

  test('rate limits: of N concurrent hits on a window with k places, exactly k are admitted', async ({ store }) => {
    const key = `c-${Math.random()}`;
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => store.rateLimits.hit({ windows: [window(key, 4, 60_000)], now: T0 + i })));
    expect(results.filter((result) => result.admitted)).toHaveLength(4);
  });

  test('rate limits: gates admit up to the limit, also concurrently; release and expiry free places', async ({ store }) => {
    const gate = { key: `g-${Math.random()}`, limit: 2 };
    const organization = { key: `go-${Math.random()}`, limit: 3 };
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) => store.rateLimits.acquire({ gates: [gate, organization], holder: `h${i}`, ttlMs: 60_000, now: T0 })),
    );
    const winners = results.map((result, i) => (result.acquired ? `h${i}` : null)).filter((holder): holder is string => holder !== null);
    expect(winners).toHaveLength(2);
    expect(results.find((result) => !result.acquired)?.refusedKey).toBe(gate.key);
    await store.rateLimits.release({ keys: [gate.key, organization.key], holder: winners[0]! });
    expect((await store.rateLimits.acquire({ gates: [gate, organization], holder: 'late', ttlMs: 60_000, now: T0 + 1 })).acquired).toBe(true);
    // A place whose holder died frees itself after its ttl.
    expect((await store.rateLimits.acquire({ gates: [gate], holder: 'after', ttlMs: 60_000, now: T0 + 2 })).acquired).toBe(false);
    expect((await store.rateLimits.acquire({ gates: [gate], holder: 'after', ttlMs: 60_000, now: T0 + 60_001 })).acquired).toBe(true);
    // The organization gate counts places across subjects.
    const shared = { key: `gs-${Math.random()}`, limit: 1 };
    expect((await store.rateLimits.acquire({ gates: [{ key: `a-${Math.random()}`, limit: 2 }, shared], holder: 'x', ttlMs: 1000, now: T0 })).acquired).toBe(true);
    const blocked = await store.rateLimits.acquire({ gates: [{ key: `b-${Math.random()}`, limit: 2 }, shared], holder: 'y', ttlMs: 1000, now: T0 });
    expect(blocked).toEqual({ acquired: false, refusedKey: shared.key });
  });
}
