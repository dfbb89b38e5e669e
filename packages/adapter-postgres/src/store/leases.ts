import type { LeaseStore } from '@memory-agents/core/adapter';
import type { SqlClient } from '../sql-client.js';

/** Named leases with an expiry (the job worker's), each taken in one statement. */
export function postgresLeases(db: SqlClient): LeaseStore {
  return {
    async acquire({ name, holder, ttlMs, now }) {
      // One statement: a free, expired or own lease is taken; a live foreign one is left alone.
      const { rows } = await db.query(
        `INSERT INTO leases (name, holder, expires_at) VALUES ($1, $2, $3)
         ON CONFLICT (name) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at
           WHERE leases.holder = EXCLUDED.holder OR leases.expires_at <= $4
         RETURNING name`,
        [name, holder, now + ttlMs, now],
      );
      return rows.length === 1;
    },
    async renew({ name, holder, ttlMs, now }) {
      const { rowCount } = await db.query('UPDATE leases SET expires_at = $3 WHERE name = $1 AND holder = $2', [name, holder, now + ttlMs]);
      return rowCount === 1;
    },
    async release({ name, holder }) {
      await db.query('DELETE FROM leases WHERE name = $1 AND holder = $2', [name, holder]);
    },
    async get({ name }) {
      const { rows } = await db.query('SELECT * FROM leases WHERE name = $1', [name]);
      const row = rows[0];
      return row ? { name: row.name as string, holder: row.holder as string, expiresAt: Number(row.expires_at) } : null;
    },
  };
}
