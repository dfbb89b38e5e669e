import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import type { PGlite, Transaction } from '@electric-sql/pglite';

/**
 * The one SQL surface the adapters run on: node-postgres (`pg.Pool`) and PGlite accept the same
 * SQL and `$n` parameters, so every adapter is written once against this.
 */
export type SqlClient = {
  readonly dialect: 'postgres' | 'pglite';
  /** True when the database has pgvector (PGlite always; system PostgreSQL when installed). */
  hasVector: boolean;
  query<Row = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<{ rows: Row[]; rowCount: number }>;
  /** Runs several statements without parameters (migrations). */
  exec(sql: string): Promise<void>;
  /** Runs `fn` in one transaction on one connection; rolls back when it rejects. */
  transaction<T>(fn: (client: SqlClient) => Promise<T>): Promise<T>;
  close(): Promise<void>;
};

/** Options naming the database: exactly one of them. */
export type SqlConnectionOptions = {
  /** A pool the caller owns; it is not closed by the adapter. */
  pool?: pg.Pool;
  /** `postgres://...`; the adapter opens (and closes) its own pool. */
  connectionString?: string;
  /** A PGlite instance the caller owns (created with the pgvector extension if vectors are wanted). */
  pglite?: PGlite;
  /** A PGlite data directory the adapter opens itself; `memory://` for an in-memory database. */
  dataDir?: string;
  /**
   * Schema (search path) for every table, created when missing. Lets several deployments or test
   * runs share one database. Applies to connections the adapter opens itself.
   * @default "public"
   */
  schema?: string;
  /**
   * PostgreSQL settings of a PGlite database the adapter opens (`dataDir`), as `postgresql.conf`
   * lines. The default keeps 32 MB of shared buffers instead of PostgreSQL's 128 MB: the state
   * database is small next to the memory index, the operating system caches its files anyway, and
   * it takes ~130 MB off the resident memory of an idle embedded server.
   * @default ['shared_buffers = 32MB']
   */
  pgliteSettings?: readonly string[];
};

/** Default `pgliteSettings`. */
export const DEFAULT_PGLITE_SETTINGS: readonly string[] = ['shared_buffers = 32MB'];

function pgClient(pool: pg.Pool, owned: boolean, inTransaction?: pg.PoolClient): SqlClient {
  const runner = inTransaction ?? pool;
  const client: SqlClient = {
    dialect: 'postgres',
    hasVector: false,
    async query<Row>(sql: string, params: readonly unknown[] = []) {
      const result = await runner.query(sql, params as unknown[]);
      return { rows: result.rows as Row[], rowCount: result.rowCount ?? 0 };
    },
    async exec(sql: string) {
      await runner.query(sql);
    },
    async transaction<T>(fn: (client: SqlClient) => Promise<T>): Promise<T> {
      if (inTransaction) return fn(client);
      const connection = await pool.connect();
      try {
        await connection.query('BEGIN');
        const inner = pgClient(pool, false, connection);
        inner.hasVector = client.hasVector;
        const result = await fn(inner);
        await connection.query('COMMIT');
        return result;
      } catch (error) {
        await connection.query('ROLLBACK').catch(() => undefined);
        throw error;
      } finally {
        connection.release();
      }
    },
    async close() {
      if (owned && !inTransaction) await pool.end();
    },
  };
  return client;
}

function pgliteClient(db: PGlite | Transaction, owned: boolean, root: PGlite | null): SqlClient {
  const client: SqlClient = {
    dialect: 'pglite',
    hasVector: true,
    async query<Row>(sql: string, params: readonly unknown[] = []) {
      const result = await db.query<Row>(sql, params as unknown[]);
      return { rows: result.rows, rowCount: result.affectedRows ?? result.rows.length };
    },
    async exec(sql: string) {
      await db.exec(sql);
    },
    async transaction<T>(fn: (client: SqlClient) => Promise<T>): Promise<T> {
      if (!root) return fn(client);
      return root.transaction((tx) => fn(pgliteClient(tx, false, null)));
    },
    async close() {
      if (owned && root && !root.closed) await root.close();
    },
  };
  return client;
}

