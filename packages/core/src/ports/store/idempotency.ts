/**
 * Store area `idempotency`: what an `Idempotency-Key` bound.
 * Part of the {@link Store} port (see `index.ts` for the general contract: absent is `null`,
 * records are copies, backend failures reject).
 */

/** What an `Idempotency-Key` bound: one intended upload. */
export type IdempotencyRecord = {
  organizationId: string;
  key: string;
  /** Hash of what makes the request materially the same (path, bytes, chunking, flags). */
  fingerprint: string;
  /** `completed` once the response was recorded; `in_flight` before. */
  state: 'in_flight' | 'completed';
  /** HTTP status of the recorded response. */
  status: number | null;
  /** The recorded response body, exactly as sent (JSON text). */
  response: string | null;
  createdAt: string;
};

export type IdempotencyStore = {
  /**
   * Claims `key` for a new request: when the organization holds no record for it created at or
   * after `notBefore` (older ones are expired and replaced), inserts `record` (`in_flight`) and
   * resolves null. An `in_flight` record created before `inFlightNotBefore` (when given) was left
   * by a request that can no longer be running (its process stopped) and MUST be replaced the same
   * way; a `completed` record is never replaced before `notBefore`. Otherwise resolves the live
   * record untouched. Of N concurrent claims of one key exactly one MUST resolve null.
   */
  claim(request: {
    record: Omit<IdempotencyRecord, 'state' | 'status' | 'response'>;
    notBefore: string;
    inFlightNotBefore?: string | undefined;
  }): Promise<IdempotencyRecord | null>;
  /** Records the response of an in-flight key. */
  complete(request: { organizationId: string; key: string; status: number; response: string }): Promise<void>;
  /** Forgets a key (its request failed, so a retry runs afresh); a no-op when absent. */
  release(request: { organizationId: string; key: string }): Promise<void>;
  /**
   * Erasure: forgets every record of the organization whose recorded response mentions one of
   * `mentioning` (ids of erased threads, observations, sources), so no replay holds erased text.
   * Resolves how many were removed.
   */
  forget(request: { organizationId: string; mentioning: readonly string[] }): Promise<number>;
};
