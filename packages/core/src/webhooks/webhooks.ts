import { randomBytes } from 'node:crypto';
import type { Caller } from '../auth/caller.js';
import { ServiceError } from '../errors/index.js';
import type { MemoryService } from '../memory-service.js';
import { WEBHOOK_EVENT_TYPES, type WebhookDeliveryRecord, type WebhookEndpointRecord } from '../ports/store/index.js';
import {
  createWebhookBody,
  patchWebhookBody,
  webhookDeliveriesQuery,
  webhookId,
  type WebhookDeliveryListOutput,
  type WebhookOutput,
  type WebhookWithSecretOutput,
} from '../schemas/webhooks.js';
import type { ServiceContext } from '../service/context.js';
import { parseBody, parseQuery } from '../validation/parse.js';
import type { WebhookEmitter } from './events.js';
import { resolveWebhookOptions, type WebhookOptions } from './options.js';
import { checkWebhookUrl } from './url-guard.js';
import { WebhookDispatcher } from './webhook-dispatcher.js';

/** Most endpoints one organization may register. */
export const MAX_WEBHOOKS_PER_ORGANIZATION = 20;

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

function toWebhook(endpoint: WebhookEndpointRecord): WebhookOutput {
  return {
    webhook_id: endpoint.id,
    url: endpoint.url,
    description: endpoint.description,
    events: endpoint.events,
    enabled: endpoint.enabled,
    disabled_reason: endpoint.disabledReason,
    consecutive_failures: endpoint.consecutiveFailures,
    previous_secret_expires_at: iso(endpoint.previousSecretExpiresAt),
    created_at: endpoint.createdAt,
    updated_at: endpoint.updatedAt,
  };
}

function toDelivery(delivery: WebhookDeliveryRecord) {
  return {
    delivery_id: delivery.id,
    event_id: delivery.eventId,
    event_type: delivery.eventType,
    status: delivery.status,
    attempts: delivery.attempts,
    next_attempt_at: delivery.status === 'pending' ? iso(delivery.nextAttemptAt) : null,
    last_status_code: delivery.lastStatusCode,
    last_error: delivery.lastError,
    last_attempt_at: delivery.lastAttemptAt,
    created_at: delivery.createdAt,
  };
}

const newSecret = () => `whsec_${randomBytes(32).toString('base64url')}`;

/**
 * The webhooks area (issue 34): `service.webhooks` and the emitter core records events with.
 * `options` null (the default) leaves webhooks off: every operation is 503
 * `service_not_configured`, nothing is recorded and no worker runs.
 */
