import * as schemas from '../schemas/index.js';
import { operation } from './operation.js';

const WEBHOOK = '/v1/webhooks/{webhook_id}';
const REFUSED = ['forbidden', 'not_found', 'service_not_configured'] as const;

/**
 * Webhooks (an opt-in extension, issue 34; docs/api.md "Webhooks"): 503 `service_not_configured`
 * unless the operator switched them on; 403 with `X-SP-End-User`; another organization's id 404.
 */
export const webhooks = {
  create: operation({
    operationId: 'createWebhook',
    method: 'POST',
    path: '/v1/webhooks',
    tag: 'Webhooks',
    summary: 'Register a receiver URL (201); the signing secret is in this answer and on rotation only',
    status: 201,
    body: schemas.createWebhookBody,
    output: schemas.webhookWithSecret,
    codes: ['forbidden', 'conflict', 'service_not_configured'],
  }),
  list: operation({
    operationId: 'listWebhooks',
    method: 'GET',
    path: '/v1/webhooks',
    tag: 'Webhooks',
    summary: 'The organization\'s webhook endpoints, oldest first',
    status: 200,
    output: schemas.webhookList,
    codes: ['forbidden', 'service_not_configured'],
  }),
  get: operation({
    operationId: 'getWebhook',
    method: 'GET',
    path: WEBHOOK,
    tag: 'Webhooks',
    summary: 'One webhook endpoint (enabled, why disabled, consecutive failures)',
    status: 200,
    output: schemas.webhook,
    codes: REFUSED,
  }),
  update: operation({
    operationId: 'updateWebhook',
    method: 'PATCH',
    path: WEBHOOK,
    tag: 'Webhooks',
    summary: 'Change url, events, description or enabled (true re-enables an endpoint disabled after failures)',
    status: 200,
    body: schemas.patchWebhookBody,
    output: schemas.webhook,
    codes: REFUSED,
  }),
  delete: operation({
    operationId: 'deleteWebhook',
    method: 'DELETE',
    path: WEBHOOK,
    tag: 'Webhooks',
    summary: 'Delete an endpoint and its delivery log',
    status: 200,
    output: schemas.webhookDeleted,
    codes: REFUSED,
  }),
  rotateSecret: operation({
    operationId: 'rotateWebhookSecret',
    method: 'POST',
    path: `${WEBHOOK}/rotate-secret`,
    tag: 'Webhooks',
    summary: 'A new signing secret; the previous one keeps signing beside it for the rotation window',
    status: 200,
    output: schemas.webhookWithSecret,
    codes: REFUSED,
  }),
  deliveries: operation({
    operationId: 'listWebhookDeliveries',
    method: 'GET',
    path: `${WEBHOOK}/deliveries`,
    tag: 'Webhooks',
    summary: 'The delivery log, newest first: status, attempts, last answer or error',
    status: 200,
    query: schemas.webhookDeliveriesQuery,
    output: schemas.webhookDeliveryList,
    codes: REFUSED,
  }),
};
