import { ServiceError } from '../errors/index.js';
import type { Clock } from '../ports/clock.js';
import type { RateLimitedOperation } from '../ports/limit-overrides.js';
import type { RateLimitStore, RateWindowState } from '../ports/store/index.js';
import type { RateLimitTable } from './rate-limits.js';

/**
 * Whose windows a call spends: the part of a `Caller` (auth/caller.ts) the limiter reads, stated
 * here so that limits depend on nothing above them.
 */
export type RateLimitSubject = {
  readonly organizationId: string;
  /** The end user's `eu_` id, or the organization id. */
  readonly subjectId: string;
  readonly rateLimits: RateLimitTable;
};

/** What the `X-RateLimit-*` headers of one response report (times in ms). */
export type RateLimitStatus = { limit: number; remaining: number; resetAt: number; retryAfterSeconds?: number };

export type RateLimitDecision = { allowed: true; status: RateLimitStatus } | { allowed: false; status: RateLimitStatus; error: ServiceError };

/** Answers running at once (spec "Limits / Concurrent answers"). */
export const ANSWERS_PER_SUBJECT = 2;
export const ANSWERS_PER_ORGANIZATION = 4;
/** Seconds a refused answer waits. */
export const ANSWER_RETRY_AFTER = 5;
/**
 * How long an answer place lives without being released: a process that dies mid-answer frees
 * its places after this. An answer (or stream) running longer stops counting after it.
 */
export const ANSWER_PLACE_TTL_MS = 10 * 60_000;

/**
 * Rate windows and answer places over a `RateLimitStore`: the store's own area when several
 * processes share it, an in-process one otherwise (see `createMemoryService`).
 */
export function createRateLimiter(limits: RateLimitStore, clock: Clock, holderPrefix: string) {
  let places = 0;

  /** The window shown in headers: the refusing one, else the one with the fewest requests left. */
  function tightest(windows: RateWindowState[], refusedKey: string | null): RateWindowState {
    const refused = windows.find((window) => window.key === refusedKey);
    if (refused) return refused;
    return windows.reduce((best, window) => (window.limit - window.count < best.limit - best.count ? window : best));
  }

  return {
    /**
     * Counts the request in the operation's subject and organization windows, or refuses it
     * (429 `rate_limit_exceeded`, `details` naming the window) without counting anything.
     */
    async take(caller: RateLimitSubject, operation: RateLimitedOperation): Promise<RateLimitDecision> {
      const now = clock.now();
      const table = caller.rateLimits[operation];
      const subjectKey = `rl:${operation}:s:${caller.organizationId}:${caller.subjectId}`;
      const organizationKey = `rl:${operation}:o:${caller.organizationId}`;
      const result = await limits.hit({
        windows: [
          { key: subjectKey, limit: table.subject.limit, windowMs: table.subject.windowSeconds * 1000 },
          { key: organizationKey, limit: table.organization.limit, windowMs: table.organization.windowSeconds * 1000 },
        ],
        now,
      });
      const shown = tightest(result.windows, result.refusedKey);
      if (result.admitted) return { allowed: true, status: { limit: shown.limit, remaining: Math.max(0, shown.limit - shown.count), resetAt: shown.resetAt } };
      const retryAfterSeconds = Math.max(1, Math.ceil((shown.resetAt - now) / 1000));
      const control = result.refusedKey === subjectKey ? 'user' : 'organization';
      const error = new ServiceError(
        'rate_limit_exceeded',
        control === 'user'
          ? `Too many requests of this kind for this subject: at most ${shown.limit} per ${table.subject.windowSeconds} s.`
          : `Too many requests of this kind for the organization: at most ${shown.limit} per ${table.organization.windowSeconds} s across every key.`,
        { retryAfter: retryAfterSeconds, details: control },
      );
      return { allowed: false, status: { limit: shown.limit, remaining: 0, resetAt: now + retryAfterSeconds * 1000, retryAfterSeconds }, error };
    },

    /**
     * Takes an answer place (2 per subject, 4 per organization) or throws 429 with
     * `Retry-After: 5`. Resolves the function that gives it back (idempotent); its promise
     * resolves once the place is free again, so a caller that awaits it before answering never
     * sees its next request refused for a place it already gave back.
     */
    async acquireAnswer(caller: RateLimitSubject): Promise<() => Promise<void>> {
      const holder = `${holderPrefix}:${++places}`;
      const subjectKey = `answers:s:${caller.organizationId}:${caller.subjectId}`;
      const organizationKey = `answers:o:${caller.organizationId}`;
      const { acquired, refusedKey } = await limits.acquire({
        gates: [
          { key: subjectKey, limit: ANSWERS_PER_SUBJECT },
          { key: organizationKey, limit: ANSWERS_PER_ORGANIZATION },
        ],
        holder,
        ttlMs: ANSWER_PLACE_TTL_MS,
        now: clock.now(),
      });
      if (!acquired) {
        const perSubject = refusedKey === subjectKey;
        throw new ServiceError(
          'rate_limit_exceeded',
          perSubject
            ? `At most ${ANSWERS_PER_SUBJECT} answers run at once for one subject; retry after the Retry-After delay.`
            : `At most ${ANSWERS_PER_ORGANIZATION} answers run at once for one organization; retry after the Retry-After delay.`,
          { retryAfter: ANSWER_RETRY_AFTER, details: perSubject ? 'user' : 'organization' },
        );
      }
      // A failed release is not retried: the place lapses after ANSWER_PLACE_TTL_MS.
      let released: Promise<void> | null = null;
      return () => (released ??= limits.release({ keys: [subjectKey, organizationKey], holder }).catch(() => undefined));
    },
  };
}

export type RateLimiter = ReturnType<typeof createRateLimiter>;
