export { postgresStore, type PostgresStoreOptions } from './postgres-store.js';
export {
  DEFAULT_DATABASE_TIMEOUTS,
  DEFAULT_PGLITE_SETTINGS,
  databaseTimeouts,
  openSqlClient,
  type DatabaseTimeouts,
  type SqlClient,
  type SqlConnectionOptions,
} from './sql-client.js';
export { postgresMemoryIndex, type PostgresMemoryIndex, type PostgresMemoryIndexOptions } from './postgres-memory-index.js';
export type { SettleReport } from './memory-index/settle.js';
