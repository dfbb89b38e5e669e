import type { Store } from '@memory-agents/core';
import type { StoreAreas } from '@memory-agents/core/adapter';
import { migrate } from './migrate.js';
import { STORE_MIGRATIONS } from './migrations/index.js';
import { openSqlClient, type SqlClient, type SqlConnectionOptions } from './sql-client.js';
import { postgresStoreAreas as areas } from './store/index.js';

/**
 * Options of `postgresStore`: where the database is. Pass exactly one of `client`, `pool`,
 * `connectionString`, `pglite` or `dataDir`.
 */
export type PostgresStoreOptions = SqlConnectionOptions & {
  /** An open `SqlClient` shared with other adapters (e.g. the memory index on the same PGlite). */
  client?: SqlClient;
};

/**
 * The `Store` on PostgreSQL: node-postgres (`pg.Pool`, any managed Postgres) or PGlite (embedded,
 * file-backed or in memory), running the same SQL. Migrations are applied by `init()`.
 *
 * @example
 * const store = postgresStore({ dataDir: './.memory-agents/pgdata' });        // embedded
 * const shared = postgresStore({ connectionString: process.env.DATABASE_URL }); // many processes
 */
export function postgresStore(options: PostgresStoreOptions): Store {
  let client: SqlClient | null = options.client ?? null;
  const ownsClient = options.client === undefined;
  let bound: StoreAreas | null = null;
  let initialized: Promise<void> | null = null;
  const open = (): StoreAreas => {
    if (!bound) throw new Error('postgresStore: call init() before use');
    return bound;
  };
  return {
    specificationVersion: 'v1',
    id: 'postgres',
    // A PGlite database lives in one process (whether the adapter opened it or was handed it as a client).
    capabilities: { persistent: true, shared: options.client ? options.client.dialect !== 'pglite' : options.dataDir === undefined && options.pglite === undefined },
    init() {
      initialized ??= (async () => {
        client ??= await openSqlClient(options);
        await migrate(client, 'memory_agents_migrations', STORE_MIGRATIONS);
        bound = areas(client);
      })();
      return initialized;
    },
    async close() {
      if (client && ownsClient) await client.close();
      if (ownsClient) client = null;
      bound = null;
      initialized = null;
    },
    get organizations() {
      return open().organizations;
    },
    get keys() {
      return open().keys;
    },
    get agents() {
      return open().agents;
    },
    get turns() {
      return open().turns;
    },
    get receipts() {
      return open().receipts;
    },
    get repoints() {
      return open().repoints;
    },
    get threads() {
      return open().threads;
    },
    get messages() {
      return open().messages;
    },
    get logs() {
      return open().logs;
    },
    get leases() {
      return open().leases;
    },
    get jobs() {
      return open().jobs;
    },
    get notLearned() {
      return open().notLearned;
    },
    get ledger() {
      return open().ledger;
    },
    get rateLimits() {
      return open().rateLimits;
    },
    get uploads() {
      return open().uploads;
    },
    get idempotency() {
      return open().idempotency;
    },
    get images() {
      return open().images;
    },
    get erasures() {
      return open().erasures;
    },
    get webhooks() {
      return open().webhooks;
    },
    get memoryMarks() {
      return open().memoryMarks;
    },
    get maintenanceRuns() {
      return open().maintenanceRuns;
    },
    transaction(fn) {
      open();
      return client!.transaction((tx) => fn(areas(tx)));
    },
  };
}
