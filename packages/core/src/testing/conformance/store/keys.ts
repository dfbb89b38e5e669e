import { expect } from 'vitest';
import type { StoreCase } from './harness.js';
import { iso, T0 } from './harness.js';
import { key, organization } from './records.js';

/** Conformance cases of the `keys` area. */
export function keyCases(test: StoreCase) {
  test('keys: insert respects the live-key ceiling, ignoring revoked and expired keys', async ({ store }) => {
    const org = organization();
    await store.organizations.insert({ organization: org });
    const now = iso(T0 + 1000);
    expect(await store.keys.insert({ key: key(org.id), maxLive: 2, now })).toBe(true);
    expect(await store.keys.insert({ key: key(org.id, { revokedAt: iso(T0) }), maxLive: 2, now })).toBe(true);
    expect(await store.keys.insert({ key: key(org.id, { expiresAt: iso(T0) }), maxLive: 2, now })).toBe(true);
    expect(await store.keys.insert({ key: key(org.id), maxLive: 2, now })).toBe(true);
    expect(await store.keys.insert({ key: key(org.id), maxLive: 2, now })).toBe(false);
    expect(await store.keys.list({ organizationId: org.id })).toHaveLength(4);
  });

  test('keys: concurrent inserts at the ceiling never exceed it', async ({ store }) => {
    const org = organization();
    await store.organizations.insert({ organization: org });
    const now = iso(T0 + 1000);
    const results = await Promise.all(Array.from({ length: 8 }, () => store.keys.insert({ key: key(org.id), maxLive: 5, now })));
    expect(results.filter(Boolean)).toHaveLength(5);
    expect(await store.keys.list({ organizationId: org.id })).toHaveLength(5);
  });

  test('keys: get, list newest first, revoke keeps the first revocation time', async ({ store, reopen }) => {
    const org = organization();
    await store.organizations.insert({ organization: org });
    const older = key(org.id, { createdAt: iso(T0) });
    const newer = key(org.id, { createdAt: iso(T0 + 5000) });
    await store.keys.insert({ key: older, maxLive: 5, now: iso(T0) });
    await store.keys.insert({ key: newer, maxLive: 5, now: iso(T0) });
    expect(await store.keys.get({ keyId: older.keyId })).toEqual(older);
    expect(await store.keys.get({ keyId: 'kmissing' })).toBeNull();
    expect(await store.keys.getWithOrganization({ keyId: older.keyId })).toEqual({ key: older, organization: org });
    expect(await store.keys.getWithOrganization({ keyId: 'kmissing' })).toBeNull();
    expect((await store.keys.list({ organizationId: org.id })).map((k) => k.keyId)).toEqual([newer.keyId, older.keyId]);
    expect((await store.keys.revoke({ keyId: older.keyId, at: iso(T0 + 10) }))?.revokedAt).toBe(iso(T0 + 10));
    expect((await store.keys.revoke({ keyId: older.keyId, at: iso(T0 + 20) }))?.revokedAt).toBe(iso(T0 + 10));
    expect(await store.keys.revoke({ keyId: 'kmissing', at: iso(T0) })).toBeNull();
    expect((await store.keys.getWithOrganization({ keyId: older.keyId }))?.key.revokedAt).toBe(iso(T0 + 10));
    if (reopen) expect((await (await reopen()).keys.get({ keyId: older.keyId }))?.revokedAt).toBe(iso(T0 + 10));
  });
}
