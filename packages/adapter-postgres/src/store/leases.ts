import type { LeaseStore } from '@memory-agents/core/adapter';
import { NO_FLUSH } from '../pglite-worker-client.js';
import type { SqlClient } from '../sql-client.js';

/**
 * Named leases with an expiry (the job worker's), each taken in one statement. An embedded (PGlite)
 * data dir answers lease writes without flushing its log (`NO_FLUSH`): only one process opens it,
 * and that process frees every lease it finds when it starts, so a lease lost in a crash changes
 * nothing (PostgreSQL ignores the comment).
 */
export function postgresLeases(db: SqlClient): LeaseStore {
  return {
    async acquire({ name, holder, ttlMs, now }) {
      // One statement: a free, expired or own lease is taken; a live foreign one is left alone.
      const { rows } = await db.query(
        `${NO_FLUSH}INSERT INTO leases (name, holder, expires_at) VALUES ($1, $2, $3)
         ON CONFLICT (name) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at
           WHERE leases.holder = EXCLUDED.holder OR leases.expires_at <= $4
         RETURNING name`,
        [name, holder, now + ttlMs, now],
      );
      return rows.length === 1;
    },
    async renew({ name, holder, ttlMs, now }) {
      const { rowCount } = await db.query(`${NO_FLUSH}UPDATE leases SET expires_at = $3 WHERE name = $1 AND holder = $2`, [name, holder, now + ttlMs]);
      return rowCount === 1;
    },
    async release({ name, holder }) {
      await db.query(`${NO_FLUSH}DELETE FROM leases WHERE name = $1 AND holder = $2`, [name, holder]);
    },
    async get({ name }) {
      const { rows } = await db.query('SELECT * FROM leases WHERE name = $1', [name]);
      const row = rows[0];
      return row ? { name: row.name as string, holder: row.holder as string, expiresAt: Number(row.expires_at) } : null;
    },
  };
}
