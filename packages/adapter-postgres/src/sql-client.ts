import { execFile } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { isServiceError } from '@memory-agents/core';
import type { PGlite, Transaction } from '@electric-sql/pglite';
import { openPgliteWorker, syncTree } from './pglite-worker-client.js';
import type { SqlClient } from './sql-types.js';

export type { SqlClient } from './sql-types.js';

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
  /**
   * Bounded waits of a pool the adapter opens (`connectionString`), so a database that stops
   * answering (a failover, dropped packets) fails requests with 503 within seconds instead of
   * leaving them hanging. Ignored for `pool` (configure your own) and PGlite.
   */
  timeouts?: DatabaseTimeouts;
};

/** Timeouts of a PostgreSQL pool, in milliseconds; `0` switches one off. */
export type DatabaseTimeouts = {
  /**
   * Opening a connection, and waiting for a free one when all `max` are busy.
   * @default 5000
   */
  connectMs?: number;
  /**
   * One statement: the server cancels it (`statement_timeout`) and the client stops waiting for
   * its answer (node-postgres `query_timeout`, which also covers a database that never answers).
   * Migrations and the HNSW build run without it.
   * @default 15000
   */
  queryMs?: number;
  /**
   * A transaction left idle by a client that went away is ended by the server
   * (`idle_in_transaction_session_timeout`), releasing its locks.
   * @default 30000
   */
  idleInTransactionMs?: number;
};

/** Default `timeouts` (`connectMs` 5 s, `queryMs` 15 s, `idleInTransactionMs` 30 s). */
export const DEFAULT_DATABASE_TIMEOUTS: Required<DatabaseTimeouts> = { connectMs: 5_000, queryMs: 15_000, idleInTransactionMs: 30_000 };

/**
 * The timeouts one setting stands for (the CLI's `--database-timeout-ms`): connections and
 * statements wait at most `ms`, an abandoned transaction is ended after twice that.
 */
export function databaseTimeouts(ms: number): Required<DatabaseTimeouts> {
  return { connectMs: ms, queryMs: ms, idleInTransactionMs: 2 * ms };
}

/** Default `pgliteSettings`. */
export const DEFAULT_PGLITE_SETTINGS: readonly string[] = ['shared_buffers = 32MB'];

/**
 * A node-postgres error that says the connection itself is unusable (lost, timed out), after
 * which the client is destroyed rather than returned to the pool.
 */
function brokenConnection(error: unknown): boolean {
  const message = error instanceof Error ? error.message : '';
  const code = (error as { code?: unknown } | null)?.code;
  return /Connection terminated|Query read timeout|connection timeout|Client has encountered a connection error|not queryable/i.test(message) ||
    (typeof code === 'string' && /^(08|57P0[1-3]|25P03|E[A-Z]+)/.test(code));
}

/** A query config with node-postgres' client-side `query_timeout` (not in its types); 0: none. */
function timed(text: string, timeoutMs: number, values?: unknown[]): pg.QueryConfig {
  return { text, ...(values ? { values } : {}), ...(timeoutMs > 0 ? { query_timeout: timeoutMs } : {}) } as pg.QueryConfig;
}

