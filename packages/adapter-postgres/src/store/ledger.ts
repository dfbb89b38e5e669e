import type { BillingAccountRecord, LedgerEntryRecord, LedgerStore } from '@memory-agents/core';
import type { SqlClient } from '../sql-client.js';
import { iso, type Row } from './rows.js';

// Amounts are NUMERIC; `trim_scale(x)::text` hands them over as exact decimal strings ("1.5", not "1.500").
const ACCOUNT_COLUMNS = 'organization_id, enabled, trim_scale(low_credit_threshold)::text AS low_credit_threshold, prices, trim_scale(balance)::text AS balance';
const ENTRY_COLUMNS =
  'entry_id, organization_id, kind, route, in_words, out_words, trim_scale(cost)::text AS cost, reference, job_id, turn_costs, created_at';

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
    append({ organizationId, entry, requireFunds }) {
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
    settle({ organizationId, entryId, outWords, cost, remove }) {
      return db.transaction(async (tx) => {
        const { rows: accounts } = await tx.query('SELECT 1 FROM billing_accounts WHERE organization_id = $1 FOR UPDATE', [organizationId]);
        if (accounts.length === 0) return null;
        const { rows } = await tx.query<Row & { lowers: boolean }>(
          `SELECT ${ENTRY_COLUMNS}, ($3::numeric <= cost) AS lowers FROM ledger_entries WHERE organization_id = $1 AND entry_id = $2`,
          [organizationId, entryId, cost],
        );
        const row = rows[0];
        if (!row) return null;
        if (!row.lowers) throw new Error('ledger settle: cost may only go down');
        await tx.query('UPDATE billing_accounts SET balance = balance + ($2::numeric - $3::numeric) WHERE organization_id = $1', [
          organizationId,
          row.cost,
          cost,
        ]);
        if (remove) {
          await tx.query('DELETE FROM ledger_entries WHERE entry_id = $1', [entryId]);
          return { ...toEntry(row), outWords, cost: normalize(cost) };
        }
        const { rows: updated } = await tx.query(
          `UPDATE ledger_entries SET out_words = $2, cost = $3::numeric WHERE entry_id = $1 RETURNING ${ENTRY_COLUMNS}`,
          [entryId, outWords, cost],
        );
        return toEntry(updated[0]!);
      });
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
