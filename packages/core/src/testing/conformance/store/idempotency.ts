import { expect } from 'vitest';
import type { StoreCase } from './harness.js';
import { iso, T0 } from './harness.js';
import { key, organization } from './records.js';

/** Conformance cases of the `idempotency` area. */
export function idempotencyCases(test: StoreCase) {
  test('idempotency: exactly one of concurrent claims wins; completed keys replay; expired keys are replaced', async ({ store }) => {
    const record = { organizationId: 'org_1', key: 'k1', fingerprint: 'f1', createdAt: iso(T0) };
    const results = await Promise.all(Array.from({ length: 5 }, () => store.idempotency.claim({ record, notBefore: iso(T0 - 1000) })));
    expect(results.filter((r) => r === null)).toHaveLength(1);
    expect(results.filter((r) => r !== null).every((r) => r!.state === 'in_flight' && r!.fingerprint === 'f1')).toBe(true);
    await store.idempotency.complete({ organizationId: 'org_1', key: 'k1', status: 202, response: '{"a":1}' });
    expect(await store.idempotency.claim({ record: { ...record, fingerprint: 'f2' }, notBefore: iso(T0 - 1000) })).toEqual({ ...record, state: 'completed', status: 202, response: '{"a":1}' });
    // Another organization's key of the same name is separate.
    expect(await store.idempotency.claim({ record: { ...record, organizationId: 'org_2' }, notBefore: iso(T0 - 1000) })).toBeNull();
    // Once older than notBefore, a claim replaces it.
    expect(await store.idempotency.claim({ record: { ...record, fingerprint: 'f3', createdAt: iso(T0 + 5000) }, notBefore: iso(T0 + 1) })).toBeNull();
    expect((await store.idempotency.claim({ record, notBefore: iso(T0) }))?.fingerprint).toBe('f3');
    await store.idempotency.release({ organizationId: 'org_1', key: 'k1' });
    expect(await store.idempotency.claim({ record, notBefore: iso(T0) })).toBeNull();
  });

  test('idempotency: an in-flight key claimed before inFlightNotBefore is taken over; a completed one is kept', async ({ store }) => {
    const record = { organizationId: 'org_1', key: 'k1', fingerprint: 'f1', createdAt: iso(T0) };
    const notBefore = iso(T0 - 60_000);
    expect(await store.idempotency.claim({ record, notBefore })).toBeNull();
    // Claimed at or after inFlightNotBefore: still running, returned untouched.
    expect(await store.idempotency.claim({ record: { ...record, fingerprint: 'f2', createdAt: iso(T0 + 10) }, notBefore, inFlightNotBefore: iso(T0) })).toMatchObject({
      fingerprint: 'f1',
      state: 'in_flight',
    });
    // Claimed before it: abandoned by a stopped process, replaced by the new claim.
    expect(await store.idempotency.claim({ record: { ...record, fingerprint: 'f2', createdAt: iso(T0 + 10) }, notBefore, inFlightNotBefore: iso(T0 + 1) })).toBeNull();
    expect(await store.idempotency.claim({ record, notBefore })).toMatchObject({ fingerprint: 'f2', state: 'in_flight', createdAt: iso(T0 + 10) });
    await store.idempotency.complete({ organizationId: 'org_1', key: 'k1', status: 202, response: '{"b":2}' });
    expect(await store.idempotency.claim({ record: { ...record, fingerprint: 'f3' }, notBefore, inFlightNotBefore: iso(T0 + 1_000_000) })).toMatchObject({
      fingerprint: 'f2',
      state: 'completed',
      response: '{"b":2}',
    });
  });

  test('idempotency: a claim and its completion in one transaction commit together, and a rejected transaction leaves the key free', async ({ store, reopen }) => {
    const record = { organizationId: 'org_1', key: 'k-tx', fingerprint: 'f1', createdAt: iso(T0) };
    const notBefore = iso(T0 - 1000);
    await expect(
      store.transaction(async (tx) => {
        expect(await tx.idempotency.claim({ record, notBefore })).toBeNull();
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    await store.transaction(async (tx) => {
      expect(await tx.idempotency.claim({ record, notBefore })).toBeNull();
      await tx.idempotency.complete({ organizationId: 'org_1', key: 'k-tx', status: 202, response: '{"c":3}' });
    });
    const expected = { ...record, state: 'completed', status: 202, response: '{"c":3}' };
    expect(await store.idempotency.claim({ record: { ...record, fingerprint: 'other' }, notBefore })).toEqual(expected);
    if (reopen) expect(await (await reopen()).idempotency.claim({ record: { ...record, fingerprint: 'other' }, notBefore })).toEqual(expected);
  });
}
