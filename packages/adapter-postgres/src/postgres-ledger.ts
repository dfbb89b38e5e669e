import type { BillingAccountRecord, LedgerEntryRecord, LedgerStore, RateLimitStore, RateWindowState } from '@memory-agents/core';
import type { SqlClient } from './sql-client.js';

type Row = Record<string, unknown>;

const iso = (value: unknown): string => (value instanceof Date ? value : new Date(String(value))).toISOString();

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

/** The longest request window an organization override may set (`rateLimitOverridesSchema`). */
const MAX_WINDOW_MS = 86_400_000;

/**
 * Rate windows and concurrency places on PostgreSQL, so limits hold across every process sharing
 * the database. Each call runs in one transaction that first takes a transaction-scoped advisory
 * lock per key (in sorted order, so two calls never deadlock); the count and the insert then
 * cannot interleave with another process's.
 */
export function postgresRateLimits(db: SqlClient): RateLimitStore {
  let hits = 0;
  const lock = (tx: SqlClient, keys: string[]) =>
    tx.query('SELECT pg_advisory_xact_lock(hashtext(k)) FROM (SELECT DISTINCT unnest($1::text[]) AS k ORDER BY 1) AS sorted', [keys]);
  return {
    async hit({ windows, now }) {
      // One statement (the rate_limit_hit function of migration 5): lock, forget old hits, count,
      // and record this hit only when every window has room.
      const { rows } = await db.query<{ key: string; n: string; oldest: string | null; admitted: boolean }>(
        'SELECT key, n, oldest, admitted FROM rate_limit_hit($1::text[], $2::integer[], $3::bigint[], $4::bigint)',
        [windows.map((window) => window.key), windows.map((window) => window.limit), windows.map((window) => now - window.windowMs), now],
      );
      const counted = new Map(rows.map((row) => [row.key, { count: Number(row.n), oldest: row.oldest === null ? null : Number(row.oldest) }]));
      const admitted = rows[0]?.admitted ?? true;
      if (!admitted) {
        const refused = windows.find((window) => (counted.get(window.key)?.count ?? 0) >= window.limit)!;
        const states: RateWindowState[] = windows.map((window) => {
          const found = counted.get(window.key);
          return { key: window.key, limit: window.limit, count: found?.count ?? 0, resetAt: found?.oldest != null ? found.oldest + window.windowMs : now };
        });
        return { admitted: false, windows: states, refusedKey: refused.key };
      }
      // Now and then, rows of subjects that stopped calling go: nothing is older than the longest
      // window an override may set (one day).
      if (++hits % 1000 === 0) {
        await db.query('DELETE FROM rate_limit_hits WHERE at_ms <= $1', [now - MAX_WINDOW_MS]);
        await db.query('DELETE FROM concurrency_places WHERE expires_at <= $1', [now]);
      }
      const states: RateWindowState[] = windows.map((window) => {
        const found = counted.get(window.key);
        return {
          key: window.key,
          limit: window.limit,
          count: (found?.count ?? 0) + 1,
          resetAt: (found?.oldest != null ? found.oldest : now) + window.windowMs,
        };
      });
      return { admitted: true, windows: states, refusedKey: null };
    },
    acquire({ gates, holder, ttlMs, now }) {
      return db.transaction(async (tx) => {
        const keys = gates.map((gate) => gate.key);
        await lock(tx, keys);
        await tx.query('DELETE FROM concurrency_places WHERE key = ANY($1::text[]) AND expires_at <= $2', [keys, now]);
        const { rows } = await tx.query<{ key: string; n: string }>(
          'SELECT key, count(*) AS n FROM concurrency_places WHERE key = ANY($1::text[]) AND holder <> $2 GROUP BY key',
          [keys, holder],
        );
        const held = new Map(rows.map((row) => [row.key, Number(row.n)]));
        const refused = gates.find((gate) => (held.get(gate.key) ?? 0) >= gate.limit);
        if (refused) return { acquired: false, refusedKey: refused.key };
        await tx.query(
          `INSERT INTO concurrency_places (key, holder, expires_at) SELECT k, $2, $3 FROM unnest($1::text[]) AS k
           ON CONFLICT (key, holder) DO UPDATE SET expires_at = EXCLUDED.expires_at`,
          [keys, holder, now + ttlMs],
        );
        return { acquired: true, refusedKey: null };
      });
    },
    async release({ keys, holder }) {
      await db.query('DELETE FROM concurrency_places WHERE key = ANY($1::text[]) AND holder = $2', [keys, holder]);
    },
  };
}
