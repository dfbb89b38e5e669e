/**
 * Store areas of credits and limits: the credit ledger and the rate windows and concurrency gates
 * that hold across processes. Part of the {@link Store} port (see `store.ts` for the general
 * contract: absent is `null`, records are copies, backend failures reject).
 */

// ---------------------------------------------------------------------------------------------
// Credit ledger (spec "Billing")

/** Per-organization price overrides, decimal strings of credits per word; absent fields use the defaults. */
export type PriceOverrides = Partial<{ inputWord: string; outputWord: string }>;

/** An organization's billing settings and derived balance. */
export type BillingAccountRecord = {
  organizationId: string;
  /** When true, calls are refused with 402 once the balance cannot cover them. */
  enabled: boolean;
  /** Decimal string >= 0; a warning level only, never enforced. */
  lowCreditThreshold: string;
  prices: PriceOverrides;
  /** Decimal string: the sum of every entry's amount (grants and refunds add, charges subtract). */
  balance: string;
};

export type LedgerEntryKind = 'grant' | 'charge' | 'refund';

export type LedgerEntryRecord = {
  /** Assigned by the store, increasing. */
  entryId: number;
  organizationId: string;
  kind: LedgerEntryKind;
  /** What the entry is for: `credits_add`, `observe`, `chat`, `refund`, ... */
  route: string;
  inWords: number;
  outWords: number;
  /** Decimal string of credits taken from the balance (negative for grants and refunds). */
  cost: string;
  /**
   * Unique per organization when set: a second insert with the same reference is refused, which
   * makes a turn's charge and a job's refund happen at most once.
   */
  reference: string | null;
  /** Job whose turns the entry charges or refunds. */
  jobId: string | null;
  /** For charges of a job: credits per 0-based turn index, decimal strings. */
  turnCosts: Record<string, string>;
  createdAt: string;
};

export type NewLedgerEntry = Omit<LedgerEntryRecord, 'entryId' | 'organizationId'>;

export type LedgerDebitResult =
  | { ok: true; entry: LedgerEntryRecord; balance: string }
  /** `insufficient`: the balance could not cover the cost; `duplicate`: the reference was used. */
  | { ok: false; reason: 'insufficient' | 'duplicate' | 'no_account'; balance: string | null };

export type LedgerStore = {
  /** The organization's account, or null when none was ever opened. */
  getAccount(request: { organizationId: string }): Promise<BillingAccountRecord | null>;
  /**
   * Opens the account when missing (disabled, threshold `0`, no overrides, balance `0`) and applies
   * `patch`. Resolves the account.
   */
  configure(request: { organizationId: string; patch: Partial<Pick<BillingAccountRecord, 'enabled' | 'lowCreditThreshold' | 'prices'>> }): Promise<BillingAccountRecord>;
  /**
   * Appends an entry and moves the balance by `-cost`, atomically. The account MUST exist
   * (`no_account` otherwise). With `requireFunds`, the entry is refused (`insufficient`) when the
   * balance is <= 0 or smaller than `cost`: of N concurrent debits, only as many succeed as the
   * balance covers, and the balance never goes below zero through them. A `reference` already used
   * by the organization is refused (`duplicate`) and changes nothing.
   */
  append(request: { organizationId: string; entry: NewLedgerEntry; requireFunds: boolean }): Promise<LedgerDebitResult>;
  /**
   * Lowers a charge once its real size is known (an answer shorter than its reservation): sets
   * `outWords` and `cost` of the entry and returns the difference to the balance, atomically.
   * With `cost` "0" and `remove`, the entry is removed instead (the call produced nothing).
   * Resolves the updated entry, or null when absent. `cost` MUST NOT exceed the entry's cost.
   */
  settle(request: { organizationId: string; entryId: number; outWords: number; cost: string; remove?: boolean }): Promise<LedgerEntryRecord | null>;
  /** Entries of a job (charges and refunds), oldest first. */
  listForJob(request: { organizationId: string; jobId: string }): Promise<LedgerEntryRecord[]>;
  /** Newest first; with `beforeEntryId`, only entries with a smaller id. */
  list(request: { organizationId: string; limit: number; beforeEntryId?: number }): Promise<LedgerEntryRecord[]>;
};

// ---------------------------------------------------------------------------------------------
// Rate windows and concurrency gates (spec "Limits"), for limits that hold across processes

/** One sliding window: at most `limit` requests under `key` in the last `windowMs`. */
export type RateWindow = { key: string; limit: number; windowMs: number };

/** What a window holds after a hit (or at the refusal). */
export type RateWindowState = {
  key: string;
  limit: number;
  /** Requests counted in the window, the current one included when admitted. */
  count: number;
  /** Time (ms) when the oldest counted request leaves the window; `now` when none is counted. */
  resetAt: number;
};

export type RateHitResult = { admitted: boolean; windows: RateWindowState[]; refusedKey: string | null };

/** One concurrency gate: at most `limit` places held under `key`. */
export type ConcurrencyGate = { key: string; limit: number };

export type RateLimitStore = {
  /**
   * Counts one request in every window, or in none: when any window already counts `limit`
   * requests in `(now - windowMs, now]`, nothing is recorded and the first such key is
   * `refusedKey`. Of N concurrent hits on a window with k places left, exactly k are admitted.
   */
  hit(request: { windows: RateWindow[]; now: number }): Promise<RateHitResult>;
  /**
   * Takes one place under every gate for `holder`, or none (resolves the first full key). Places
   * expire `ttlMs` after `now` so a dead process's places free themselves. Of N concurrent
   * acquires on a gate with k free places, exactly k succeed.
   */
  acquire(request: { gates: ConcurrencyGate[]; holder: string; ttlMs: number; now: number }): Promise<{ acquired: boolean; refusedKey: string | null }>;
  /** Frees the places `holder` holds under `keys`; a no-op for places not held. */
  release(request: { keys: string[]; holder: string }): Promise<void>;
};
