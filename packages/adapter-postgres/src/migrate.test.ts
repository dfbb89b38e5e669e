import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { postgresUrl } from '@memory-agents/core/testing';
import { migrate } from './migrate.js';
import { openSqlClient } from './sql-client.js';

const databaseUrl = postgresUrl('migrate on PostgreSQL');
const MIGRATIONS = [{ version: 1, name: 'first', sql: 'CREATE TABLE IF NOT EXISTS soak_things (id integer PRIMARY KEY)' }];

/** Resolves once a session matching `where` waits on a lock (migrate blocked behind the other process). */
async function untilWaiting(admin: pg.Client, where: string, params: unknown[]): Promise<void> {
  for (const deadline = Date.now() + 60_000; ; ) {
    const { rows } = await admin.query(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND ${where}`,
      params,
    );
    if (rows[0].n > 0) return;
    if (Date.now() > deadline) throw new Error('migrate never waited for the other process');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe.skipIf(!databaseUrl)('migrate on real PostgreSQL (DATABASE_URL), processes starting at once', () => {
  it('waits for another process creating the migrations table instead of failing on it', async () => {
    const schema = `ma_migrate_${randomBytes(6).toString('hex')}`;
    const admin = new pg.Client({ connectionString: databaseUrl });
    await admin.connect();
    await admin.query(`CREATE SCHEMA ${schema}`);
    const table = `${schema}.migrations`;
    const other = new pg.Client({ connectionString: databaseUrl });
    await other.connect();
    const sql = await openSqlClient({ connectionString: databaseUrl! });
    try {
      // The other process, inside its migrate(): the lock taken, the table created, not committed yet.
      await other.query('BEGIN');
      await other.query('SELECT pg_advisory_xact_lock(hashtext($1))', [table]);
      await other.query(`CREATE TABLE IF NOT EXISTS ${table} (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
      const migrating = migrate(sql, table, MIGRATIONS);
      // Until this process waits: on the lock (with the fix) or on the other's catalog row (without).
      await untilWaiting(admin, "(query LIKE $1 OR wait_event = 'advisory')", [`%${schema}%`]);
      await other.query('COMMIT');
      // Before the fix its CREATE TABLE IF NOT EXISTS ran outside the lock and failed here.
      await expect(migrating).resolves.toBeUndefined();
      expect((await admin.query(`SELECT version FROM ${table}`)).rows).toEqual([{ version: 1 }]);
    } finally {
      await sql.close();
      await other.end();
      await admin.query(`DROP SCHEMA ${schema} CASCADE`);
      await admin.end();
    }
  });

  it('creates a missing schema under the same lock, so two processes creating it at once both start', async () => {
    const schema = `ma_migrate_${randomBytes(6).toString('hex')}`;
    const table = `${schema}.migrations`;
    const admin = new pg.Client({ connectionString: databaseUrl });
    await admin.connect();
    const other = new pg.Client({ connectionString: databaseUrl });
    await other.connect();
    const sql = await openSqlClient({ connectionString: databaseUrl! });
    try {
      // The other process, inside its migrate(): the lock taken, the schema created, not committed yet.
      await other.query('BEGIN');
      await other.query('SELECT pg_advisory_xact_lock(hashtext($1))', [table]);
      await other.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
      const migrating = migrate(sql, table, MIGRATIONS, { schema });
      await untilWaiting(admin, 'pid <> pg_backend_pid() AND pid <> $1', [(other as unknown as { processID: number }).processID]);
      await other.query('COMMIT');
      // A CREATE SCHEMA IF NOT EXISTS outside the lock would wait on the other's catalog row, then fail.
      await expect(migrating).resolves.toBeUndefined();
      expect((await admin.query(`SELECT version FROM ${table}`)).rows).toEqual([{ version: 1 }]);
    } finally {
      await sql.close();
      await other.end();
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await admin.end();
    }
  });
});
