import { open as openFile, readdir, unlink } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { StoreUnavailableError } from '@memory-agents/core/adapter';
import type { SqlClient } from './sql-types.js';

/**
 * A PGlite data directory opened in a worker thread, behind the `SqlClient` surface.
 *
 * Why a thread: PGlite runs PostgreSQL inside wasm on the thread that calls it, synchronously.
 * When the storage under a running server turns read-only (an ext4 remounted `errors=remount-ro`
 * after an I/O error, a failing disk), a commit's write-ahead-log flush (`XLogFlush`) can spin
 * forever inside the wasm without a syscall or an error: on the main thread that stops every
 * request, /healthz included, at 100% CPU. In a worker, the main thread stays free: a watchdog
 * notices a call that does not come back, checks the storage, and when the storage refuses writes
 * (EROFS, EIO) it ends the worker (`terminate()` interrupts the wasm) and answers every call from
 * then on with a {@link StoreUnavailableError} naming the data dir, without touching PGlite again
 * (its in-memory state after a failed WAL write is not trusted). Recovery is a restart on repaired
 * storage; whatever PGlite acknowledged was flushed to its WAL before it was acknowledged.
 */
export type PgliteWorkerOptions = {
  dataDir: string;
  settings: readonly string[];
  schema?: string;
  /**
   * How long a call may stay unanswered before the watchdog checks the storage (then once a
   * second while it stays unanswered). Only a storage that refuses a write ends the database.
   * @default 2000
   */
  probeAfterMs?: number;
};

/**
 * A statement (outside a transaction) starting with this comment is answered without flushing the
 * write-ahead log: for writes nothing depends on after a crash (lease writes: the embedded server
 * frees every lease it finds when it starts, and its learning takes none on a one-process store). Its WAL is flushed with the next write that is flushed, and
 * WAL replays in order, so a crash can lose it only together with everything written after it.
 */
export const NO_FLUSH = '/* memory-agents: no flush */ ';