export function createWebhooks(context: Omit<ServiceContext, 'webhooks'>, options: WebhookOptions | null) {
  const settings = options ? resolveWebhookOptions(options) : null;
  const dispatcher = settings ? new WebhookDispatcher(context, settings) : null;

  const emitter: WebhookEmitter | null = settings
    ? {
        async record(store, { organizationId, type, orderingKey, data }) {
          const id = context.ids('evt_');
          const createdAt = context.nowIso();
          const body = JSON.stringify({ id, type, created_at: createdAt, organization_id: organizationId, data });
          await store.webhooks.enqueue({ event: { id, organizationId, type, orderingKey, body, createdAt }, now: context.clock.now() });
        },
        kick: () => dispatcher?.kick(),
      }
    : null;

  /** Switched on, and managed with the organization's own key (not on behalf of an end user). */
  function enabled(caller: Caller): NonNullable<typeof settings> {
    if (!settings) throw new ServiceError('service_not_configured', 'Webhooks are not switched on on this server; poll the observation and upload status instead.');
    if (caller.endUserId !== null) throw new ServiceError('forbidden', 'Webhooks are managed with the organization\'s key alone; send the request without X-SP-End-User.');
    return settings;
  }

  async function owned(caller: Caller, id: string): Promise<WebhookEndpointRecord> {
    const endpoint = webhookId.safeParse(id).success ? await context.store.webhooks.getEndpoint({ organizationId: caller.organizationId, endpointId: id }) : null;
    if (!endpoint) throw new ServiceError('not_found', `Webhook ${id} was not found.`);
    return endpoint;
  }

  const webhooks = {
    async create({ caller, body }): Promise<WebhookWithSecretOutput> {
      const { policy } = enabled(caller);
      const input = parseBody(createWebhookBody, body);
      const url = await checkWebhookUrl(input.url, policy);
      const existing = await context.store.webhooks.listEndpoints({ organizationId: caller.organizationId });
      if (existing.length >= MAX_WEBHOOKS_PER_ORGANIZATION) {
        throw new ServiceError('conflict', `An organization may register at most ${MAX_WEBHOOKS_PER_ORGANIZATION} webhooks; delete one first.`);
      }
      const now = context.nowIso();
      const endpoint: WebhookEndpointRecord = {
        id: context.ids('whk_'),
        organizationId: caller.organizationId,
        url,
        description: input.description ?? null,
        events: input.events ? [...new Set(input.events)] : [...WEBHOOK_EVENT_TYPES],
        secret: newSecret(),
        previousSecret: null,
        previousSecretExpiresAt: null,
        enabled: true,
        disabledReason: null,
        consecutiveFailures: 0,
        createdAt: now,
        updatedAt: now,
      };
      await context.store.webhooks.insertEndpoint({ endpoint });
      return { ...toWebhook(endpoint), secret: endpoint.secret };
    },

    async list({ caller }) {
      enabled(caller);
      return { webhooks: (await context.store.webhooks.listEndpoints({ organizationId: caller.organizationId })).map(toWebhook) };
    },

    async get({ caller, webhookId: id }) {
      enabled(caller);
      return toWebhook(await owned(caller, id));
    },

    async update({ caller, webhookId: id, body }) {
      const { policy } = enabled(caller);
      const input = parseBody(patchWebhookBody, body);
      await owned(caller, id);
      const url = input.url === undefined ? undefined : await checkWebhookUrl(input.url, policy);
      const reenabled = input.enabled === true;
      const updated = await context.store.webhooks.updateEndpoint({
        organizationId: caller.organizationId,
        endpointId: id,
        patch: {
          ...(url !== undefined ? { url } : {}),
          ...(input.events !== undefined ? { events: [...new Set(input.events)] } : {}),
          ...(input.description !== undefined ? { description: input.description } : {}),
          ...(input.enabled !== undefined ? { enabled: input.enabled, disabledReason: input.enabled ? null : 'Disabled by the organization.' } : {}),
          // Re-enabled: the failures that disabled it no longer count.
          ...(reenabled ? { consecutiveFailures: 0 } : {}),
          updatedAt: context.nowIso(),
        },
      });
      if (!updated) throw new ServiceError('not_found', `Webhook ${id} was not found.`);
      if (reenabled) dispatcher?.kick();
      return toWebhook(updated);
    },

    async delete({ caller, webhookId: id }) {
      enabled(caller);
      await owned(caller, id);
      if (!(await context.store.webhooks.deleteEndpoint({ organizationId: caller.organizationId, endpointId: id }))) {
        throw new ServiceError('not_found', `Webhook ${id} was not found.`);
      }
      return { webhook_id: id, deleted: true as const };
    },

    async rotateSecret({ caller, webhookId: id }) {
      const { secretRotationMs } = enabled(caller);
      const endpoint = await owned(caller, id);
      const secret = newSecret();
      const updated = await context.store.webhooks.updateEndpoint({
        organizationId: caller.organizationId,
        endpointId: id,
        patch: { secret, previousSecret: endpoint.secret, previousSecretExpiresAt: context.clock.now() + secretRotationMs, updatedAt: context.nowIso() },
      });
      if (!updated) throw new ServiceError('not_found', `Webhook ${id} was not found.`);
      return { ...toWebhook(updated), secret };
    },

    async deliveries({ caller, webhookId: id, query }): Promise<WebhookDeliveryListOutput> {
      enabled(caller);
      const { limit, cursor } = parseQuery(webhookDeliveriesQuery, query ?? {});
      await owned(caller, id);
      const page = await context.store.webhooks.listDeliveries({
        organizationId: caller.organizationId,
        endpointId: id,
        limit: limit + 1,
        ...(cursor !== undefined ? { beforeSeq: Number(cursor) } : {}),
      });
      const shown = page.slice(0, limit);
      return { deliveries: shown.map(toDelivery), next_cursor: page.length > limit ? String(shown[shown.length - 1]!.seq) : null };
    },
  } satisfies MemoryService['webhooks'];

  return {
    webhooks,
    emitter,
    start: () => dispatcher?.start(),
    stop: async () => dispatcher?.stop(),
    idle: async () => dispatcher?.idle(),
  };
}
