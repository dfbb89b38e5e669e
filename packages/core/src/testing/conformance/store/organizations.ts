import { expect } from 'vitest';
import type { StoreCase } from './harness.js';
import { organization } from './records.js';

/** Conformance cases of the `organizations` area. */
export function organizationCases(test: StoreCase) {
  test('organizations: insert, get, list and replace limits', async ({ store, reopen }) => {
    const org = organization({ limits: { maxAgents: 3 } });
    await store.organizations.insert({ organization: org });
    expect(await store.organizations.get({ id: org.id })).toEqual(org);
    expect(await store.organizations.get({ id: 'org_missing' })).toBeNull();
    expect((await store.organizations.list()).map((o) => o.id)).toContain(org.id);
    const updated = await store.organizations.updateLimits({ id: org.id, limits: { maxUploadBytes: 5 } });
    expect(updated?.limits).toEqual({ maxUploadBytes: 5 });
    expect(await store.organizations.updateLimits({ id: 'org_missing', limits: {} })).toBeNull();
    if (reopen) expect((await (await reopen()).organizations.get({ id: org.id }))?.limits).toEqual({ maxUploadBytes: 5 });
  });
}
