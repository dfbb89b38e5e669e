import type { Store } from '../../../ports/store/index.js';

/** What a store conformance run is given. */
export type StoreConformanceOptions = {
  /** Shown in test names. */
  name: string;
  /**
   * Makes a fresh, empty, initialized store for one test. `reopen` (when the backend persists)
   * opens a second, independent instance on the same backend, to check writes through it.
   */
  create: () => Promise<{ store: Store; cleanup?: () => Promise<void>; reopen?: () => Promise<Store> }>;
  /** Test names (`"<area>: <behaviour>"`) to leave out, with a reason in the caller's code. */
  skip?: string[];
};

export type StoreFixture = { store: Store; reopen?: () => Promise<Store> };
