import * as lancedb from '@lancedb/lancedb';
import { Index, type Table } from '@lancedb/lancedb';
import { ServiceError } from '@memory-agents/core';
import { type EmbedderFingerprint } from '@memory-agents/core/adapter';
import { buildVectorIndexInChild } from './build-process.js';
import { EXPIRY_COLUMNS, KEY_COLUMNS, META_EMBEDDER_DIMENSIONS, META_EMBEDDER_ID, V2_COLUMNS, tableSchema } from './rows.js';
import { currentTableName, openReembed } from './reembed.js';
import { guard, type IndexState } from './state.js';

/** Index names LanceDB gives (`<column>_idx`); `indexStats` and `prewarmIndex` take them. */
export const VECTOR_INDEX = 'vector_idx';
const SCALAR_INDEXES = ['terms_idx', 'agent_id_idx', 'id_idx', 'valid_to_idx'];

/** Opens the connection once (retried after a failure) and adopts the table if it exists. */
export async function ready(state: IndexState): Promise<void> {
  if (state.isClosed) throw new ServiceError('service_unavailable', 'The memory index is closed.');
  state.starting ??= guard('init', () => start(state)).catch((error: unknown) => {
    state.starting = null;
    throw error;
  });
  await state.starting;
}

async function start(state: IndexState): Promise<void> {
  const { uri, storageOptions, readConsistencySeconds } = state.options;
  state.connection = await lancedb.connect(uri, {
    ...(readConsistencySeconds === null ? {} : { readConsistencyInterval: readConsistencySeconds }),
    ...(storageOptions ? { storageOptions } : {}),
  });
  const names = await state.connection.tableNames();
  // A re-embed may have switched the current generation to a table of its own (reembed.ts).
  state.tableName = await currentTableName(state, names);
  const opened = names.includes(state.tableName) ? await openCommitted(state.connection, state.tableName) : null;
  if (opened) {
    await adopt(state, opened);
    await prewarm(state, state.table!);
  }
  await openReembed(state, names);
}

/**
 * Opens a table listed by `tableNames()`, or null when it has no committed version. LanceDB lists
 * every `<name>.lance` directory, and a process killed while creating (or dropping) a table leaves
 * one with data files and no manifest, which `openTable` refuses for ever ("exists but could not be
 * loaded"): that is a table that never was (lancedb/lancedb#3127), and creating it again over the
 * directory works. Any other failure to open (a manifest that is there but unreadable) is thrown.
 */
export async function openCommitted(connection: lancedb.Connection, name: string): Promise<Table | null> {
  try {
    return await connection.openTable(name);
  } catch (error) {
    if (error instanceof Error && NEVER_COMMITTED.test(error.message)) return null;
    throw error;
  }
}

/** LanceDB's message for a dataset directory without a `_versions` manifest (lance DatasetNotFound). */
const NEVER_COMMITTED = /Dataset at path \S+ was not found: Not found: \S+\/_versions\b/;

/** Reads the fingerprint and the index state of an existing table. */
export async function adopt(state: IndexState, opened: Table): Promise<void> {
  state.table = opened;
  await addV2Columns(opened);
  await addKeyColumns(opened);
  await addColumnsOnce(opened, EXPIRY_COLUMNS);
  const { metadata, fields } = await opened.schema();
  const id = metadata.get(META_EMBEDDER_ID);
  const dimensions = Number(metadata.get(META_EMBEDDER_DIMENSIONS));
  state.fingerprint = id ? { id, dimensions } : null;
  // Built here, once, with this package's Arrow classes (the table's schema never changes; the
  // one LanceDB returns is made by its own copy of apache-arrow, which the builders reject).
  state.hasHitColumn = fields.some((field) => field.name === 'hit');
  state.schema = state.fingerprint ? tableSchema(state.fingerprint, { hit: state.hasHitColumn, v2: true, keys: true, expiry: true }) : null;
  const indices = await opened.listIndices();
  state.hasFullTextIndex = indices.some((index) => index.columns.includes('terms'));
  state.hasValidityIndex = indices.some((index) => index.columns.includes('valid_to'));
  const vectorIndex = indices.find((index) => index.columns.includes('vector'));
  state.hasVectorIndex = vectorIndex !== undefined;
  state.rowsAtVectorIndexBuild = vectorIndex?.numIndexedRows ?? 0;
}

/**
 * Schema evolution: a table made before the memory record v2 (schema versions 1 and 2) gets its
 * columns added with the port's defaults for rows written before (writer 'unknown', no job or span,
 * `alsoFrom` [], valid from `occurred_at ?? created_at`, current, not suspicious). One new table
 * version; a process that loses the race to another one adding them reads the columns it added.
 */
async function addV2Columns(opened: Table): Promise<void> {
  const has = async () => (await opened.schema()).fields.some((field) => field.name === V2_COLUMNS[0]!.name);
  if (await has()) return;
  try {
    await opened.addColumns(V2_COLUMNS.map((column) => ({ name: column.name, valueSql: column.valueSql })));
  } catch (error) {
    await opened.checkoutLatest();
    if (!(await has())) throw error;
  }
}

/**
 * Schema version 4: `duplicate_key` (near-duplicates merged when learned, issue 33) added to a
 * table made before it, NULL on the rows written before (never merged into). Same race handling.
 */
async function addKeyColumns(opened: Table): Promise<void> {
  const has = async () => (await opened.schema()).fields.some((field) => field.name === KEY_COLUMNS[0]!.name);
  if (await has()) return;
  try {
    await opened.addColumns(KEY_COLUMNS.map((column) => ({ name: column.name, valueSql: column.valueSql })));
  } catch (error) {
    await opened.checkoutLatest();
    if (!(await has())) throw error;
  }
}

