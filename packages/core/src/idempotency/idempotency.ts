import { createHash } from 'node:crypto';
import type { Caller } from '../auth/caller.js';
import { ServiceError } from '../errors/index.js';
import type { StoreAreas } from '../ports/store/index.js';
import type { ServiceContext } from '../service/context.js';

/** How long an `Idempotency-Key` is kept (spec "observe-file": 24 hours). */
export const IDEMPOTENCY_RETENTION_MS = 24 * 60 * 60 * 1000;

/**
 * How long a key stays `in_flight` before a shared store treats it as abandoned (its request's
 * process stopped): longer than any request runs, conversion of an upload included.
 */
export const IDEMPOTENCY_IN_FLIGHT_MS = 15 * 60 * 1000;

/** How often a key left in flight by a store failure is released again. */
const RELEASE_RETRY_MS = 1000;

/**
 * Records the response of a keyed request with `store`: called inside the transaction that makes
 * the request's work durable, so the work and its recorded answer commit together (a crash in
 * between leaves neither).
 */
export type BindResponse<T> = (store: StoreAreas, response: T) => Promise<void>;

/** A keyed operation: what its refusals call it (`upload`, `observation`, ...) and its success status. */
export type IdempotentOperation = { what: string; status: number };

/** One keyed call: who sends it, its key (absent: nothing is recorded), what makes it "the same", and its operation. */
export type IdempotentCall = IdempotentOperation & { caller: Caller; idempotencyKey: string | undefined; fingerprint: string };

/** Hash of what makes two requests "the same" for a key: the operation, its target and its input. */
export function requestFingerprint(parts: readonly unknown[]): string {
  return createHash('sha256').update(JSON.stringify(parts)).digest('hex');
}

/**
 * The `Idempotency-Key` rules of the spec (stated for observe-file, applied to every keyed route):
 * one key marks ONE intended request of the organization; the same key with the same request
 * replays the first response verbatim, without doing or billing anything again; a key reused for a
 * different request is 409 `conflict`; a retry while the first is still running is 409; keys are
 * kept 24 hours. A request that fails binds nothing: the key may be sent again.
 */
export function createIdempotency(context: ServiceContext) {
  // A store no other process shares holds no in-flight key of a running request from before this
  // service existed: such a key was left by a process that stopped (kill -9) mid-request.
  const startedAt = context.clock.now();

  // Keys whose release failed because the store itself was away (the request failed with it): left
  // in flight, a resend with the same key would be refused 409 until IDEMPOTENCY_IN_FLIGHT_MS
  // passed. They are released before this process claims the same key again, and retried in the
  // background (a resend may reach another process), until the store answers or the window ends.
  const unreleased = new Map<string, { organizationId: string; key: string; until: number }>();
  let retryTimer: ReturnType<typeof setTimeout> | null = null;
  const releaseLater = (organizationId: string, key: string) => {
    unreleased.set(`${organizationId}\u0000${key}`, { organizationId, key, until: context.clock.now() + IDEMPOTENCY_IN_FLIGHT_MS });
    scheduleRetry();
  };
  const scheduleRetry = () => {
    if (retryTimer !== null || unreleased.size === 0) return;
    retryTimer = setTimeout(() => {
      retryTimer = null;
      void retryReleases().finally(scheduleRetry);
    }, RELEASE_RETRY_MS);
    retryTimer.unref?.();
  };
  const retryReleases = async () => {
    for (const [id, pending] of unreleased) {
      if (context.clock.now() > pending.until) {
        unreleased.delete(id);
        continue;
      }
      try {
        await context.store.idempotency.release({ organizationId: pending.organizationId, key: pending.key });
        unreleased.delete(id);
      } catch {
        return; // still away: try again later
      }
    }
  };

  return {
    /**
     * Runs `run` once per key. With a key, `run` receives `bind`; a run that calls it inside its
     * transaction records the response atomically with its work, and a run that does not is
     * recorded after it resolves. Without a key `bind` is null and nothing is recorded (no
     * transaction is needed then).
     */
    async run<T>(call: IdempotentCall, run: (bind: BindResponse<T> | null) => Promise<T>): Promise<T> {
      const { caller, idempotencyKey: key, fingerprint, ...operation } = call;
      if (key === undefined) return run(null);
      if (key.length === 0 || key.length > 255) throw new ServiceError('invalid_request', 'Idempotency-Key must be 1 to 255 characters.', { status: 400 });
      const pending = unreleased.get(`${caller.organizationId}\u0000${key}`);
      if (pending) {
        // Throws (503) while the store is still away, like the claim below would.
        await context.store.idempotency.release({ organizationId: pending.organizationId, key: pending.key });
        unreleased.delete(`${caller.organizationId}\u0000${key}`);
      }
      const now = context.clock.now();
      const staleBefore = now - IDEMPOTENCY_IN_FLIGHT_MS;
      const existing = await context.store.idempotency.claim({
        record: { organizationId: caller.organizationId, key, fingerprint, createdAt: new Date(now).toISOString() },
        notBefore: new Date(now - IDEMPOTENCY_RETENTION_MS).toISOString(),
        inFlightNotBefore: new Date(context.store.capabilities.shared ? staleBefore : Math.max(staleBefore, startedAt)).toISOString(),
      });
      if (existing) {
        if (existing.fingerprint !== fingerprint) {
          throw new ServiceError('conflict', `This Idempotency-Key was used for a different ${operation.what} (other content or path); use a new key for a new ${operation.what}.`);
        }
        if (existing.state !== 'completed' || existing.response === null) {
          throw new ServiceError('conflict', `The ${operation.what} sent with this Idempotency-Key is still being processed; retry once it has answered.`);
        }
        // Replays the original response verbatim: nothing is done or billed again.
        return JSON.parse(existing.response) as T;
      }
      let bound = false;
      const bind: BindResponse<T> = async (store, response) => {
        bound = true;
        await store.idempotency.complete({ organizationId: caller.organizationId, key, status: operation.status, response: JSON.stringify(response) });
      };
      try {
        const response = await run(bind);
        if (!bound) await bind(context.store, response);
        return response;
      } catch (error) {
        // A refused request binds nothing: the same key may be retried once the cause is fixed.
        await context.store.idempotency.release({ organizationId: caller.organizationId, key }).catch(() => releaseLater(caller.organizationId, key));
        throw error;
      }
    },
  };
}

export type Idempotency = ReturnType<typeof createIdempotency>;
