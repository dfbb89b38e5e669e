import { afterEach, it } from 'vitest';
import type { MemoryIndex } from '../../../ports/memory-index.js';
import type { MemoryIndexCase, MemoryIndexConformanceOptions, MemoryIndexFixture } from './types.js';

/** Registers one conformance case with a fresh index and cleanup, honouring `skip`. */
export function memoryIndexCase(options: MemoryIndexConformanceOptions): MemoryIndexCase {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    while (cleanups.length > 0) await cleanups.pop()!();
  });
  return (title, body) => {
    const needsReopen = title.startsWith('persistence:');
    if (needsReopen && options.persistent === false) return;
    const run = options.skip?.includes(title) ? it.skip : it;
    run(title, async () => {
      const { port, cleanup, reopen } = await options.create();
      const opened: MemoryIndex[] = [port];
      cleanups.push(async () => {
        for (const index of opened) await index.close();
        await cleanup?.();
      });
      if (needsReopen && !reopen) throw new Error('a persistent index must return `reopen` from create() (or pass persistent: false)');
      await port.init();
      const fixture: MemoryIndexFixture = { index: port };
      if (reopen) {
        fixture.reopen = async () => {
          const second = await reopen();
          opened.unshift(second);
          await second.init();
          return second;
        };
      }
      await body(fixture);
    });
  };
}
