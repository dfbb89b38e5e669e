/**
 * The options `createClient` and its methods take (what each request may add: retries, a signal,
 * the person it acts for, an idempotency key, waiting). The client itself: create-client.ts.
 */

/** Options of `createClient`. */
export type ClientOptions = {
  /** Where the server listens, e.g. `http://127.0.0.1:8787` (paths start with `/v1`). */
  baseUrl: string;
  /** An API key, `sp_<key_id>_<secret>`; keys belong on a server, never in a browser. */
  apiKey: string;
  /**
   * Acts for one person of your customer on every call (the `X-SP-End-User` header); a call's
   * own `endUser` overrides it, `null` acts as the organization.
   * @default undefined (the organization)
   */
  endUser?: string;
  /** The fetch to use (a test double, a proxy-aware fetch). @default globalThis.fetch */
  fetch?: typeof globalThis.fetch;
  /**
   * Opt-in retries of 429 and 503 answers. A number is the most retries; `Retry-After` is
   * honoured, and without one the wait doubles from 1 s. A wait longer than `maxDelayMs` is not
   * made: the error is thrown instead.
   * @default 0 (no retry)
   */
  retries?: number | RetryOptions;
  /** Headers sent on every call (tracing ids). */
  headers?: Record<string, string>;
};

export type RetryOptions = {
  /** Most retries of one call. */
  max: number;
  /** Longest single wait in ms; a `Retry-After` above it ends the retries. @default 60000 */
  maxDelayMs?: number;
};

/** Options every call takes. */
export type RequestOptions = {
  /** Aborts the request (and any retry wait). */
  signal?: AbortSignal;
  /** `X-SP-End-User` for this call; `null` acts as the organization even when the client has one. */
  endUser?: string | null;
  /** Overrides the client's `retries` for this call. */
  retries?: number | RetryOptions;
  /** Extra headers for this call. */
  headers?: Record<string, string>;
};

/** Options of calls that accept an `Idempotency-Key` (observe, observe-file, observe-and-respond, observe-and-enrich). */
export type IdempotentRequestOptions = RequestOptions & {
  /**
   * Marks one intended request: a retry with the same key replays the first answer without
   * learning or billing twice. Use a new key for a new request; keys are kept 24 hours.
   */
  idempotencyKey?: string;
};

/** Options of `waitForObservation` and `agents.waitUntilReady`. */
export type WaitOptions = {
  /** Gives up with an error after this long. @default 300000 (5 minutes) */
  timeoutMs?: number;
  /** Stops waiting (rejects with the signal's reason). */
  signal?: AbortSignal;
  /** First poll delay; it grows by half each poll up to 5 s. @default 100 */
  intervalMs?: number;
  /** `X-SP-End-User` of the polls. */
  endUser?: string | null;
};

/** A stored file a call answers with: a document's original (`sources.get`) or an export (`exports.download`). */
export type SourceFile = { blob: Blob; mediaType: string; filename: string | null };
