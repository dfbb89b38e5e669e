import type { MemoryIndex } from '../../../ports/memory-index.js';

/** What a memory index conformance run is given. */
export type MemoryIndexConformanceOptions = {
  /** Shown in test names. */
  name: string;
  /**
   * Makes a fresh, empty index for one test (the suite calls `init()`; it is idempotent).
   * `reopen` (when the backend persists) opens a second, independent instance on the same storage,
   * so the persistence case can check writes through an instance that did not make them.
   * `cleanup` runs after the test, after the suite closed every instance.
   */
  create: () => Promise<{ port: MemoryIndex; cleanup?: () => Promise<void>; reopen?: () => Promise<MemoryIndex> }>;
  /** Test names (`"<area>: <behaviour>"`) to leave out, with a reason in the caller's code. */
  skip?: string[];
  /**
   * False for an index that keeps nothing across instances (in memory): the `persistence:` cases
   * are then not registered at all. When true, `create` must return `reopen`.
   * @default true
   */
  persistent?: boolean;
};

export type MemoryIndexFixture = {
  index: MemoryIndex;
  /** Present when the backend persists: closes nothing, opens and initializes a second instance. */
  reopen?: () => Promise<MemoryIndex>;
};

export type MemoryIndexCase = (title: string, body: (fixture: MemoryIndexFixture) => Promise<void>) => void;