/**
 * Schema evolution for columns added later (version 5: `expires_at`, issue 42, NULL on rows
 * written before: they never expire), with the same race handling as {@link addKeyColumns}.
 */
async function addColumnsOnce(opened: Table, added: readonly { name: string; valueSql: string }[]): Promise<void> {
  const has = async () => (await opened.schema()).fields.some((field) => field.name === added[0]!.name);
  if (await has()) return;
  try {
    await opened.addColumns(added.map((column) => ({ name: column.name, valueSql: column.valueSql })));
  } catch (error) {
    await opened.checkoutLatest();
    if (!(await has())) throw error;
  }
}

/**
 * Loads indexes into LanceDB's cache, so the first searches after opening the table or after an
 * index build do not each pay for reading the index piece by piece (1M rows: ~1 s from the page
 * cache, ~0.9 GB of memory that searching would fill anyway). A failure costs speed only.
 */
export async function prewarm(state: IndexState, current: Table, names?: readonly string[]): Promise<void> {
  try {
    for (const name of names ?? (await current.listIndices()).map((index) => index.name)) await current.prewarmIndex(name);
  } catch (error) {
    state.options.onBackgroundError(error, 'index prewarm');
  }
}

/** Creates the table on first write, or adopts one another process created meanwhile. */
export async function ensureTable(state: IndexState, given: EmbedderFingerprint): Promise<Table> {
  if (state.table) return state.table;
  const { connection, tableName } = state;
  try {
    await adopt(state, await connection!.createEmptyTable(tableName, tableSchema(given), { mode: 'create' }));
  } catch (error) {
    const opened = (await connection!.tableNames()).includes(tableName) ? await openCommitted(connection!, tableName) : null;
    if (!opened) throw error;
    await adopt(state, opened);
  }
  return state.table!;
}

/** The full-text (`terms`), `agent_id` (bitmap) and `id` (btree) indexes, unless built already (in the maintenance lane). */
export async function ensureScalarIndexes(state: IndexState, current: Table): Promise<void> {
  if (state.hasFullTextIndex && state.hasValidityIndex) return;
  await state.lane.run('full-text index build', async () => {
    if (!state.hasFullTextIndex) await buildScalarIndexes(state, current);
    else if (!state.hasValidityIndex) await buildValidityIndex(state, current);
  });
}

/** The btree on `valid_to` that keeps "current only" (`valid_to IS NULL`) an index lookup; for tables made before it. */
async function buildValidityIndex(state: IndexState, current: Table): Promise<void> {
  await state.listCache.noData(current, 1, () => current.createIndex('valid_to', { config: Index.btree(), replace: true }));
  state.hasValidityIndex = true;
  await prewarm(state, current, ['valid_to_idx']);
}

/** (Re)builds the full-text, `agent_id` and `id` indexes; runs in the maintenance lane. */
export async function buildScalarIndexes(state: IndexState, current: Table): Promise<void> {
  // Four index commits, no row changed: lists need not be read again for them.
  await state.listCache.noData(current, 4, () => createScalarIndexes(current));
  state.hasFullTextIndex = true;
  state.hasValidityIndex = true;
  await prewarm(state, current, SCALAR_INDEXES);
}

/** The full-text, `agent_id`, `id` and `valid_to` indexes of `current` (four index commits). */
export async function createScalarIndexes(current: Table): Promise<void> {
  // The analyzer already ran in core: the index only splits on spaces and must not stem again.
  const fts = Index.fts({ withPosition: false, baseTokenizer: 'whitespace', lowercase: false, stem: false, removeStopWords: false, asciiFolding: false });
  await current.createIndex('terms', { config: fts, replace: true });
  await current.createIndex('agent_id', { config: Index.bitmap(), replace: true });
  await current.createIndex('id', { config: Index.btree(), replace: true });
  await current.createIndex('valid_to', { config: Index.btree(), replace: true });
}

/**
 * One ANN graph over every row (replacing the index and its deltas); runs in the maintenance lane.
 * Rows appended while it trains are committed beside it and searched unindexed until an optimize.
 */
export async function buildVectorIndex(state: IndexState, current: Table): Promise<void> {
  const rows = await current.countRows();
  // LanceDB's advice for HNSW: few partitions (each one is a graph searched per query);
  // one per million rows keeps the training memory bounded.
  const numPartitions = Math.max(1, Math.ceil(rows / 1_000_000));
  const config = { distanceType: 'cosine' as const, numPartitions, efConstruction: 150 };
  const { uri, storageOptions, indexBuildsInChildProcess } = state.options;
  const { tableName } = state;
  if (indexBuildsInChildProcess && !uri.startsWith('memory://')) {
    // One index commit (by the child), no row changed.
    const built = await state.listCache.noData(current, 1, async () => {
      try {
        await buildVectorIndexInChild({ uri, storageOptions, tableName, config }, (child) => (state.buildProcess = child));
      } catch (error) {
        if (state.isClosed) return false; // killed by close()
        throw error;
      }
      if (state.isClosed) return false;
      await current.checkoutLatest();
      return true;
    });
    if (!built) return;
  } else {
    await state.listCache.noData(current, 1, () => current.createIndex('vector', { config: Index.hnswSq(config), replace: true }));
  }
  state.hasVectorIndex = true;
  state.rowsAtVectorIndexBuild = rows;
  await prewarm(state, current, [VECTOR_INDEX]);
}