/** Opens (or wraps) the database named by `options`. */
export async function openSqlClient(options: SqlConnectionOptions): Promise<SqlClient> {
  const schema = options.schema;
  if (schema !== undefined && !/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) throw new Error(`invalid schema name: ${schema}`);
  if (options.pool) return withVectorProbe(pgClient(options.pool, false));
  if (options.connectionString) {
    if (schema) {
      const setup = new pg.Client({ connectionString: options.connectionString });
      await setup.connect();
      try {
        await setup.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
      } finally {
        await setup.end();
      }
    }
    const pool = new pg.Pool({
      connectionString: options.connectionString,
      max: 10,
      ...(schema ? { options: `-c search_path=${schema}` } : {}),
    });
    // An idle client losing its server must not crash the process; the next query reports it.
    pool.on('error', () => undefined);
    return withVectorProbe(pgClient(pool, true));
  }
  if (options.pglite) return pgliteClient(options.pglite, false, options.pglite);
  const { PGlite } = await import('@electric-sql/pglite');
  const { vector } = await import('@electric-sql/pglite-pgvector');
  const dataDir = options.dataDir ?? 'memory://';
  // A directory whose parents do not exist yet is created (PGlite itself refuses it), so
  // `postgresStore({ dataDir: './data/pgdata' })` works on a fresh checkout.
  if (!dataDir.includes('://')) await mkdir(dataDir, { recursive: true });
  const settings = [...(options.pgliteSettings ?? DEFAULT_PGLITE_SETTINGS)];
  if (!dataDir.includes('://') && !existsSync(join(dataDir, 'PG_VERSION'))) await initializeInChild(dataDir, settings);
  const db = await PGlite.create({ dataDir, extensions: { vector }, postgresqlconf: settings });
  if (schema) await db.exec(`CREATE SCHEMA IF NOT EXISTS ${schema}; SET search_path TO ${schema}`);
  return pgliteClient(db, true, db);
}

/**
 * Creates a new PGlite data directory in a short-lived child process. PGlite runs `initdb` in a
 * second database instance inside the process that opens a new directory, and the memory of that
 * instance stays with the process (~450 MB of an embedded server's resident memory, for good);
 * a child gives it back when it exits. Costs one Node start (~0.3 s) on the first open only.
 * The child compiles PGlite's wasm with V8's baseline compiler only (`--liftoff-only`).
 */
async function initializeInChild(dataDir: string, settings: readonly string[]): Promise<void> {
  const entry =
    typeof import.meta.resolve === 'function'
      ? import.meta.resolve('@electric-sql/pglite')
      : pathToFileURL(createRequire(import.meta.url).resolve('@electric-sql/pglite')).href;
  const script = [
    'const { PGlite } = await import(process.argv[1]);',
    'const db = await PGlite.create({ dataDir: process.argv[2], postgresqlconf: JSON.parse(process.argv[3]) });',
    'await db.close();',
  ].join('\n');
  await new Promise<void>((resolve, reject) => {
    // Liftoff only: initdb runs once, so V8's background TurboFan tier-up costs more CPU than it
    // saves (a new data dir: ~7 s instead of ~11 s on a loaded 2-core machine).
    execFile(process.execPath, ['--liftoff-only', '--input-type=module', '-e', script, entry, dataDir, JSON.stringify(settings)], { maxBuffer: 16 * 1024 * 1024 }, (error, _stdout, stderr) =>
      error ? reject(new Error(`initializing the PGlite data directory ${dataDir} failed: ${stderr || error.message}`, { cause: error })) : resolve(),
    );
  });
}

async function withVectorProbe(client: SqlClient): Promise<SqlClient> {
  const { rows } = await client.query<{ available: boolean }>(
    "SELECT EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector') AS available",
  );
  client.hasVector = rows[0]?.available === true;
  return client;
}
