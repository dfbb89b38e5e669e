export { postgresStore, type PostgresStoreOptions } from './postgres-store.js';
export { DEFAULT_PGLITE_SETTINGS, openSqlClient, type SqlClient, type SqlConnectionOptions } from './sql-client.js';
export { postgresMemoryIndex, type PostgresMemoryIndexOptions } from './postgres-memory-index.js';
