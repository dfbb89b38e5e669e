/**
 * Store area `webhooks`: an organization's webhook endpoints and the deliveries of its events.
 * Part of the {@link Store} port (see `index.ts` for the general contract: absent is `null`,
 * records are copies, backend failures reject).
 */

/** Event types a webhook endpoint can subscribe to. */
export const WEBHOOK_EVENT_TYPES = ['observation.committed', 'observation.failed', 'upload.finished', 'erasure.finished'] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** One receiver URL of an organization (`whk_` id). */
export type WebhookEndpointRecord = {
  id: string;
  organizationId: string;
  url: string;
  description: string | null;
  /** The event types delivered to it. */
  events: WebhookEventType[];
  /** Signs every delivery. */
  secret: string;
  /** The secret before the last rotation: deliveries carry a signature with it too until `previousSecretExpiresAt` (ms). */
  previousSecret: string | null;
  previousSecretExpiresAt: number | null;
  /** False once disabled (by the organization, or after too many consecutive failed attempts). */
  enabled: boolean;
  /** Why it was disabled, or null. */
  disabledReason: string | null;
  /** Failed attempts since the last successful one. */
  consecutiveFailures: number;
  createdAt: string;
  updatedAt: string;
};

export type WebhookEndpointPatch = Partial<
  Pick<WebhookEndpointRecord, 'url' | 'description' | 'events' | 'secret' | 'previousSecret' | 'previousSecretExpiresAt' | 'enabled' | 'disabledReason' | 'consecutiveFailures' | 'updatedAt'>
>;

/** An event to deliver, before it is fanned out to the endpoints that subscribe to it. */
export type WebhookEvent = {
  /** `evt_` id: the same on every attempt and every endpoint (receivers de-duplicate by it). */
  id: string;
  organizationId: string;
  type: WebhookEventType;
  /** Deliveries of one endpoint with the same key go out one after another, in arrival order (a thread's id). */
  orderingKey: string;
  /** The JSON body sent, exactly (it is what the signature covers). */
  body: string;
  createdAt: string;
};

/** `pending` until delivered (2xx) or given up (`failed`, after the last attempt). */
export type WebhookDeliveryStatus = 'pending' | 'delivered' | 'failed';

/** One event for one endpoint (`whd_` id) and where its attempts stand. */
export type WebhookDeliveryRecord = {
  id: string;
  organizationId: string;
  endpointId: string;
  eventId: string;
  eventType: WebhookEventType;
  orderingKey: string;
  body: string;
  status: WebhookDeliveryStatus;
  /** Attempts made so far. */
  attempts: number;
  /** Earliest time (ms) of the next attempt while pending. */
  nextAttemptAt: number;
  /** HTTP status of the last attempt, or null (none yet, or no answer). */
  lastStatusCode: number | null;
  /** Why the last attempt failed, or null. */
  lastError: string | null;
  lastAttemptAt: string | null;
  /** Arrival order across the store; assigned by `enqueue`. */
  seq: number;
  createdAt: string;
};

/** A delivery claimed for one attempt, with the endpoint it goes to. */
export type ClaimedWebhookDelivery = { delivery: WebhookDeliveryRecord; endpoint: WebhookEndpointRecord };

export type WebhookStore = {
  insertEndpoint(request: { endpoint: WebhookEndpointRecord }): Promise<void>;
  /** Null when absent or owned by another organization. */
  getEndpoint(request: { organizationId: string; endpointId: string }): Promise<WebhookEndpointRecord | null>;
  /** The organization's endpoints, oldest first. */
  listEndpoints(request: { organizationId: string }): Promise<WebhookEndpointRecord[]>;
  /** Applies `patch`; null when absent or owned by another organization. */
  updateEndpoint(request: { organizationId: string; endpointId: string; patch: WebhookEndpointPatch }): Promise<WebhookEndpointRecord | null>;
  /** Deletes the endpoint and its deliveries; false when absent or owned by another organization. */
  deleteEndpoint(request: { organizationId: string; endpointId: string }): Promise<boolean>;
  /**
   * Adds one `pending` delivery of `event` (due at `now`) for every endpoint of the event's
   * organization subscribed to its type, enabled or not (a disabled endpoint's deliveries wait
   * until it is re-enabled), in one atomic step; resolves how many. Inserting the same event id
   * twice for an endpoint MUST add nothing the second time.
   */
  enqueue(request: { event: WebhookEvent; now: number }): Promise<number>;
  /**
   * Claims up to `limit` deliveries for one attempt each, oldest (`seq`) first: `pending`, due
   * (`nextAttemptAt <= now`), of an enabled endpoint, not claimed by another holder whose claim is
   * still running, and with no earlier (`seq`) `pending` delivery of the same endpoint and
   * ordering key (per-key order). At most `perEndpoint` deliveries of one endpoint are claimed at
   * a time, counting its claims still running (any holder, as they stand when the claim starts):
   * one slow receiver cannot take every attempt slot. A claim lasts `leaseMs`. Of concurrent
   * claims (any process), each delivery MUST go to one.
   */
  claim(request: { holder: string; now: number; leaseMs: number; limit: number; perEndpoint: number }): Promise<ClaimedWebhookDelivery[]>;
  /**
   * Records one attempt's outcome on a delivery still claimed by `holder` (false otherwise, and
   * nothing changes), frees the claim, and counts it on the endpoint in the same step: a success
   * resets `consecutiveFailures`; a failure adds one and, on reaching `disableAfter`, disables
   * the endpoint with `disabledReason`.
   */
  finishAttempt(request: {
    deliveryId: string;
    holder: string;
    succeeded: boolean;
    patch: Pick<WebhookDeliveryRecord, 'status' | 'attempts' | 'nextAttemptAt' | 'lastStatusCode' | 'lastError' | 'lastAttemptAt'>;
    disableAfter: number;
    disabledReason: string;
    updatedAt: string;
  }): Promise<boolean>;
  /**
   * Deletes up to `limit` deliveries created before `before` (ISO), oldest first: finished ones
   * (`delivered` or `failed`), and pending ones of an endpoint that is disabled (events kept for
   * it longer than the retention); resolves how many. Pending deliveries of an enabled endpoint
   * MUST stay.
   */
  pruneDeliveries(request: { before: string; limit: number }): Promise<number>;
  /** The endpoint's deliveries, newest first, `limit` of them before `beforeSeq` when given. */
  listDeliveries(request: { organizationId: string; endpointId: string; limit: number; beforeSeq?: number }): Promise<WebhookDeliveryRecord[]>;
};
