import type { BillingAccountRecord, LedgerEntryRecord, LedgerStore } from '@memory-agents/core/adapter';
import type { SqlClient } from '../sql-client.js';
import { iso, type Row } from './rows.js';

// Amounts are NUMERIC; `trim_scale(x)::text` hands them over as exact decimal strings ("1.5", not "1.500").
const ACCOUNT_COLUMNS = 'organization_id, enabled, trim_scale(low_credit_threshold)::text AS low_credit_threshold, prices, trim_scale(balance)::text AS balance';
const ENTRY_COLUMNS =
  'entry_id, organization_id, kind, route, in_words, out_words, trim_scale(cost)::text AS cost, reference, job_id, turn_costs, created_at';
/** {@link ENTRY_COLUMNS} of the row a settle changed (`changed` in its statement). */
const CHANGED_ENTRY_COLUMNS =
  'changed.entry_id, changed.organization_id, changed.kind, changed.route, changed.in_words, changed.out_words, trim_scale(changed.cost)::text AS cost, ' +
  'changed.reference, changed.job_id, changed.turn_costs, changed.created_at';

function toAccount(row: Row): BillingAccountRecord {
  return {
    organizationId: row.organization_id as string,
    enabled: row.enabled as boolean,
    lowCreditThreshold: row.low_credit_threshold as string,
    prices: row.prices as BillingAccountRecord['prices'],
    balance: row.balance as string,
  };
}

function toEntry(row: Row): LedgerEntryRecord {
  return {
    entryId: Number(row.entry_id),
    organizationId: row.organization_id as string,
    kind: row.kind as LedgerEntryRecord['kind'],
    route: row.route as string,
    inWords: Number(row.in_words),
    outWords: Number(row.out_words),
    cost: row.cost as string,
    reference: (row.reference as string | null) ?? null,
    jobId: (row.job_id as string | null) ?? null,
    turnCosts: row.turn_costs as Record<string, string>,
    createdAt: iso(row.created_at),
  };
}

/**
 * The ledger on PostgreSQL. Every balance change locks the account row (`FOR UPDATE`), so
 * concurrent debits serialize and the funds check sees the latest balance; the entry and the
 * balance change commit together, so the balance is always the sum of the entries.
 */
