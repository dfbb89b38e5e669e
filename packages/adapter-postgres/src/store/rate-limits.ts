import type { RateLimitStore, RateWindowState } from '@memory-agents/core';
import type { SqlClient } from '../sql-client.js';

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
