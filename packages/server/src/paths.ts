import { join, resolve } from 'node:path';

/** Where the server keeps its state: one data dir (embedded default) or a PostgreSQL database. */
export type StateLocation = { dataDir: string; databaseUrl?: undefined } | { databaseUrl: string; dataDir?: string; databaseTimeoutMs?: number };

/** Default data dir of the CLI, relative to the working directory. */
export const DEFAULT_DATA_DIR = './.memory-agents';

/** Paths inside a data dir. */
export function dataPaths(dataDir: string) {
  const root = resolve(dataDir);
  return {
    root,
    pgdata: join(root, 'pgdata'),
    lancedb: join(root, 'lancedb'),
    blobs: join(root, 'blobs'),
    controlSocket: join(root, 'control.sock'),
    pidFile: join(root, 'server.pid'),
  };
}
