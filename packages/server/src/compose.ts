import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { createMemoryService, stderrLogger, type Logger, type MemoryService } from '@memory-agents/core';
import { postgresStore } from '@memory-agents/adapter-postgres';

/** Where the server keeps its state: one data dir (embedded default) or a PostgreSQL database. */
export type StateLocation = { dataDir: string; databaseUrl?: undefined } | { databaseUrl: string; dataDir?: string };

/** Default data dir of the CLI, relative to the working directory. */
export const DEFAULT_DATA_DIR = './.memory-agents';

/** Paths inside a data dir. */
export function dataPaths(dataDir: string) {
  const root = resolve(dataDir);
  return {
    root,
    pgdata: join(root, 'pgdata'),
    controlSocket: join(root, 'control.sock'),
    pidFile: join(root, 'server.pid'),
  };
}

/**
 * The composition root: the service on the embedded default (PGlite in the data dir) or on
 * PostgreSQL. The caller runs `service.start()`.
 */
export async function composeService(location: StateLocation, logger: Logger = stderrLogger): Promise<MemoryService> {
  if (location.databaseUrl !== undefined) {
    return createMemoryService({ store: postgresStore({ connectionString: location.databaseUrl }), logger });
  }
  const paths = dataPaths(location.dataDir);
  await mkdir(paths.root, { recursive: true, mode: 0o700 });
  return createMemoryService({ store: postgresStore({ dataDir: paths.pgdata }), logger });
}
