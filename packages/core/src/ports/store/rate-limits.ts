/**
 * Store area `rateLimits`: rate windows and concurrency gates (spec "Limits") that hold
 * across processes.
 * Part of the {@link Store} port (see `index.ts` for the general contract: absent is `null`,
 * records are copies, backend failures reject).
 */
/** One sliding window: at most `limit` requests under `key` in the last `windowMs`. */
export type RateWindow = { key: string; limit: number; windowMs: number };

/** What a window holds after a hit (or at the refusal). */
export type RateWindowState = {
  key: string;
  limit: number;
  /** Requests counted in the window, the current one included when admitted. */
  count: number;
  /** Time (ms) when the oldest counted request leaves the window; `now` when none is counted. */
  resetAt: number;
};

export type RateHitResult = { admitted: boolean; windows: RateWindowState[]; refusedKey: string | null };

/** One concurrency gate: at most `limit` places held under `key`. */
export type ConcurrencyGate = { key: string; limit: number };

export type RateLimitStore = {
  /**
   * Counts one request in every window, or in none: when any window already counts `limit`
   * requests in `(now - windowMs, now]`, nothing is recorded and the first such key is
   * `refusedKey`. Of N concurrent hits on a window with k places left, exactly k are admitted.
   */
  hit(request: { windows: RateWindow[]; now: number }): Promise<RateHitResult>;
  /**
   * Takes one place under every gate for `holder`, or none (resolves the first full key). Places
   * expire `ttlMs` after `now` so a dead process's places free themselves. Of N concurrent
   * acquires on a gate with k free places, exactly k succeed.
   */
  acquire(request: { gates: ConcurrencyGate[]; holder: string; ttlMs: number; now: number }): Promise<{ acquired: boolean; refusedKey: string | null }>;
  /** Frees the places `holder` holds under `keys`; a no-op for places not held. */
  release(request: { keys: string[]; holder: string }): Promise<void>;
};
