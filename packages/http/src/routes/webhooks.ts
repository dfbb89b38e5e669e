import { CONTRACT } from '@memory-agents/core/contract';
import { route } from '../route.js';

const { webhooks } = CONTRACT;

/**
 * Webhooks (an opt-in extension, issue 34; docs/api.md "Webhooks"): 503 `service_not_configured`
 * unless the operator switched them on; 403 with `X-SP-End-User`; another organization's id 404.
 */
export const webhookRoutes = [
  route(webhooks.create, async ({ service, caller, body }) => ({ body: await service.webhooks.create({ caller, body }) })),
  route(webhooks.list, async ({ service, caller }) => ({ body: await service.webhooks.list({ caller }) })),
  route(webhooks.get, async ({ service, caller, params }) => ({ body: await service.webhooks.get({ caller, webhookId: params.webhook_id }) })),
  route(webhooks.update, async ({ service, caller, params, body }) => ({ body: await service.webhooks.update({ caller, webhookId: params.webhook_id, body }) })),
  route(webhooks.delete, async ({ service, caller, params }) => ({ body: await service.webhooks.delete({ caller, webhookId: params.webhook_id }) })),
  route(webhooks.rotateSecret, async ({ service, caller, params }) => ({ body: await service.webhooks.rotateSecret({ caller, webhookId: params.webhook_id }) })),
  route(webhooks.deliveries, async ({ service, caller, params, query }) => ({
    body: await service.webhooks.deliveries({ caller, webhookId: params.webhook_id, query }),
  })),
];
