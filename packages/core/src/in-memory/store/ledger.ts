import { Decimal } from 'decimal.js';
import { copy, type State } from './state.js';
import type { BillingAccountRecord, LedgerEntryRecord, LedgerStore } from '../../ports/store/index.js';

const plain = (value: Decimal) => value.toFixed();

/** The in-memory `LedgerStore` over `get()` (the store serializes every call). */
export function inMemoryLedger(store: () => State): LedgerStore {
  const get = () => store().ledger;
  return {
    async getAccount({ organizationId }) {
      const account = get().accounts.get(organizationId);
      return account ? copy(account) : null;
    },
    async configure({ organizationId, patch }) {
      const state = get();
      const account = state.accounts.get(organizationId) ?? { organizationId, enabled: false, lowCreditThreshold: '0', prices: {}, balance: '0' };
      if (patch.enabled !== undefined) account.enabled = patch.enabled;
      if (patch.lowCreditThreshold !== undefined) account.lowCreditThreshold = plain(new Decimal(patch.lowCreditThreshold));
      if (patch.prices !== undefined) account.prices = copy(patch.prices);
      state.accounts.set(organizationId, account);
      return copy(account);
    },
    async append({ organizationId, entry, requireFunds }) {
      const state = get();
      const account = state.accounts.get(organizationId);
      if (!account) return { ok: false, reason: 'no_account', balance: null };
      if (entry.reference !== null && state.entries.some((e) => e.organizationId === organizationId && e.reference === entry.reference)) {
        return { ok: false, reason: 'duplicate', balance: account.balance };
      }
      const balance = new Decimal(account.balance);
      const cost = new Decimal(entry.cost);
      if (requireFunds && (balance.lte(0) || balance.lt(cost))) return { ok: false, reason: 'insufficient', balance: account.balance };
      const stored: LedgerEntryRecord = { ...copy(entry), cost: plain(cost), organizationId, entryId: ++state.sequence };
      state.entries.push(stored);
      account.balance = plain(balance.minus(cost));
      return { ok: true, entry: copy(stored), balance: account.balance };
    },
    async settle({ organizationId, entryId, outWords, cost, remove }) {
      const state = get();
      const index = state.entries.findIndex((e) => e.organizationId === organizationId && e.entryId === entryId);
      const account = state.accounts.get(organizationId);
      if (index === -1 || !account) return null;
      const entry = state.entries[index]!;
      const next = new Decimal(cost);
      if (next.gt(entry.cost)) throw new Error('ledger settle: cost may only go down');
      account.balance = plain(new Decimal(account.balance).plus(new Decimal(entry.cost).minus(next)));
      if (remove) {
        state.entries.splice(index, 1);
        return copy({ ...entry, outWords, cost: plain(next) });
      }
      entry.outWords = outWords;
      entry.cost = plain(next);
      return copy(entry);
    },
    async listForJob({ organizationId, jobId }) {
      return get()
        .entries.filter((e) => e.organizationId === organizationId && e.jobId === jobId)
        .map(copy);
    },
    async list({ organizationId, limit, beforeEntryId }) {
      const result: LedgerEntryRecord[] = [];
      const entries = get().entries;
      for (let i = entries.length - 1; i >= 0 && result.length < limit; i--) {
        const entry = entries[i]!;
        if (entry.organizationId === organizationId && (beforeEntryId === undefined || entry.entryId < beforeEntryId)) result.push(copy(entry));
      }
      return result;
    },
  };
}
