/**
 * Time, injectable so tests control it.
 *
 * Every timestamp the service writes (records, key expiry, lease expiry, rate windows) MUST come
 * from the configured clock, never from `Date.now()` directly.
 */
export type Clock = {
  /** Milliseconds since the Unix epoch. */
  now(): number;
};

/** The real wall clock. */
export const systemClock: Clock = { now: () => Date.now() };
