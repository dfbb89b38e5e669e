import { describe, expect, it } from 'vitest';
import { inMemoryMemoryIndex, type MemoryIndex } from '@memory-agents/core';
import { describeMemoryIndexConformance } from '@memory-agents/core/testing';
import { lazyMemoryIndex } from './lazy-memory-index.js';

const capabilities = { approximateVectors: false, persistent: false };

describeMemoryIndexConformance({
  name: 'lazyMemoryIndex over the in-memory index',
  persistent: false,
  create: async () => ({ port: lazyMemoryIndex({ id: 'in-memory', capabilities, load: async () => inMemoryMemoryIndex() }) }),
});

/** An in-memory index whose loads and inits are counted, and whose load can fail once. */
function counted(options: { failFirstLoad?: boolean } = {}) {
  const counts = { loads: 0, inits: 0, closes: 0 };
  const load = async (): Promise<MemoryIndex> => {
    counts.loads += 1;
    if (options.failFirstLoad && counts.loads === 1) throw new Error('binding failed to load');
    const inner = inMemoryMemoryIndex();
    return {
      ...inner,
      init: async () => {
        counts.inits += 1;
        await inner.init();
      },
      close: async () => {
        counts.closes += 1;
        await inner.close();
      },
    };
  };
  return { counts, index: lazyMemoryIndex({ id: 'in-memory', capabilities, load }) };
}

describe('lazyMemoryIndex', () => {
  it('loads nothing at init; the first calls share one load and init', async () => {
    const { counts, index } = counted();
    await index.init();
    expect(index.capabilities).toBe(capabilities);
    expect(counts).toEqual({ loads: 0, inits: 0, closes: 0 });
    const [stats, embedder] = await Promise.all([index.stats({ agentId: 'agt_1' }), index.embedder()]);
    expect(stats).toEqual({ count: 0 });
    expect(embedder).toBeNull();
    expect(counts).toEqual({ loads: 1, inits: 1, closes: 0 });
    await index.close();
    expect(counts.closes).toBe(1);
  });

  it('a failed load fails its call and is tried again on the next one', async () => {
    const { counts, index } = counted({ failFirstLoad: true });
    await expect(index.stats({ agentId: 'agt_1' })).rejects.toThrow('binding failed to load');
    expect(await index.stats({ agentId: 'agt_1' })).toEqual({ count: 0 });
    expect(counts.loads).toBe(2);
    await index.close();
  });

  it('close() before any use loads nothing; calls after close() reject', async () => {
    const { counts, index } = counted();
    await index.close();
    await expect(index.search({ agentId: 'agt_1', text: 'harbor', vector: null, limit: 5 })).rejects.toThrow('closed');
    expect(counts).toEqual({ loads: 0, inits: 0, closes: 0 });
  });

  it('answers as an empty index without loading when the storage is empty (isEmpty), and loads once it is not', async () => {
    let empty = true;
    let loads = 0;
    const index = lazyMemoryIndex({
      id: 'in-memory',
      capabilities,
      isEmpty: async () => empty,
      load: async () => {
        loads += 1;
        return inMemoryMemoryIndex();
      },
    });
    await index.init();
    expect(await index.embedder()).toBeNull();
    expect(await index.reembedProgress()).toBeNull();
    expect(await index.reembedPending({ limit: 10 })).toEqual([]);
    await index.beginReembed({ target: { id: 'other', dimensions: 4 } });
    expect(loads).toBe(0);
    empty = false;
    expect(await index.embedder()).toBeNull();
    expect(loads).toBe(1);
  });
});
