import type { RateLimitStatus } from '@memory-agents/core';

/**
 * `X-RateLimit-Limit` / `-Remaining` of a response whose route has no request window (reads,
 * deletes, errors before a caller is known): a window that never runs out. The request was not
 * counted anywhere; `X-RateLimit-Reset` is then the current second (docs/decisions.md).
 */
export const UNMETERED_LIMIT = 2_147_483_647;

/** The three headers every response carries (spec "Limits"); `Reset` is a Unix timestamp in seconds. */
export function rateLimitHeaders(status: RateLimitStatus): Record<string, string> {
  return {
    'X-RateLimit-Limit': String(status.limit),
    'X-RateLimit-Remaining': String(Math.max(0, status.remaining)),
    'X-RateLimit-Reset': String(Math.ceil(status.resetAt / 1000)),
  };
}

/** The status of a response outside every window, at `now` (ms). */
export function unmeteredStatus(now: number): RateLimitStatus {
  return { limit: UNMETERED_LIMIT, remaining: UNMETERED_LIMIT, resetAt: now };
}

/**
 * Tracks the rate-limit status of one response; `headers()` gives its three headers when the
 * response is written. A 429 sets `X-RateLimit-Reset` to the moment `Retry-After` names (spec
 * "Rate-limit headers on a 429").
 */
export function rateLimitTracker(now: () => number) {
  let status = unmeteredStatus(now());
  return {
    /** A window's status for this request (from the limiter). */
    set(next: RateLimitStatus) {
      status = next;
    },
    /** The response is a 429 asking to wait `retryAfter` seconds. */
    refused(retryAfter: number) {
      status = { ...status, remaining: 0, resetAt: now() + retryAfter * 1000 };
    },
    headers: () => rateLimitHeaders(status),
  };
}
