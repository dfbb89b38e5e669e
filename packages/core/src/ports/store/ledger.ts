/**
 * Store area `ledger`: the credit ledger (spec "Billing").
 * Part of the {@link Store} port (see `index.ts` for the general contract: absent is `null`,
 * records are copies, backend failures reject).
 */

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
