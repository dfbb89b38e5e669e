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
  /**
   * Runs `fn` in one transaction on one connection; rolls back when it rejects. With
   * `{ unbounded: true }` its statements run without the query and statement timeouts (a
   * migration, an index build); the connection timeout still applies.
   */
  transaction<T>(fn: (client: SqlClient) => Promise<T>, options?: { unbounded?: boolean }): Promise<T>;
  /**
   * Runs statements one after another on one connection, outside any transaction and without the
   * statement timeout (`VACUUM`, `CREATE INDEX CONCURRENTLY`, which refuse to run in a transaction
   * block); session settings they make (`SET maintenance_work_mem`) are reset afterwards. Absent
   * inside a transaction.
   */
  maintenance?(...statements: string[]): Promise<void>;
  close(): Promise<void>;
};