function pgClient(pool: pg.Pool, owned: boolean, queryMs: number, inTransaction?: pg.PoolClient, unbounded = false): SqlClient {
  const runner = inTransaction ?? pool;
  // A client-side bound on the answer (the server's statement_timeout cannot help when the
  // network drops packets); pg-pool destroys a pool client whose query failed this way.
  const timeout = unbounded ? 0 : queryMs;
  const client: SqlClient = {
    dialect: 'postgres',
    hasVector: false,
    async query<Row>(sql: string, params: readonly unknown[] = []) {
      const result = await runner.query(timed(sql, timeout, params as unknown[]));
      return { rows: result.rows as Row[], rowCount: result.rowCount ?? 0 };
    },
    async exec(sql: string) {
      await runner.query(timed(sql, timeout));
    },
    async transaction<T>(fn: (client: SqlClient) => Promise<T>, options: { unbounded?: boolean } = {}): Promise<T> {
      if (inTransaction) return fn(client);
      const connection = await pool.connect();
      // pg-pool removes its own listener from a checked-out client: a connection lost inside the
      // transaction emits 'error' here, which unhandled would crash the process. Kept until the
      // client is released (destroyed when it broke).
      let lost: Error | null = null;
      const onError = (error: Error) => {
        lost ??= error;
      };
      connection.on('error', onError);
      let broken: Error | undefined;
      try {
        await connection.query(timed('BEGIN', queryMs));
        if (options.unbounded) await connection.query(timed('SET LOCAL statement_timeout = 0', queryMs));
        const inner = pgClient(pool, false, queryMs, connection, options.unbounded === true);
        inner.hasVector = client.hasVector;
        const result = await fn(inner);
        await connection.query(timed('COMMIT', options.unbounded || queryMs <= 0 ? 0 : queryMs));
        return result;
      } catch (error) {
        if (lost || brokenConnection(error)) broken = lost ?? (error as Error);
        else await connection.query(timed('ROLLBACK', queryMs > 0 ? queryMs : 5_000)).catch((rollbackError: Error) => (broken = rollbackError));
        // A lost connection: the server rolls the transaction back itself when it sees the
        // connection close (or after idle_in_transaction_session_timeout). What `fn` threw because
        // of it is reported as the lost connection (a 503), unless it is the service's own refusal.
        if (lost && !brokenConnection(error) && !isServiceError(error)) {
          throw new Error(`Connection terminated unexpectedly inside a transaction: ${(lost as Error).message}`, { cause: lost });
        }
        throw error;
      } finally {
        connection.release(broken ?? (lost ?? undefined));
        connection.removeListener('error', onError);
        // A late error after release from a destroyed client must not crash the process either.
        if (broken || lost) connection.on('error', () => undefined);
      }
    },
    ...(inTransaction
      ? {}
      : {
          async maintenance(...statements: string[]) {
            const connection = await pool.connect();
            let broken: Error | undefined;
            try {
              await connection.query('SET statement_timeout = 0');
              for (const sql of statements) await connection.query(sql);
            } catch (error) {
              if (brokenConnection(error)) broken = error as Error;
              throw error;
            } finally {
              // Back to the connection's own settings (its startup options), for the pool's next user.
              if (!broken) await connection.query('RESET ALL').catch((error: Error) => (broken = error));
              connection.release(broken);
            }
          },
        }),
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
    ...(root
      ? {
          async maintenance(...statements: string[]) {
            for (const sql of statements) await root.exec(sql);
          },
        }
      : {}),
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
  if (options.pool) return withVectorProbe(pgClient(options.pool, false, 0));
  if (options.connectionString) {
    const timeouts = { ...DEFAULT_DATABASE_TIMEOUTS, ...options.timeouts };
    for (const [name, value] of Object.entries(timeouts)) {
      if (!Number.isInteger(value) || value < 0) throw new RangeError(`timeouts.${name} must be a whole number of milliseconds >= 0, not ${String(value)}`);
    }
    const bounds = {
      ...(timeouts.connectMs > 0 ? { connectionTimeoutMillis: timeouts.connectMs } : {}),
      ...(timeouts.queryMs > 0 ? { statement_timeout: timeouts.queryMs } : {}),
      ...(timeouts.idleInTransactionMs > 0 ? { idle_in_transaction_session_timeout: timeouts.idleInTransactionMs } : {}),
      // Dead peers are noticed by the kernel too, not only by the timeouts.
      keepAlive: true,
    };
    if (schema) {
      const setup = new pg.Client({ connectionString: options.connectionString, ...bounds });
      setup.on('error', () => undefined);
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
      ...bounds,
      ...(schema ? { options: `-c search_path=${schema}` } : {}),
    });
    // An idle client losing its server must not crash the process; the next query reports it.
    pool.on('error', () => undefined);
    return withVectorProbe(pgClient(pool, true, timeouts.queryMs));
  }
  if (options.pglite) return pgliteClient(options.pglite, false, options.pglite);
  const dataDir = options.dataDir ?? 'memory://';
  // A directory whose parents do not exist yet is created (PGlite itself refuses it), so
  // `postgresStore({ dataDir: './data/pgdata' })` works on a fresh checkout.
  if (!dataDir.includes('://')) await mkdir(dataDir, { recursive: true });
  const settings = [...(options.pgliteSettings ?? DEFAULT_PGLITE_SETTINGS)];
  if (!dataDir.includes('://') && !existsSync(join(dataDir, 'PG_VERSION'))) {
    await initializeInChild(dataDir, settings);
    // initdb ran with fsync off: a storage failure in the next ~30 s would lose the new data dir.
    await syncTree(dataDir);
  }
  if (!dataDir.includes('://')) {
    // An empty lock file is what a start leaves when its storage failed before the kernel wrote the
    // file back (PGlite writes it with fsync off); PostgreSQL refuses to start on it. Only one
    // process opens a data dir (the server's pid file sees to it), so it is a remnant.
    const lock = join(dataDir, 'postmaster.pid');
    if (existsSync(lock) && statSync(lock).size === 0) await rm(lock);
    // A data dir on disk runs in a worker thread, so a storage failure that PGlite never returns
    // from cannot stop the server (see openPgliteWorker).
    return openPgliteWorker({ dataDir, settings, ...(schema ? { schema } : {}) });
  }
  const { PGlite } = await import('@electric-sql/pglite');
  const { vector } = await import('@electric-sql/pglite-pgvector');
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
