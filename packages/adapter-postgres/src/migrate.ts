import type { SqlClient } from './sql-client.js';

/**
 * Applies the migrations not yet recorded in `table`, each in its own transaction, under an
 * advisory lock so several processes starting at once apply each migration exactly once.
 * `options.schema` (a quoted identifier) is created first, under the same lock. Migrations (and
 * the wait for another process's) run without the query timeout: building an index takes long.
 */
export async function migrate(
  client: SqlClient,
  table: string,
  migrations: readonly { version: number; name: string; sql: string }[],
  options: { schema?: string } = {},
): Promise<void> {
  // The schema and the record table under the same lock: of two `CREATE ... IF NOT EXISTS` running
  // at once on a new database, the later one fails (a unique violation in the catalog) instead of
  // skipping.
  await client.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [table]);
    if (options.schema) await tx.exec(`CREATE SCHEMA IF NOT EXISTS ${options.schema}`);
    await tx.exec(`CREATE TABLE IF NOT EXISTS ${table} (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
  }, { unbounded: true });
  for (const migration of migrations) {
    await client.transaction(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [table]);
      const { rows } = await tx.query(`SELECT 1 FROM ${table} WHERE version = $1`, [migration.version]);
      if (rows.length > 0) return;
      await tx.exec(migration.sql);
      await tx.query(`INSERT INTO ${table} (version, name) VALUES ($1, $2)`, [migration.version, migration.name]);
    }, { unbounded: true });
  }
}
