import type { RateLimitStore, RateWindowState } from '../ports/store/index.js';

/**
 * The `RateLimitStore` kept in this process's memory: sliding logs of request times per window
 * key, and held places per gate key. Synchronous inside each call, so concurrent calls of one
 * process never interleave. Used by the in-memory store, and by the service whenever its store is
 * not shared by several processes (the embedded default pays no database round trip per request).
 */
export function inProcessRateLimits(): RateLimitStore {
  const SWEEP_EVERY = 1000;
  /** Request times per window key, ascending. */
  const logs = new Map<string, number[]>();
  /** Window length per key, so a sweep can drop the logs of subjects that stopped calling. */
  const windowsMs = new Map<string, number>();
  let hits = 0;

  /** Every `SWEEP_EVERY` hits, forgets expired requests of every key (bounded memory). */
  function sweep(now: number): void {
    for (const [key, windowMs] of windowsMs) {
      prune(key, windowMs, now);
      if (!logs.has(key)) windowsMs.delete(key);
    }
    for (const key of [...places.keys()]) live(key, now);
  }
  /** Place expiry per holder, per gate key. */
  const places = new Map<string, Map<string, number>>();

  function prune(key: string, windowMs: number, now: number): number[] {
    const log = logs.get(key) ?? [];
    let drop = 0;
    while (drop < log.length && log[drop]! <= now - windowMs) drop++;
    const kept = drop === 0 ? log : log.slice(drop);
    if (kept.length === 0) logs.delete(key);
    else logs.set(key, kept);
    return kept;
  }

  function live(key: string, now: number): Map<string, number> {
    const held = places.get(key) ?? new Map<string, number>();
    for (const [holder, expiresAt] of held) if (expiresAt <= now) held.delete(holder);
    if (held.size === 0) places.delete(key);
    return held;
  }

  return {
    async hit({ windows, now }) {
      if (++hits % SWEEP_EVERY === 0) sweep(now);
      for (const window of windows) windowsMs.set(window.key, window.windowMs);
      const current = windows.map((window) => ({ window, log: prune(window.key, window.windowMs, now) }));
      const refused = current.find(({ window, log }) => log.length >= window.limit);
      if (refused) {
        const states: RateWindowState[] = current.map(({ window, log }) => ({
          key: window.key,
          limit: window.limit,
          count: log.length,
          resetAt: log.length > 0 ? log[0]! + window.windowMs : now,
        }));
        return { admitted: false, windows: states, refusedKey: refused.window.key };
      }
      const states: RateWindowState[] = current.map(({ window, log }) => {
        const next = [...log, now];
        logs.set(window.key, next);
        return { key: window.key, limit: window.limit, count: next.length, resetAt: next[0]! + window.windowMs };
      });
      return { admitted: true, windows: states, refusedKey: null };
    },

    async acquire({ gates, holder, ttlMs, now }) {
      for (const gate of gates) {
        const held = live(gate.key, now);
        if (!held.has(holder) && held.size >= gate.limit) return { acquired: false, refusedKey: gate.key };
      }
      for (const gate of gates) {
        const held = places.get(gate.key) ?? new Map<string, number>();
        held.set(holder, now + ttlMs);
        places.set(gate.key, held);
      }
      return { acquired: true, refusedKey: null };
    },

    async release({ keys, holder }) {
      for (const key of keys) {
        const held = places.get(key);
        if (!held) continue;
        held.delete(holder);
        if (held.size === 0) places.delete(key);
      }
    },
  };
}
