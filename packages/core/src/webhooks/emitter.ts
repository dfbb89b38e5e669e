import type { StoreAreas, WebhookEventType } from '../ports/store/index.js';

/** What core calls to record an event for the organization's webhooks (null when webhooks are off). */
export type WebhookEmitter = {
  /** Records the event for every subscribed endpoint, inside the caller's transaction when given `store`. */
  record(store: StoreAreas, event: { organizationId: string; type: WebhookEventType; orderingKey: string; data: Record<string, unknown> }): Promise<void>;
  /** Wakes the delivery worker (after the recording transaction committed). */
  kick(): void;
};
