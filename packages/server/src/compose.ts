import { mkdir, readdir } from 'node:fs/promises';
import { createMemoryService, fileSystemBlobs, stderrLogger, type Logger, type MemoryIndex, type MemoryService, type MemoryServiceOptions, type Store, type RedactionOptions, type MemoryLifecycleOptions, type TelemetryObserver, type WebhookOptions } from '@memory-agents/core';
import { databaseTimeouts, openSqlClient, postgresMemoryIndex, postgresStore } from '@memory-agents/adapter-postgres';
import { documentsInChildProcess } from './documents-process.js';
import { durableMemoryIndex } from './durable-index.js';
import { lazyMemoryIndex } from './lazy-memory-index.js';
import { DEFAULT_DATA_DIR, dataPaths, type StateLocation } from './paths.js';
import type { ServiceModels } from './model-options.js';

export { DEFAULT_DATA_DIR, dataPaths, type StateLocation } from './paths.js';

/** A composed service and what closes everything it opened. */
export type ComposedService = {
  service: MemoryService;
  /** The store and index the service runs on (read by the metrics at scrape time). */
  store: Store;
  index: MemoryIndex;
  close(): Promise<void>;
};

/**
 * The composition root.
 * - Embedded default (`dataDir`): PGlite for state, LanceDB for the memory index (loaded on its
 *   first use) and plain files for blobs, all inside the data dir; offline tesseract OCR. PDF and Word conversion and OCR run
 *   in a child process started on demand and ended when idle (`documentsInChildProcess`).
 * - PostgreSQL (`databaseUrl`): state and memory index in the database (pgvector when installed,
 *   an exact fallback otherwise), so many processes share them; blobs in the data dir (put it on
 *   shared storage when processes run on several machines).
 * `models` replaces the offline model defaults (extractive answers, hashed n-gram embedder,
 * verbatim memory writer) with configured ones (`createServiceModels`).
 * The caller runs `service.start()`.
 */
export async function composeService(
  location: StateLocation,
  logger: Logger = stderrLogger,
  models: ServiceModels = {},
  { backgroundWork = true, telemetry, webhooks, redaction, memoryLifecycle, maintenance }: { backgroundWork?: boolean; telemetry?: TelemetryObserver; webhooks?: WebhookOptions; redaction?: RedactionOptions; memoryLifecycle?: MemoryLifecycleOptions; maintenance?: MemoryServiceOptions['maintenance'] } = {},
): Promise<ComposedService> {
  const paths = dataPaths(location.dataDir ?? DEFAULT_DATA_DIR);
  await mkdir(paths.root, { recursive: true, mode: 0o700 });
  const blobs = fileSystemBlobs({ directory: paths.blobs });
  // PDF, Word and HTML uploads (core alone reads only the text formats); PDF and Word conversion
  // and tesseract OCR run in a child process that exits when idle (documents-process.ts).
  const documents = documentsInChildProcess();
  const { ocr, converter } = documents;
  if (location.databaseUrl !== undefined) {
    // Bounded waits (DEFAULT_DATABASE_TIMEOUTS unless --database-timeout-ms): a database that
    // stops answering fails requests with 503 within seconds.
    const timeouts = location.databaseTimeoutMs === undefined ? {} : { timeouts: databaseTimeouts(location.databaseTimeoutMs) };
    const client = await openSqlClient({ connectionString: location.databaseUrl, ...timeouts });
    const store = postgresStore({ client });
    const index = postgresMemoryIndex({ client });
    const service = createMemoryService({
      store,
      index,
      blobs,
      ocr,
      documentConverter: converter,
      logger,
      backgroundWork,
      ...(telemetry ? { telemetry } : {}),
      ...(webhooks ? { webhooks } : {}),
      ...(redaction ? { redaction } : {}),
      ...(memoryLifecycle ? { memoryLifecycle } : {}),
    ...(maintenance ? { maintenance } : {}),
      ...(maintenance ? { maintenance } : {}),
      ...models,
    });
    return {
      service,
      store,
      index,
      async close() {
        await service.stop();
        await documents.close();
        await client.close();
      },
    };
  }
  const store = postgresStore({ dataDir: paths.pgdata });
  // LanceDB does not fsync: what a write changed is flushed before it resolves (durable-index.ts).
  const index = durableMemoryIndex(
    lazyMemoryIndex({
      id: 'lancedb',
      capabilities: { approximateVectors: true, persistent: true },
      load: async () => (await import('@memory-agents/adapter-lancedb')).lancedbMemoryIndex({ uri: paths.lancedb, readConsistencySeconds: null }),
      // A data dir with no memory yet: the start's embedder check (re-embedding) loads nothing.
      isEmpty: async () => (await readdir(paths.lancedb).catch(() => [])).length === 0,
    }),
    paths.lancedb,
  );
  const service = createMemoryService({
    store,
    // The server is the only process on its data dir (the pid file and control socket see to it),
    // so reads need not check the directory for other writers' versions. LanceDB (its native
    // binding, ~30 MB resident) is loaded and opened on the first call that needs memories.
    index,
    blobs,
    ocr,
    documentConverter: converter,
    logger,
    backgroundWork,
    ...(telemetry ? { telemetry } : {}),
    ...(webhooks ? { webhooks } : {}),
    ...(redaction ? { redaction } : {}),
    ...(memoryLifecycle ? { memoryLifecycle } : {}),
    ...(maintenance ? { maintenance } : {}),
    ...models,
  });
  return {
    service,
    store,
    index,
    async close() {
      await service.stop();
      await documents.close();
    },
  };
}
