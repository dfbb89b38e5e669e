export { postgresStore, type PostgresStoreOptions } from './postgres-store.js';
export { openSqlClient, type SqlClient, type SqlConnectionOptions } from './sql-client.js';
