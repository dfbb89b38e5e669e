import type { Store } from '@memory-agents/core';
import type { PGlite } from '@electric-sql/pglite';
import { postgresStore } from '../postgres-store.js';
import { DEFAULT_PGLITE_SETTINGS, openSqlClient, type SqlClient } from '../sql-client.js';

// Tests only. An in-memory PGlite costs initdb plus the store's migrations, ~3 s on a 2-core
// machine (more under load), and the store conformance suite wants a fresh database for each of its
// cases. So the first call in a test process builds one database the way
// `postgresStore({ dataDir: 'memory://' })` does (initdb, then every migration from empty), dumps
// its data directory once, and every case opens its own new PGlite instance from that dump
// (`loadDataDir`, ~0.3 s): separate memory, nothing shared between cases but the starting bytes.
// Tests that open several empty databases start from a copy of one initdb the same way.

let template: Promise<Blob> | null = null;
let emptyTemplate: Promise<Blob> | null = null;

/** Closes `db` once; closing again does nothing (as a `SqlClient` the adapter opened does). */
const closer = (db: PGlite) => async () => {
  if (!db.closed) await db.close();
};

async function openPglite(loadDataDir?: Blob): Promise<PGlite> {
  const { PGlite } = await import('@electric-sql/pglite');
  const { vector } = await import('@electric-sql/pglite-pgvector');
  // The same extensions and settings as `openSqlClient({ dataDir: 'memory://' })`.
  return PGlite.create({ dataDir: 'memory://', extensions: { vector }, postgresqlconf: [...DEFAULT_PGLITE_SETTINGS], ...(loadDataDir ? { loadDataDir } : {}) });
}

/**
 * The data directory of a new in-memory PGlite after `prepare`, checkpointed (flushed to the data
 * files, so each copy starts without WAL to replay).
 */
async function dumpedPglite(prepare: (db: PGlite) => Promise<void>): Promise<Blob> {
  const db = await openPglite();
  try {
    await prepare(db);
    await db.exec('CHECKPOINT');
    return await db.dumpDataDir('none');
  } finally {
    await db.close();
  }
}

/** The data directory of a new, empty in-memory PGlite (initdb only), built once per process. */
function emptyPgliteTemplate(): Promise<Blob> {
  emptyTemplate ??= dumpedPglite(async () => undefined);
  return emptyTemplate;
}

/**
 * A `SqlClient` on a new, empty in-memory PGlite of its own: what `openSqlClient({ dataDir:
 * 'memory://' })` gives, without running initdb again. `close()` closes the database.
 */
export async function emptyPgliteClient(): Promise<SqlClient> {
  const db = await openPglite(await emptyPgliteTemplate());
  const client = await openSqlClient({ pglite: db });
  return Object.assign(client, { close: closer(db) });
}

/** The data directory of an in-memory PGlite with every store migration applied, built once per process. */
function migratedTemplate(): Promise<Blob> {
  template ??= dumpedPglite(async (db) => {
    const store = postgresStore({ pglite: db });
    await store.init();
    await store.close();
  });
  return template;
}

/**
 * A new in-memory PGlite of its own, already holding every store migration; the caller closes it.
 * `postgresStore({ pglite })` on it finds the migrations recorded and applies none.
 */
export async function migratedPglite(): Promise<PGlite> {
  return openPglite(await migratedTemplate());
}

/**
 * A fresh, initialized `postgresStore` on its own migrated in-memory PGlite, for one test;
 * `cleanup` closes the database (the store does not own a PGlite it was handed).
 */
export async function migratedPgliteStore(): Promise<{ store: Store; cleanup: () => Promise<void> }> {
  const db = await migratedPglite();
  const store = postgresStore({ pglite: db });
  await store.init();
  return { store, cleanup: closer(db) };
}
