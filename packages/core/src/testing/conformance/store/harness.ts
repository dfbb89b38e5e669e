import { afterEach, it } from 'vitest';
import type { StoreConformanceOptions, StoreFixture } from './types.js';

/** Registers one conformance case with a fresh store and cleanup, honouring `skip`. */
export function storeCase(options: StoreConformanceOptions) {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    while (cleanups.length > 0) await cleanups.pop()!();
  });
  return (title: string, body: (fixture: StoreFixture) => Promise<void>) => {
    const run = options.skip?.includes(title) ? it.skip : it;
    run(title, async () => {
      const { store, cleanup, reopen } = await options.create();
      cleanups.push(async () => {
        await store.close();
        await cleanup?.();
      });
      const fixture: StoreFixture = reopen
        ? {
            store,
            reopen: async () => {
              const second = await reopen();
              cleanups.push(() => second.close());
              return second;
            },
          }
        : { store };
      await body(fixture);
    });
  };
}

export const iso = (ms: number) => new Date(ms).toISOString();
export const T0 = Date.parse('2026-01-01T00:00:00.000Z');

/** Registers one conformance case (what `storeCase` returns). */
export type StoreCase = ReturnType<typeof storeCase>;
