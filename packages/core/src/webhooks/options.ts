import { compileAddressPolicy } from './url-guard.js';

/**
 * Webhooks, an opt-in extension (issue 34): off unless `createMemoryService` gets this option;
 * off, the `/v1/webhooks` routes answer 503 `service_not_configured` and no event is recorded.
 */
export type WebhookOptions = {
  /** Let receivers resolve to loopback, private, link-local and unique-local addresses. @default false */
  allowPrivate?: boolean;
  /** Host names and IPs or CIDR ranges allowed although private (`'localhost'`, `'10.0.0.0/8'`). @default [] */
  allowedHosts?: readonly string[];
  /** Attempts of one delivery before it is given up (`failed`). @default 8 */
  maxAttempts?: number;
  /** Consecutive failed attempts (any delivery) after which an endpoint is disabled. @default 20 */
  disableAfterFailures?: number;
  /** One attempt's time limit (connect, send, answer). @default 10000 */
  timeoutMs?: number;
  /** First retry delay; each next one doubles, up to `retryMaxMs`, each with jitter (50-100%). @default 5000 */
  retryBaseMs?: number;
  /** @default 3_600_000 (one hour) */
  retryMaxMs?: number;
  /** How long a rotated-out secret still signs deliveries (beside the new one). @default 86_400_000 (a day) */
  secretRotationMs?: number;
  /** How long finished deliveries (delivered or given up) stay in the delivery log. @default 2_592_000_000 (30 days) */
  retentionMs?: number;
  /** How often the worker looks for due deliveries (it is also woken when events are recorded). @default 1000 */
  pollMs?: number;
  /** Deliveries in flight at once per process; a slot freed is claimed again at once. @default 32 */
  concurrency?: number;
  /**
   * Deliveries of one endpoint in flight at once (counted across processes when a claim starts),
   * so a slow receiver holds at most this many of the slots. @default 4
   */
  concurrencyPerEndpoint?: number;
  /** Jitter source, in [0, 1). @default Math.random */
  random?: () => number;
};

/** The options with their defaults, checked (operator input: a bad value throws at construction). */
export function resolveWebhookOptions(options: WebhookOptions) {
  const positive = (name: string, value: number) => {
    if (!Number.isFinite(value) || value <= 0) throw new Error(`webhooks.${name} must be a positive number; it is ${value}.`);
    return value;
  };
  return {
    policy: compileAddressPolicy({ allowPrivate: options.allowPrivate ?? false, allowedHosts: options.allowedHosts ?? [] }),
    maxAttempts: positive('maxAttempts', options.maxAttempts ?? 8),
    disableAfterFailures: positive('disableAfterFailures', options.disableAfterFailures ?? 20),
    timeoutMs: positive('timeoutMs', options.timeoutMs ?? 10_000),
    retryBaseMs: positive('retryBaseMs', options.retryBaseMs ?? 5000),
    retryMaxMs: positive('retryMaxMs', options.retryMaxMs ?? 3_600_000),
    secretRotationMs: positive('secretRotationMs', options.secretRotationMs ?? 86_400_000),
    retentionMs: positive('retentionMs', options.retentionMs ?? 2_592_000_000),
    pollMs: positive('pollMs', options.pollMs ?? 1000),
    concurrency: positive('concurrency', options.concurrency ?? 32),
    concurrencyPerEndpoint: positive('concurrencyPerEndpoint', options.concurrencyPerEndpoint ?? 4),
    random: options.random ?? Math.random,
  };
}

export type WebhookSettings = ReturnType<typeof resolveWebhookOptions>;
