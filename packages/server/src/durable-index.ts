import { open, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { MemoryIndex } from '@memory-agents/core';
import { StoreUnavailableError } from '@memory-agents/core/adapter';

/**
 * The embedded memory index (LanceDB in `directory`) with what a write changed flushed to the
 * storage (fsync) before the write resolves. LanceDB does not fsync: a storage failure (a disk
 * that turns read-only, power loss) within the kernel's writeback delay (~30 s) would lose
 * memories whose learning the store already recorded as committed, so they would never be learned
 * again. LanceDB's files are written once (data fragments, manifests, transactions); the few it
 * rewrites end in `.json` (the latest-version hint). So after `upsert`, `deleteBy` and `copyAgent`
 * the files not seen before, the `.json` files and the directories holding new files are flushed;
 * concurrent writes share one flush. A flush that fails for the storage answers 503.
 */
export function durableMemoryIndex(index: MemoryIndex, directory: string): MemoryIndex {
  const known = new Set<string>();
  let flushing: Promise<void> = Promise.resolve();
  let queued: Promise<void> | null = null;

  const walk = async (dir: string): Promise<boolean> => {
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw error;
    }
    let added = false;
    for (const entry of entries) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (!known.has(path)) added = true;
        known.add(path);
        await walk(path);
      } else if (entry.isFile() && (!known.has(path) || entry.name.endsWith('.json'))) {
        if (!known.has(path)) added = true;
        await sync(path);
        known.add(path);
      }
    }
    if (added) await sync(dir);
    return added;
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
    search: (request) => index.search(request),
    list: (request) => index.list(request),
    get: (request) => index.get(request),
    stats: (request) => index.stats(request),
    embedder: () => index.embedder(),
    ...(index.ping ? { ping: () => index.ping!() } : {}),
    ...(index.count ? { count: () => index.count!() } : {}),
    ...(index.findDuplicates ? { findDuplicates: (request: Parameters<NonNullable<MemoryIndex['findDuplicates']>>[0]) => index.findDuplicates!(request) } : {}),
  };
}

async function sync(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
