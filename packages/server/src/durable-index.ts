import { open, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { MemoryIndex } from '@memory-agents/core';
import { StoreUnavailableError } from '@memory-agents/core/adapter';

/** Files flushed at once (the first write after a start flushes every file of the index). */
const SYNC_CONCURRENCY = 16;

/**
 * The embedded memory index (LanceDB in `directory`) with what a write changed flushed to the
 * storage (fsync) before the write resolves. LanceDB does not fsync: a storage failure (a disk
 * that turns read-only, power loss) within the kernel's writeback delay (~30 s) would lose
 * memories whose learning the store already recorded as committed, so they would never be learned
 * again. LanceDB's files are written once (data fragments, manifests, transactions); the few it
 * rewrites end in `.json` (the latest-version hint). So after `upsert`, `deleteBy` and `copyAgent`
 * the files not seen before, the `.json` files and the directories holding new files are flushed;
 * they are flushed concurrently, and concurrent writes share one flush. A flush that fails for the
 * storage answers 503.
 */
export function durableMemoryIndex(index: MemoryIndex, directory: string): MemoryIndex {
  const known = new Set<string>();
  let flushing: Promise<void> = Promise.resolve();
  let queued: Promise<void> | null = null;

  /** The paths under `dir` to flush: files not seen before, `.json` files, directories holding new entries. */
  const changed = async (dir: string, out: { path: string; newDirs: string[] }[]): Promise<void> => {
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw error;
    }
    let added = false;
    const newDirs: string[] = [];
    const below: Promise<void>[] = [];
    for (const entry of entries) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (!known.has(path)) newDirs.push(path);
        below.push(changed(path, out));
      } else if (entry.isFile() && (!known.has(path) || entry.name.endsWith('.json'))) {
        if (!known.has(path)) added = true;
        out.push({ path, newDirs: [] });
      }
    }
    await Promise.all(below);
    // The directory's entries of new files and subdirectories are flushed with the directory.
    if (added || newDirs.length > 0) out.push({ path: dir, newDirs });
  };
  // Concurrently ({@link SYNC_CONCURRENCY} at a time): the file system commits concurrent flushes
  // together (one journal commit rather than one per file), and LanceDB wrote every file before
  // the write resolved, so no flush waits for another. A path is known once its flush succeeded.
  const walk = async (dir: string): Promise<void> => {
    const paths: { path: string; newDirs: string[] }[] = [];
    await changed(dir, paths);
    let next = 0;
    const lane = async () => {
      while (next < paths.length) {
        const { path, newDirs } = paths[next++]!;
        // Gone since it was listed: a temporary file of LanceDB's own background work (an index
        // being built renames its `.tmp` files), not a file of the write; nothing to flush.
        if (!(await sync(path))) continue;
        known.add(path);
        for (const newDir of newDirs) known.add(newDir);
      }
    };
    await Promise.all(Array.from({ length: Math.min(SYNC_CONCURRENCY, paths.length) }, lane));
  };
  const flush = (): Promise<void> => {
    // One flush at a time; a write that ends while one runs waits for the next one.
    queued ??= flushing.then(async () => {
      queued = null;
      try {
        await walk(directory);
      } catch (error) {
        throw new StoreUnavailableError(`The memory index could not flush its files in ${directory} to the storage (${(error as Error).message}).`, { cause: error });
      }
    });
    flushing = queued.catch(() => undefined);
    return queued;
  };
  const written =
    <A extends unknown[], R>(method: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      const result = await method(...args);
      await flush();
      return result;
    };
  return {
    specificationVersion: index.specificationVersion,
    id: index.id,
    capabilities: index.capabilities,
    init: () => index.init(),
    close: () => index.close(),
    upsert: written((request) => index.upsert(request)),
    deleteBy: written((request) => index.deleteBy(request)),
    copyAgent: written((request) => index.copyAgent(request)),
    update: written((request) => index.update(request)),
    rewriteKeywords: written((request) => index.rewriteKeywords(request)),
    search: (request) => index.search(request),
    list: (request) => index.list(request),
    get: (request) => index.get(request),
    stats: (request) => index.stats(request),
    embedder: () => index.embedder(),
    beginReembed: written((request) => index.beginReembed(request)),
    writeReembedded: written((request) => index.writeReembedded(request)),
    finishReembed: written((request) => index.finishReembed(request)),
    reembedProgress: () => index.reembedProgress(),
    reembedPending: (request) => index.reembedPending(request),
    ...(index.ping ? { ping: () => index.ping!() } : {}),
    ...(index.count ? { count: () => index.count!() } : {}),
    ...(index.findDuplicates ? { findDuplicates: (request: Parameters<NonNullable<MemoryIndex['findDuplicates']>>[0]) => index.findDuplicates!(request) } : {}),
  };
}

/** Flushes the file or directory; false when it no longer exists. */
async function sync(path: string): Promise<boolean> {
  let handle;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
  try {
    await handle.sync();
    return true;
  } finally {
    await handle.close();
  }
}
