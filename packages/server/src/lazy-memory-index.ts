import type { MemoryIndex } from '@memory-agents/core';
import type { MemoryIndexCapabilities } from '@memory-agents/core/adapter';

/**
 * A `MemoryIndex` whose adapter is loaded and opened on its first use, not at `init()`: the
 * embedded server loads the LanceDB native binding (~30 MB resident) only once a request needs
 * memories, so a server that only answers admin, agent or thread calls never holds it.
 *
 * - `init()` resolves at once; the first other call loads the adapter (`load`), runs its `init()`
 *   and then the call. Concurrent first calls share that one load; a failed load is retried on
 *   the next call (the failure goes to the call that triggered it).
 * - `close()` closes the adapter if it was loaded (waiting for a load in progress); calls after
 *   `close()` reject, as the adapter's own would.
 * - `id` and `capabilities` are given by the caller: they must be the adapter's.
 */
export function lazyMemoryIndex(options: {
  id: string;
  capabilities: MemoryIndexCapabilities;
  load: () => Promise<MemoryIndex>;
  /**
   * True when the storage holds nothing yet (no table written). Then, until the adapter is loaded,
   * `embedder()` and `reembedProgress()` answer null, `reembedPending` nothing and `beginReembed`
   * does nothing, as on an empty index, without loading it (the service asks at every start).
   */
  isEmpty?: () => Promise<boolean>;
}): MemoryIndex {
  let opening: Promise<MemoryIndex> | null = null;
  let closed = false;
  const open = (): Promise<MemoryIndex> => {
    if (closed) return Promise.reject(new Error('The memory index is closed.'));
    opening ??= (async () => {
      const index = await options.load();
      await index.init();
      return index;
    })().catch((error: unknown) => {
      opening = null;
      throw error;
    });
    return opening;
  };
  /** Not loaded and nothing stored: the answers of an empty index need no adapter. */
  const unloadedAndEmpty = async (): Promise<boolean> => opening === null && !closed && options.isEmpty !== undefined && (await options.isEmpty());
  return {
    specificationVersion: 'v1',
    id: options.id,
    capabilities: options.capabilities,
    async init() {},
    async close() {
      if (closed) return;
      closed = true;
      const index = await opening?.catch(() => null);
      await index?.close();
    },
    upsert: async (request) => (await open()).upsert(request),
    search: async (request) => (await open()).search(request),
    get: async (request) => (await open()).get(request),
    deleteBy: async (request) => (await open()).deleteBy(request),
    list: async (request) => (await open()).list(request),
    update: async (request) => (await open()).update(request),
    rewriteKeywords: async (request) => (await open()).rewriteKeywords(request),
    // An index without the lookup finds no duplicates: learning then merges nothing.
    findDuplicates: async (request) => {
      const index = await open();
      return index.findDuplicates ? index.findDuplicates(request) : [];
    },
    copyAgent: async (request) => (await open()).copyAgent(request),
    stats: async (request) => (await open()).stats(request),
    // Not loaded yet: no memory was read or written in this process; the count waits for that.
    count: async () => {
      const index = opening ? await opening : null;
      return index?.count ? index.count() : 0;
    },
    embedder: async () => ((await unloadedAndEmpty()) ? null : (await open()).embedder()),
    beginReembed: async (request) => {
      if (!(await unloadedAndEmpty())) await (await open()).beginReembed(request);
    },
    reembedProgress: async () => ((await unloadedAndEmpty()) ? null : (await open()).reembedProgress()),
    reembedPending: async (request) => ((await unloadedAndEmpty()) ? [] : (await open()).reembedPending(request)),
    writeReembedded: async (request) => (await open()).writeReembedded(request),
    finishReembed: async (request) => (await open()).finishReembed(request),
    // Not loaded yet: nothing to probe (loading it only to answer a probe would defeat the point).
    ping: async () => {
      const index = opening ? await opening : null;
      if (index) await (index.ping ? index.ping() : index.embedder());
    },
  };
}
