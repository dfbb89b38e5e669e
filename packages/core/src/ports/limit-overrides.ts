/**
 * Per-organization overrides of the spec's limits ("Limits"), as the `Store` keeps them on an
 * organization record. Plain data: the defaults and how overrides resolve live in `limits/`.
 */

/** The operations the spec's "Request rates" table limits. */
export const RATE_LIMITED_OPERATIONS = ['thread_create', 'observe', 'observe_respond', 'chat', 'observe_file', 'image_upload'] as const;
export type RateLimitedOperation = (typeof RATE_LIMITED_OPERATIONS)[number];

/** At most `limit` requests in any `windowSeconds`. */
export type WindowLimit = { limit: number; windowSeconds: number };

/** Per-organization overrides of single windows; the rest keep the defaults. */
export type RateLimitOverrides = Partial<Record<RateLimitedOperation, Partial<{ subject: WindowLimit; organization: WindowLimit }>>>;

/** Per-organization overrides of the spec's default limits; absent fields use the defaults. */
export type LimitOverrides = Partial<{
  maxUploadBytes: number;
  maxImageBytes: number;
  maxImagesPerTurn: number;
  maxImageBytesPerTurn: number;
  maxAgents: number;
  maxLiveKeys: number;
  /** Request-rate windows that differ from the spec's table. */
  rateLimits: RateLimitOverrides;
}>;
