import { Decimal } from 'decimal.js';
import { expect } from 'vitest';
import type { NewLedgerEntry, StoreAreas } from '../../../ports/store/index.js';
import type { StoreCase } from './harness.js';
import { iso, T0 } from './harness.js';
import { job, organization } from './records.js';

const entry = (overrides: Partial<NewLedgerEntry> = {}): NewLedgerEntry => ({
  kind: 'charge',
  route: 'chat',
  inWords: 3,
  outWords: 2,
  cost: '1',
  reference: null,
  jobId: null,
  turnCosts: {},
  createdAt: iso(T0),
  ...overrides,
});

async function account(store: StoreAreas, balance: string) {
  const org = organization();
  await store.organizations.insert({ organization: org });
  await store.ledger.configure({ organizationId: org.id, patch: { enabled: true } });
  if (balance !== '0') {
    await store.ledger.append({ organizationId: org.id, entry: entry({ kind: 'grant', route: 'credits_add', inWords: 0, outWords: 0, cost: `-${balance}` }), requireFunds: false });
  }
  return org.id;
}

/** Balance = minus the sum of every entry's cost (grants and refunds are negative costs). */
async function sumOfEntries(store: StoreAreas, organizationId: string): Promise<string> {
  const entries = await store.ledger.list({ organizationId, limit: 10_000 });
  return entries.reduce((total, e) => total.minus(e.cost), new Decimal(0)).toFixed();
}

