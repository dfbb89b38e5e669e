import type { RateLimitStore, RateWindowState } from '@memory-agents/core/adapter';
import type { SqlClient } from '../sql-client.js';

/** The longest request window an organization override may set (`rateLimitOverridesSchema`). */
const MAX_WINDOW_MS = 86_400_000;

/**
 * Rate windows and concurrency places on PostgreSQL, so limits hold across every process sharing
 * the database. Each call is one statement (a PL/pgSQL function of the migrations) that first
 * takes a transaction-scoped advisory lock per key (in sorted order, so two calls never deadlock);
 * the count and the insert then cannot interleave with another process's.
 */
export function postgresRateLimits(db: SqlClient): RateLimitStore {
  let hits = 0;
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
    async acquire({ gates, holder, ttlMs, now }) {
      // One statement (the concurrency_acquire function of migration 6): lock, forget expired
      // places, count, and take a place under every key only when each has room.
      const { rows } = await db.query<{ refused: string | null }>('SELECT concurrency_acquire($1::text[], $2::integer[], $3, $4::bigint, $5::bigint) AS refused', [
        gates.map((gate) => gate.key),
        gates.map((gate) => gate.limit),
        holder,
        now + ttlMs,
        now,
      ]);
      const refusedKey = rows[0]?.refused ?? null;
      return refusedKey === null ? { acquired: true, refusedKey: null } : { acquired: false, refusedKey };
    },
    async release({ keys, holder }) {
      await db.query('DELETE FROM concurrency_places WHERE key = ANY($1::text[]) AND holder = $2', [keys, holder]);
    },
  };
}