export function postgresLedger(db: SqlClient): LedgerStore {
  return {
    async getAccount({ organizationId }) {
      const { rows } = await db.query(`SELECT ${ACCOUNT_COLUMNS} FROM billing_accounts WHERE organization_id = $1`, [organizationId]);
      return rows[0] ? toAccount(rows[0]) : null;
    },
    async configure({ organizationId, patch }) {
      const { rows } = await db.query(
        `INSERT INTO billing_accounts (organization_id, enabled, low_credit_threshold, prices)
         VALUES ($1, COALESCE($2::boolean, false), COALESCE($3::numeric, 0), COALESCE($4::jsonb, '{}'::jsonb))
         ON CONFLICT (organization_id) DO UPDATE SET
           enabled = COALESCE($2::boolean, billing_accounts.enabled),
           low_credit_threshold = COALESCE($3::numeric, billing_accounts.low_credit_threshold),
           prices = COALESCE($4::jsonb, billing_accounts.prices)
         RETURNING ${ACCOUNT_COLUMNS}`,
        [organizationId, patch.enabled ?? null, patch.lowCreditThreshold ?? null, patch.prices === undefined ? null : JSON.stringify(patch.prices)],
      );
      return toAccount(rows[0]!);
    },
    async append({ organizationId, entry, requireFunds }) {
      if (entry.reference === null) {
        // No reference to check (an answer's charge): one statement locks the account, inserts the
        // entry only when the funds check passes, and moves the balance (one round trip, not five).
        const { rows } = await db.query<Row & { found_balance: string; debited_balance: string | null }>(
          `WITH account AS MATERIALIZED (
             SELECT trim_scale(balance)::text AS balance, (balance > 0 AND balance >= $6::numeric) AS covers
               FROM billing_accounts WHERE organization_id = $1 FOR UPDATE
           ), inserted AS (
             INSERT INTO ledger_entries (organization_id, kind, route, in_words, out_words, cost, reference, job_id, turn_costs, created_at)
             SELECT $1, $2, $3, $4, $5, $6::numeric, NULL, $7, $8::jsonb, $9 FROM account WHERE account.covers OR NOT $10::boolean
             RETURNING ${ENTRY_COLUMNS}
           ), debited AS (
             UPDATE billing_accounts SET balance = balance - $6::numeric
              WHERE organization_id = $1 AND EXISTS (SELECT 1 FROM inserted)
             RETURNING trim_scale(balance)::text AS balance
           )
           SELECT inserted.*, account.balance AS found_balance, debited.balance AS debited_balance
             FROM account LEFT JOIN inserted ON true LEFT JOIN debited ON true`,
          [organizationId, entry.kind, entry.route, entry.inWords, entry.outWords, entry.cost, entry.jobId, JSON.stringify(entry.turnCosts), entry.createdAt, requireFunds],
        );
        const row = rows[0];
        if (!row) return { ok: false, reason: 'no_account', balance: null } as const;
        if (row.debited_balance === null) return { ok: false, reason: 'insufficient', balance: row.found_balance } as const;
        return { ok: true, entry: toEntry(row), balance: row.debited_balance } as const;
      }
      return db.transaction(async (tx) => {
        const { rows: accounts } = await tx.query<{ balance: string; covers: boolean }>(
          `SELECT trim_scale(balance)::text AS balance, (balance > 0 AND balance >= $2::numeric) AS covers
             FROM billing_accounts WHERE organization_id = $1 FOR UPDATE`,
          [organizationId, entry.cost],
        );
        const account = accounts[0];
        if (!account) return { ok: false, reason: 'no_account', balance: null } as const;
        if (entry.reference !== null) {
          const { rows } = await tx.query('SELECT 1 FROM ledger_entries WHERE organization_id = $1 AND reference = $2', [organizationId, entry.reference]);
          if (rows.length > 0) return { ok: false, reason: 'duplicate', balance: account.balance } as const;
        }
        if (requireFunds && !account.covers) return { ok: false, reason: 'insufficient', balance: account.balance } as const;
        const { rows } = await tx.query(
          `INSERT INTO ledger_entries (organization_id, kind, route, in_words, out_words, cost, reference, job_id, turn_costs, created_at)
           VALUES ($1, $2, $3, $4, $5, $6::numeric, $7, $8, $9::jsonb, $10) RETURNING ${ENTRY_COLUMNS}`,
          [organizationId, entry.kind, entry.route, entry.inWords, entry.outWords, entry.cost, entry.reference, entry.jobId, JSON.stringify(entry.turnCosts), entry.createdAt],
        );
        const { rows: updated } = await tx.query<{ balance: string }>(
          'UPDATE billing_accounts SET balance = balance - $2::numeric WHERE organization_id = $1 RETURNING trim_scale(balance)::text AS balance',
          [organizationId, entry.cost],
        );
        return { ok: true, entry: toEntry(rows[0]!), balance: updated[0]!.balance } as const;
      });
    },
    async settle({ organizationId, entryId, outWords, cost, remove }) {
      // One statement (one round trip): the account row is locked first, as every balance change
      // locks it, then the entry; the balance gets the difference back and the entry is lowered
      // (or removed) only when the new cost does not exceed the old one.
      const { rows } = await db.query<Row & { lowers: boolean }>(
        `WITH account AS MATERIALIZED (
           SELECT organization_id FROM billing_accounts WHERE organization_id = $1 FOR UPDATE
         ), entry AS MATERIALIZED (
           SELECT e.entry_id, e.cost AS old_cost, ($3::numeric <= e.cost) AS lowers
             FROM ledger_entries e JOIN account ON true WHERE e.organization_id = $1 AND e.entry_id = $2 FOR UPDATE OF e
         ), credited AS (
           UPDATE billing_accounts b SET balance = b.balance + (entry.old_cost - $3::numeric)
             FROM entry WHERE b.organization_id = $1 AND entry.lowers RETURNING b.organization_id
         ), lowered AS (
           UPDATE ledger_entries l SET out_words = $4, cost = $3::numeric
             FROM entry WHERE l.entry_id = entry.entry_id AND entry.lowers AND NOT $5::boolean RETURNING l.*
         ), removed AS (
           DELETE FROM ledger_entries l USING entry WHERE l.entry_id = entry.entry_id AND entry.lowers AND $5::boolean RETURNING l.*
         ), changed AS (SELECT * FROM lowered UNION ALL SELECT * FROM removed)
         SELECT ${CHANGED_ENTRY_COLUMNS}, entry.lowers
           FROM entry LEFT JOIN changed ON changed.entry_id = entry.entry_id`,
        [organizationId, entryId, cost, outWords, remove === true],
      );
      const row = rows[0];
      if (!row) return null;
      if (!row.lowers) throw new Error('ledger settle: cost may only go down');
      const settled = toEntry(row);
      return remove ? { ...settled, outWords, cost: normalize(cost) } : settled;
    },
    async listForJob({ organizationId, jobId }) {
      const { rows } = await db.query(`SELECT ${ENTRY_COLUMNS} FROM ledger_entries WHERE organization_id = $1 AND job_id = $2 ORDER BY entry_id`, [
        organizationId,
        jobId,
      ]);
      return rows.map(toEntry);
    },
    async list({ organizationId, limit, beforeEntryId }) {
      const { rows } =
        beforeEntryId === undefined
          ? await db.query(`SELECT ${ENTRY_COLUMNS} FROM ledger_entries WHERE organization_id = $1 ORDER BY entry_id DESC LIMIT $2`, [organizationId, limit])
          : await db.query(`SELECT ${ENTRY_COLUMNS} FROM ledger_entries WHERE organization_id = $1 AND entry_id < $3 ORDER BY entry_id DESC LIMIT $2`, [
              organizationId,
              limit,
              beforeEntryId,
            ]);
      return rows.map(toEntry);
    },
  };
}

/** "1.500" -> "1.5", "2.0" -> "2" (the shape NUMERIC values take through `trim_scale`). */
function normalize(value: string): string {
  if (!value.includes('.')) return value;
  const trimmed = value.replace(/0+$/, '').replace(/\.$/, '');
  return trimmed === '-0' ? '0' : trimmed;
}
