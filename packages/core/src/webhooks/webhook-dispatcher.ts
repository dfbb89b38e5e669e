import { describeError } from '../service/logger.js';
import type { ClaimedWebhookDelivery } from '../ports/store/index.js';
import type { ServiceContext } from '../service/context.js';
import type { WebhookSettings } from './options.js';
import { sendWebhook } from './send.js';
import { signWebhook, WEBHOOK_SIGNATURE_HEADER } from './signature.js';

/** How often one process prunes the delivery log, and how many rows one prune deletes at most. */
const PRUNE_EVERY_MS = 3_600_000;
const PRUNE_BATCH = 1000;

/** Extra time a claim lasts past one attempt's time limit before another process may take it. */
const CLAIM_MARGIN_MS = 30_000;

/**
 * The delivery worker: claims due deliveries from the store (any process may run one: a claim is
 * exclusive and expires, so a delivery whose process died is taken again), sends each, and
 * records the outcome: delivered on 2xx; otherwise retried with exponential backoff and jitter
 * until `maxAttempts`, then given up. The store keeps each thread's events in order per endpoint.
 *
 * Attempts do not wait on each other: up to `concurrency` are in flight, and as soon as one ends
 * the worker claims again for the free slot, so a slow receiver holds its own slots only (at
 * most `concurrencyPerEndpoint` of them, which the claim enforces), never the next organization's
 * event.
 */
export class WebhookDispatcher {
  #timer: ReturnType<typeof setInterval> | null = null;
  /** The claim loop, while one runs (one at a time per process). */
  #claiming: Promise<void> | null = null;
  #again = false;
  #stopped = true;
  #prunedAt: number | null = null;
  /** Attempts in flight. */
  readonly #inFlight = new Set<Promise<void>>();

  constructor(
    private readonly context: Omit<ServiceContext, 'webhooks'>,
    private readonly settings: WebhookSettings,
  ) {}

  start(): void {
    if (!this.#stopped) return;
    this.#stopped = false;
    this.#timer = setInterval(() => this.kick(), this.settings.pollMs);
    this.#timer.unref?.();
    this.kick();
  }

  /** Stops claiming; resolves once the attempts in flight have ended (each within `timeoutMs`). */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    await this.idle();
  }

  /** Looks for due deliveries now (again after the current claim loop, when one runs). */
  kick(): void {
    if (this.#stopped) return;
    if (this.#claiming) {
      this.#again = true;
      return;
    }
    this.#claiming = this.#fill().finally(() => {
      this.#claiming = null;
      if (this.#again) {
        this.#again = false;
        this.kick();
      }
    });
  }

  /** Resolves once no claim loop and no attempt is running (tests and `idle()`). */
  async idle(): Promise<void> {
    while (this.#claiming || this.#inFlight.size > 0) await Promise.all([this.#claiming, ...this.#inFlight]);
  }

  /** Claims for the free slots until none is free or nothing is due; each attempt runs on its own. */
  async #fill(): Promise<void> {
    const { store, clock, instanceId, logger } = this.context;
    const { concurrency, concurrencyPerEndpoint, timeoutMs } = this.settings;
    try {
      await this.#prune();
      while (!this.#stopped && this.#inFlight.size < concurrency) {
        const claimed = await store.webhooks.claim({
          holder: instanceId,
          now: clock.now(),
          leaseMs: timeoutMs + CLAIM_MARGIN_MS,
          limit: concurrency - this.#inFlight.size,
          perEndpoint: concurrencyPerEndpoint,
        });
        if (claimed.length === 0) return;
        for (const item of claimed) {
          const attempt: Promise<void> = this.#attempt(item)
            .catch((error: unknown) => logger.warn('webhook attempt failed before its outcome was recorded; the claim expires and it is retried', { deliveryId: item.delivery.id, error: describeError(error) }))
            .finally(() => {
              this.#inFlight.delete(attempt);
              // A slot is free, and the thread's next event may be due: claim again now.
              this.kick();
            });
          this.#inFlight.add(attempt);
        }
      }
    } catch (error) {
      logger.warn('webhook deliveries paused: the store did not answer; the next poll retries', { error: describeError(error) });
    }
  }

  /** Deletes finished deliveries past the retention, at most once an hour per process (the first pass prunes). */
  async #prune(): Promise<void> {
    const now = this.context.clock.now();
    if (this.#prunedAt !== null && now - this.#prunedAt < PRUNE_EVERY_MS) return;
    this.#prunedAt = now;
    await this.context.store.webhooks.pruneDeliveries({ before: new Date(now - this.settings.retentionMs).toISOString(), limit: PRUNE_BATCH });
  }

  async #attempt({ delivery, endpoint }: ClaimedWebhookDelivery): Promise<void> {
    const { clock, store, instanceId, logger } = this.context;
    const settings = this.settings;
    const started = clock.now();
    const attempts = delivery.attempts + 1;
    const secrets = [endpoint.secret];
    if (endpoint.previousSecret && (endpoint.previousSecretExpiresAt ?? 0) > started) secrets.push(endpoint.previousSecret);
    const result = await sendWebhook({
      url: endpoint.url,
      body: delivery.body,
      timeoutMs: settings.timeoutMs,
      policy: settings.policy,
      headers: {
        'User-Agent': 'memory-agents-webhooks/1',
        [WEBHOOK_SIGNATURE_HEADER]: signWebhook({ secrets, timestamp: Math.floor(started / 1000), body: delivery.body }),
        'X-Memory-Agents-Event-Id': delivery.eventId,
        'X-Memory-Agents-Event-Type': delivery.eventType,
        'X-Memory-Agents-Delivery-Id': delivery.id,
        'X-Memory-Agents-Attempt': String(attempts),
      },
    });
    const now = clock.now();
    const succeeded = result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300;
    const lastError = succeeded ? null : (result.error ?? `The receiver answered ${result.statusCode}.`);
    const givenUp = !succeeded && attempts >= settings.maxAttempts;
    // Exponential backoff with jitter: base * 2^(attempt-1), capped, then 50-100% of it.
    const backoff = Math.min(settings.retryMaxMs, settings.retryBaseMs * 2 ** (attempts - 1));
    const delay = Math.round(backoff * (0.5 + settings.random() / 2));
    try {
      const recorded = await store.webhooks.finishAttempt({
        deliveryId: delivery.id,
        holder: instanceId,
        succeeded,
        patch: {
          status: succeeded ? 'delivered' : givenUp ? 'failed' : 'pending',
          attempts,
          nextAttemptAt: succeeded || givenUp ? now : now + delay,
          lastStatusCode: result.statusCode,
          lastError,
          lastAttemptAt: new Date(now).toISOString(),
        },
        disableAfter: settings.disableAfterFailures,
        disabledReason: `Disabled after ${settings.disableAfterFailures} consecutive failed attempts; the last: ${lastError}`,
        updatedAt: new Date(now).toISOString(),
      });
      if (!recorded) logger.warn('webhook attempt outcome not recorded: the claim expired and another worker took the delivery', { deliveryId: delivery.id });
    } catch (error) {
      // The claim expires and the delivery is attempted again (at least once).
      logger.warn('webhook attempt outcome not recorded: the store did not answer', { deliveryId: delivery.id, error: describeError(error) });
    }
  }
}
