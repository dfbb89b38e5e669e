import { z } from 'zod';
import { WEBHOOK_EVENT_TYPES } from '../ports/store/webhooks.js';
import { dateTime, text } from './common.js';

/** `whk_` id of a webhook endpoint. */
export const webhookId = z.string().regex(/^whk_[0-9A-HJKMNP-TV-Z]{26}$/);

export const webhookEventType = z.enum(WEBHOOK_EVENT_TYPES).meta({ id: 'WebhookEventType' });

const url = text().min(1).max(2048);
const events = z.array(webhookEventType).min(1).max(WEBHOOK_EVENT_TYPES.length);

/** `POST /v1/webhooks`: `events` defaults to every type. */
export const createWebhookBody = z
  .object({ url, events: events.optional(), description: text().max(500).nullable().optional() })
  .strict()
  .meta({ id: 'CreateWebhookRequest' });

/** `PATCH /v1/webhooks/{webhook_id}`: `enabled: true` re-enables an endpoint disabled after failures. */
export const patchWebhookBody = z
  .object({ url: url.optional(), events: events.optional(), description: text().max(500).nullable().optional(), enabled: z.boolean().optional() })
  .strict()
  .meta({ id: 'PatchWebhookRequest' });

/** An endpoint as every webhook route answers it (the secret only on create and rotate). */
export const webhook = z
  .object({
    webhook_id: webhookId,
    url: z.string(),
    description: z.string().nullable(),
    events: z.array(webhookEventType),
    enabled: z.boolean(),
    disabled_reason: z.string().nullable(),
    consecutive_failures: z.number().int().min(0),
    previous_secret_expires_at: dateTime.nullable(),
    created_at: dateTime,
    updated_at: dateTime,
  })
  .strict()
  .meta({ id: 'Webhook' });

/** `POST /v1/webhooks` and `POST .../rotate-secret`: the endpoint with its signing secret. */
export const webhookWithSecret = webhook.extend({ secret: z.string() }).strict().meta({ id: 'WebhookWithSecret' });

export const webhookList = z.object({ webhooks: z.array(webhook) }).strict().meta({ id: 'WebhookList' });

export const webhookDeleted = z.object({ webhook_id: webhookId, deleted: z.literal(true) }).strict().meta({ id: 'WebhookDeleted' });

export const webhookDelivery = z
  .object({
    delivery_id: z.string(),
    event_id: z.string(),
    event_type: webhookEventType,
    status: z.enum(['pending', 'delivered', 'failed']),
    attempts: z.number().int().min(0),
    next_attempt_at: dateTime.nullable(),
    last_status_code: z.number().int().nullable(),
    last_error: z.string().nullable(),
    last_attempt_at: dateTime.nullable(),
    created_at: dateTime,
  })
  .strict()
  .meta({ id: 'WebhookDelivery' });

export const webhookDeliveriesQuery = z
  .object({
    limit: z.coerce.number().int().min(1).max(100).default(50),
    cursor: z.string().regex(/^[1-9][0-9]{0,15}$/, 'not a value returned as next_cursor').optional(),
  })
  .strict();

export const webhookDeliveryList = z
  .object({ deliveries: z.array(webhookDelivery), next_cursor: z.string().nullable() })
  .strict()
  .meta({ id: 'WebhookDeliveryList' });

export type CreateWebhookInput = z.input<typeof createWebhookBody>;
export type UpdateWebhookInput = z.input<typeof patchWebhookBody>;
export type WebhookOutput = z.output<typeof webhook>;
export type WebhookWithSecretOutput = z.output<typeof webhookWithSecret>;
export type WebhookListOutput = z.output<typeof webhookList>;
export type WebhookDeletedOutput = z.output<typeof webhookDeleted>;
export type WebhookDeliveryListOutput = z.output<typeof webhookDeliveryList>;