/** The worker: PGlite with pgvector, one transaction at a time held open for the main thread. */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const fs = require('node:fs');
const path = require('node:path');
const transactions = new Map();
// PGlite runs PostgreSQL with fsync off (and refuses to turn it on): what it wrote may sit in the
// page cache for ~30 s, and storage that fails in that time loses it. So the WAL segments a call
// wrote are flushed (fdatasync) before the call is answered: an acknowledged commit is on disk.
const wal = path.join(workerData.dataDir, 'pg_wal');
const synced = new Map();
// Segments holding WAL of statements answered without a flush (NO_FLUSH), and whether one of them
// is new in pg_wal: flushed with the next flush of anything else. WAL is replayed in order, so a
// crash loses them only together with everything after them.
const deferred = new Set();
let deferredEntry = false;
function syncWal(flush) {
  let added = false;
  let flushed = false;
  for (const name of fs.readdirSync(wal)) {
    if (!/^[0-9A-F]{24}$/.test(name)) continue;
    const file = path.join(wal, name);
    const { mtimeMs, size } = fs.statSync(file);
    const mark = mtimeMs + ':' + size;
    if (synced.get(name) === mark) continue;
    if (!synced.has(name)) { if (flush) added = true; else deferredEntry = true; }
    synced.set(name, mark);
    if (!flush) { deferred.add(name); continue; }
    datasync(file);
    deferred.delete(name);
    flushed = true;
  }
  if (flushed) {
    for (const name of deferred) if (fs.existsSync(path.join(wal, name))) datasync(path.join(wal, name));
    deferred.clear();
    if (deferredEntry) added = true;
    deferredEntry = false;
  }
  if (added) syncPath(wal);
  // pg_control changes when PGlite starts (the state leaves 'shut down') and at a checkpoint. Were
  // it lost, PostgreSQL would take the data dir for cleanly shut down and ignore the WAL after it;
  // the data files the checkpoint wrote go first.
  const { mtimeMs, size } = fs.statSync(control);
  const mark = mtimeMs + ':' + size;
  if (controlMark !== mark) {
    syncTree(workerData.dataDir);
    controlMark = mark;
  }
}
function datasync(file) {
  const fd = fs.openSync(file, 'r+');
  try { fs.fdatasyncSync(fd); } finally { fs.closeSync(fd); }
}
const control = path.join(workerData.dataDir, 'global', 'pg_control');
let controlMark = null;
function syncPath(file) {
  const fd = fs.openSync(file, 'r');
  try { fs.fsyncSync(fd); } finally { fs.closeSync(fd); }
}
function syncTree(dir) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) syncTree(file);
    else if (entry.isFile() && file !== control) syncPath(file);
  }
  syncPath(dir);
  if (dir === workerData.dataDir) { syncPath(control); syncPath(path.dirname(control)); }
}
const NO_FLUSH = ${JSON.stringify(NO_FLUSH)};
let db = null;
/** Opens transaction id (PGlite runs one at a time): its opened promise resolves once its statements can run. */
function opening(id) {
  const entry = { tx: null, commit: null, rollback: null, done: null, opened: null };
  let opened;
  const open = new Promise((resolve) => (opened = resolve));
  entry.done = db.transaction((tx) => new Promise((commit, rollback) => {
    Object.assign(entry, { tx, commit, rollback });
    opened();
  }));
  entry.done.catch(() => undefined).finally(() => transactions.delete(id));
  entry.opened = Promise.race([open, entry.done.then(() => { throw new Error('the transaction ended before it opened'); })]);
  entry.opened.catch(() => undefined);
  return entry;
}
function plain(error) {
  const out = { message: String(error && error.message || error), name: error && error.name || 'Error' };
  if (error && typeof error === 'object') for (const [k, v] of Object.entries(error)) if (['string', 'number', 'boolean'].includes(typeof v)) out[k] = v;
  return out;
}
(async () => {
  const { PGlite } = await import(workerData.pglite);
  const { vector } = await import(workerData.vector);
  db = await PGlite.create({ dataDir: workerData.dataDir, extensions: { vector }, postgresqlconf: workerData.settings });
  if (workerData.schema) await db.exec('CREATE SCHEMA IF NOT EXISTS ' + workerData.schema + '; SET search_path TO ' + workerData.schema);
  syncWal(true);
  parentPort.on('message', async (m) => {
    // A transaction is known from the moment its 'begin' arrives: the main thread sends its first
    // statements without waiting for the answer, and they wait here until it is open.
    if (m.op === 'begin') transactions.set(m.tx, opening(m.tx));
    try {
      let value = null;
      if (m.op === 'query' || m.op === 'exec') {
        const entry = m.tx ? transactions.get(m.tx) : null;
        if (entry) await entry.opened;
        const target = m.tx ? entry?.tx : db;
        if (!target) throw new Error('Transaction is closed');
        if (m.op === 'query') {
          const result = await target.query(m.sql, m.params);
          value = { rows: result.rows, rowCount: result.affectedRows ?? result.rows.length };
        } else await target.exec(m.sql);
      } else if (m.op === 'begin') {
        await transactions.get(m.tx).opened;
        value = m.tx;
      } else if (m.op === 'end') {
        const t = transactions.get(m.tx);
        if (!t) throw new Error('Transaction is closed');
        await t.opened;
        const done = t.done;
        if (m.commit) t.commit(); else t.rollback(new Error('rolled back'));
        try { await done; } catch (error) { if (m.commit) throw error; }
      } else if (m.op === 'close') {
        if (!db.closed) await db.close();
      }
      if (m.op === 'end' || ((m.op === 'query' || m.op === 'exec') && !m.tx)) syncWal(!(m.op === 'query' && m.sql.startsWith(NO_FLUSH)));
      parentPort.postMessage({ id: m.id, ok: true, value });
    } catch (error) {
      parentPort.postMessage({ id: m.id, ok: false, error: plain(error) });
    }
  });
  parentPort.postMessage({ id: 0, ok: true, value: 'open' });
})().catch((error) => parentPort.postMessage({ id: 0, ok: false, error: plain(error) }));
`;

type Pending = { resolve: (value: unknown) => void; reject: (error: unknown) => void; since: number };

function moduleUrl(name: string): string {
  return typeof import.meta.resolve === 'function' ? import.meta.resolve(name) : pathToFileURL(createRequire(import.meta.url).resolve(name)).href;
}

/** Rebuilds an error the worker sent (PGlite's fields kept: code, severity, detail, constraint...). */
function revive(data: Record<string, unknown>): Error {
  const error = new Error(String(data.message));
  Object.assign(error, data);
  return error;
}

/** Opens `dataDir` (created already) in a worker; see {@link PgliteWorkerOptions}. */
export async function openPgliteWorker(options: PgliteWorkerOptions): Promise<SqlClient> {
  const { dataDir } = options;
  const probeAfterMs = options.probeAfterMs ?? 2000;
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: { pglite: moduleUrl('@electric-sql/pglite'), vector: moduleUrl('@electric-sql/pglite-pgvector'), dataDir, settings: [...options.settings], schema: options.schema },
  });
  const pending = new Map<number, Pending>();
  let nextId = 1;
  let nextTx = 1;
  let failure: Error | null = null;
  let closed = false;

  const fail = (reason: string, cause?: unknown) => {
    if (failure) return;
    failure = new StoreUnavailableError(
      `The embedded database could not write to the data dir ${dataDir}: ${reason}. ` +
        'It is not used again until the server is restarted on repaired storage; everything acknowledged before is kept there.',
      cause === undefined ? undefined : { cause },
    );
    process.emitWarning(failure.message, { code: 'MEMORY_AGENTS_STORAGE_FAILED' });
    clearInterval(watchdog);
    void worker.terminate();
    for (const call of pending.values()) call.reject(failure);
    pending.clear();
  };

  const opened = new Promise<void>((resolve, reject) => pending.set(0, { resolve: () => resolve(), reject, since: Date.now() }));
  worker.on('message', (message: { id: number; ok: boolean; value?: unknown; error?: Record<string, unknown> }) => {
    const call = pending.get(message.id);
    if (!call) return;
    pending.delete(message.id);
    if (message.ok) return call.resolve(message.value);
    const error = revive(message.error ?? { message: 'unknown error' });
    if (isFatalStorageError(error)) {
      call.reject(error);
      fail(`its storage failed or turned read-only (${error.message})`, error);
    } else call.reject(error);
  });
  worker.on('error', (error) => fail(`its database thread failed (${error.message})`, error));
  worker.on('exit', (code) => {
    if (!closed) fail(`its database thread stopped (exit code ${code})`);
  });

  // The watchdog: a call that does not come back while the storage refuses writes ends the database.
  let probing = false;
  const probe = async (): Promise<void> => {
    const path = join(dataDir, '.memory-agents-write-probe');
    const file = await openFile(path, 'w');
    try {
      await file.write('probe\n');
      await file.sync();
    } finally {
      await file.close();
    }
    await unlink(path);
  };
  const watchdog = setInterval(() => {
    if (failure || probing) return;
    const now = Date.now();
    let oldest = now;
    // Opening (id 0) counts too: PGlite may spin opening a data dir whose storage fails.
    for (const call of pending.values()) oldest = Math.min(oldest, call.since);
    if (now - oldest < probeAfterMs) return;
    probing = true;
    const slowProbe = setTimeout(() => fail('its storage did not answer a test write within 10 s'), 10_000);
    probe()
      .catch((error: NodeJS.ErrnoException) => {
        const code = error.code ?? '';
        if (code === 'EROFS') fail('its storage turned read-only', error);
        else if (code === 'EIO') fail('its storage answers input/output errors', error);
        else if (code === 'EACCES' || code === 'EPERM') fail(`writing there is no longer permitted (${code})`, error);
        // A full disk: PGlite recovers from it once space is freed, unless it stopped answering.
        else if ((code === 'ENOSPC' || code === 'EDQUOT') && Date.now() - oldest > 30_000) fail(`its storage is full and the database has not answered for 30 s (${code})`, error);
      })
      .finally(() => {
        clearTimeout(slowProbe);
        probing = false;
      });
  }, Math.min(1000, probeAfterMs));
  watchdog.unref();

  const call = <T>(message: Record<string, unknown>): Promise<T> => {
    if (failure) return Promise.reject(failure);
    if (closed) return Promise.reject(new Error('PGlite is closed'));
    const id = nextId++;
    return new Promise<T>((resolve, reject) => {
      pending.set(id, { resolve: resolve as (value: unknown) => void, reject, since: Date.now() });
      worker.postMessage({ ...message, id });
    });
  };

  try {
    await opened;
  } catch (error) {
    closed = true;
    clearInterval(watchdog);
    await worker.terminate();
    throw error;
  }

  const make = (tx: number | null): SqlClient => {
    const client: SqlClient = {
      dialect: 'pglite',
      hasVector: true,
      query: <Row>(sql: string, params: readonly unknown[] = []) => call<{ rows: Row[]; rowCount: number }>({ op: 'query', sql, params, tx }),
      exec: (sql: string) => call<void>({ op: 'exec', sql, tx }),
      async transaction<T>(fn: (client: SqlClient) => Promise<T>): Promise<T> {
        if (tx !== null) return fn(client);
        // Not waited for: the first statements follow at once and wait in the worker until the
        // transaction is open (one round trip less per transaction). A failed begin fails them.
        const id = nextTx++;
        const begun = call<number>({ op: 'begin', tx: id });
        begun.catch(() => undefined);
        let result: T;
        try {
          result = await fn(make(id));
          await begun;
        } catch (error) {
          await call({ op: 'end', tx: id, commit: false }).catch(() => undefined);
          // The begin's own error says more than "Transaction is closed" of the statements after it.
          await begun;
          throw error;
        }
        await call({ op: 'end', tx: id, commit: true });
        return result;
      },
      async close() {
        if (tx !== null || closed) return;
        clearInterval(watchdog);
        // After a storage failure PGlite is not closed (closing checkpoints, which writes the WAL).
        let closedCleanly = false;
        if (!failure) closedCleanly = await call({ op: 'close' }).then(() => true, () => false);
        closed = true;
        await worker.terminate();
        // The shutdown checkpoint wrote data files and may have removed WAL segments.
        if (closedCleanly) await syncTree(dataDir).catch(() => undefined);
      },
    };
    return client;
  };
  return make(null);
}

/**
 * An error of PGlite that says its storage failed under it in a way PGlite does not recover from:
 * a write or fsync of its write-ahead log failed, or the storage turned read-only or answers I/O
 * errors. A full disk when extending a table ("could not extend file ... No space left on
 * device") is not one of these: PGlite recovers from it once space is freed.
 */
export function isFatalStorageError(error: unknown): boolean {
  for (let current = error, depth = 0; typeof current === 'object' && current !== null && depth < 8; depth++) {
    const value = current as { code?: unknown; message?: unknown; severity?: unknown; cause?: unknown };
    if (value.code === 'EROFS' || value.code === 'EIO') return true;
    if (value.severity === 'PANIC') return true;
    if (typeof value.message === 'string' && /could not write to log file|could not (write to|open|create) file "pg_wal\/|could not fsync|read-only file system|input\/output error/i.test(value.message)) return true;
    current = value.cause;
  }
  return false;
}

/**
 * Flushes every file and directory under `dir` to the storage (fsync), e.g. a data dir PGlite
 * wrote with fsync off: after `initdb` and after the shutdown checkpoint.
 */
export async function syncTree(dir: string): Promise<void> {
  const entries = await readdir(dir, { withFileTypes: true });
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) await syncTree(path);
    else if (entry.isFile()) await syncFile(path);
  }
  await syncFile(dir);
}

async function syncFile(path: string): Promise<void> {
  const handle = await openFile(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