/** Conformance cases of the `ledger` area. */
export function ledgerCases(test: StoreCase) {
  test('ledger: configure opens an account with defaults and patches only given fields', async ({ store, reopen }) => {
    const org = organization();
    await store.organizations.insert({ organization: org });
    expect(await store.ledger.getAccount({ organizationId: org.id })).toBeNull();
    const opened = await store.ledger.configure({ organizationId: org.id, patch: {} });
    expect(opened).toEqual({ organizationId: org.id, enabled: false, lowCreditThreshold: '0', prices: {}, balance: '0' });
    await store.ledger.configure({ organizationId: org.id, patch: { enabled: true, prices: { inputWord: '0.5' } } });
    const patched = await store.ledger.configure({ organizationId: org.id, patch: { lowCreditThreshold: '12.50' } });
    expect(patched).toEqual({ organizationId: org.id, enabled: true, lowCreditThreshold: '12.5', prices: { inputWord: '0.5' }, balance: '0' });
    if (reopen) expect(await (await reopen()).ledger.getAccount({ organizationId: org.id })).toEqual(patched);
  });

  test('ledger: amounts are exact decimals and the balance is minus the sum of the entries', async ({ store }) => {
    const id = await account(store, '0.3');
    expect((await store.ledger.append({ organizationId: id, entry: entry({ cost: '0.1' }), requireFunds: true })).ok).toBe(true);
    const second = await store.ledger.append({ organizationId: id, entry: entry({ cost: '0.2' }), requireFunds: true });
    expect(second).toMatchObject({ ok: true, balance: '0', entry: { cost: '0.2', entryId: expect.any(Number) } });
    expect((await store.ledger.getAccount({ organizationId: id }))!.balance).toBe('0');
    expect(await sumOfEntries(store, id)).toBe('0');
    // A tiny amount stays exact (no binary floating point on the way).
    await store.ledger.append({ organizationId: id, entry: entry({ kind: 'grant', cost: '-0.000000000000000001' }), requireFunds: false });
    expect((await store.ledger.getAccount({ organizationId: id }))!.balance).toBe('0.000000000000000001');
  });

  test('ledger: requireFunds refuses when the balance is <= 0 or below the cost, and changes nothing', async ({ store }) => {
    const id = await account(store, '1');
    expect(await store.ledger.append({ organizationId: id, entry: entry({ cost: '1.5' }), requireFunds: true })).toEqual({ ok: false, reason: 'insufficient', balance: '1' });
    expect((await store.ledger.append({ organizationId: id, entry: entry({ cost: '1' }), requireFunds: true })).ok).toBe(true);
    expect((await store.ledger.append({ organizationId: id, entry: entry({ cost: '0' }), requireFunds: true })).ok).toBe(false);
    // Without requireFunds (a grant, a refund, a settled adjustment) the entry always goes in.
    expect((await store.ledger.append({ organizationId: id, entry: entry({ cost: '2' }), requireFunds: false })).ok).toBe(true);
    expect((await store.ledger.getAccount({ organizationId: id }))!.balance).toBe('-2');
    expect(await store.ledger.list({ organizationId: id, limit: 10 })).toHaveLength(3);
    expect(await store.ledger.append({ organizationId: 'org_missing', entry: entry(), requireFunds: false })).toEqual({ ok: false, reason: 'no_account', balance: null });
  });

  test('ledger: N parallel charges against a small balance never overdraw', async ({ store }) => {
    const id = await account(store, '2.5');
    const results = await Promise.all(Array.from({ length: 12 }, () => store.ledger.append({ organizationId: id, entry: entry({ cost: '0.5' }), requireFunds: true })));
    expect(results.filter((result) => result.ok)).toHaveLength(5);
    const balance = (await store.ledger.getAccount({ organizationId: id }))!.balance;
    expect(balance).toBe('0');
    expect(await sumOfEntries(store, id)).toBe(balance);
  });

  test('ledger: a reference is used at most once, even by concurrent appends (a refund happens once)', async ({ store }) => {
    const id = await account(store, '1');
    const refund = () =>
      store.ledger.append({ organizationId: id, entry: entry({ kind: 'refund', route: 'refund', cost: '-0.25', reference: 'refund:obs_1', jobId: 'obs_1' }), requireFunds: false });
    const results = await Promise.all(Array.from({ length: 8 }, refund));
    expect(results.filter((result) => result.ok)).toHaveLength(1);
    expect(results.filter((result) => !result.ok).every((result) => !result.ok && result.reason === 'duplicate')).toBe(true);
    expect((await store.ledger.getAccount({ organizationId: id }))!.balance).toBe('1.25');
    expect(await store.ledger.listForJob({ organizationId: id, jobId: 'obs_1' })).toHaveLength(1);
    // References are per organization.
    const other = await account(store, '0');
    expect((await store.ledger.append({ organizationId: other, entry: entry({ cost: '-1', reference: 'refund:obs_1' }), requireFunds: false })).ok).toBe(true);
  });

  test('ledger: settle lowers a charge and returns the difference; remove takes the entry back out', async ({ store }) => {
    const id = await account(store, '10');
    const held = await store.ledger.append({ organizationId: id, entry: entry({ cost: '4', outWords: 500 }), requireFunds: true });
    if (!held.ok) throw new Error('hold refused');
    const settled = await store.ledger.settle({ organizationId: id, entryId: held.entry.entryId, outWords: 20, cost: '1.04' });
    expect(settled).toMatchObject({ entryId: held.entry.entryId, outWords: 20, cost: '1.04' });
    expect((await store.ledger.getAccount({ organizationId: id }))!.balance).toBe('8.96');
    await expect(store.ledger.settle({ organizationId: id, entryId: held.entry.entryId, outWords: 20, cost: '2' })).rejects.toThrow();
    const second = await store.ledger.append({ organizationId: id, entry: entry({ cost: '3' }), requireFunds: true });
    if (!second.ok) throw new Error('second refused');
    await store.ledger.settle({ organizationId: id, entryId: second.entry.entryId, outWords: 0, cost: '0', remove: true });
    expect((await store.ledger.getAccount({ organizationId: id }))!.balance).toBe('8.96');
    expect((await store.ledger.list({ organizationId: id, limit: 10 })).map((e) => e.entryId)).not.toContain(second.entry.entryId);
    expect(await sumOfEntries(store, id)).toBe('8.96');
    expect(await store.ledger.settle({ organizationId: id, entryId: 999_999, outWords: 0, cost: '0' })).toBeNull();
  });

  test('ledger: list is newest first, pages with beforeEntryId, and keeps organizations apart', async ({ store }) => {
    const id = await account(store, '100');
    const other = await account(store, '100');
    const ids: number[] = [];
    for (let i = 0; i < 5; i++) {
      const result = await store.ledger.append({ organizationId: id, entry: entry({ cost: String(i + 1), jobId: i < 2 ? 'obs_j' : null, turnCosts: { [String(i)]: String(i + 1) } }), requireFunds: true });
      if (result.ok) ids.push(result.entry.entryId);
    }
    const first = await store.ledger.list({ organizationId: id, limit: 3 });
    expect(first.map((e) => e.entryId)).toEqual([ids[4], ids[3], ids[2]]);
    const next = await store.ledger.list({ organizationId: id, limit: 3, beforeEntryId: first.at(-1)!.entryId });
    expect(next.map((e) => e.entryId)).toEqual([ids[1], ids[0], expect.any(Number)]);
    expect(next[2]!.kind).toBe('grant');
    const job = await store.ledger.listForJob({ organizationId: id, jobId: 'obs_j' });
    expect(job.map((e) => e.turnCosts)).toEqual([{ '0': '1' }, { '1': '2' }]);
    expect((await store.ledger.list({ organizationId: other, limit: 10 })).every((e) => e.organizationId === other)).toBe(true);
  });

  test('ledger: a charge and a turn state change in one transaction roll back together', async ({ store }) => {
    const id = await account(store, '5');
    await expect(
      store.transaction(async (tx) => {
        await tx.ledger.append({ organizationId: id, entry: entry({ cost: '1', reference: 'read:obs_x:0' }), requireFunds: true });
        throw new Error('crash before the turn was marked read');
      }),
    ).rejects.toThrow('crash');
    expect((await store.ledger.getAccount({ organizationId: id }))!.balance).toBe('5');
    const again = await store.transaction((tx) => tx.ledger.append({ organizationId: id, entry: entry({ cost: '1', reference: 'read:obs_x:0' }), requireFunds: true }));
    expect(again.ok).toBe(true);
  });
}
