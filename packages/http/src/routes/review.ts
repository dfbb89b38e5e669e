import { CONTRACT } from '@memory-agents/core/contract';
import { route } from '../route.js';

const { review } = CONTRACT;

/** The review queue of an agent (an extension, issue 43): each contract entry bound to its service call. */
export const reviewRoutes = [
  route(review.list, async ({ service, caller, params, query }) => ({ body: await service.review.list({ caller, agentId: params.agent_id, query }) })),
  route(review.approve, async ({ service, caller, params }) => ({ body: await service.review.approve({ caller, agentId: params.agent_id, memoryId: params.memory_id }) })),
  route(review.decline, async ({ service, caller, params, body }) => ({ body: await service.review.decline({ caller, agentId: params.agent_id, memoryId: params.memory_id, body }) })),
  route(review.edit, async ({ service, caller, params, body }) => ({ body: await service.review.edit({ caller, agentId: params.agent_id, memoryId: params.memory_id, body }) })),
  route(review.reflect, async ({ service, caller, params, body, headers }) => ({ body: await service.review.reflect({ caller, agentId: params.agent_id, body, idempotencyKey: headers['idempotency-key'] }) })),
  route(review.relearn, async ({ service, caller, params, body, headers }) => ({ body: await service.review.relearn({ caller, agentId: params.agent_id, body, idempotencyKey: headers['idempotency-key'] }) })),
  route(review.undo, async ({ service, caller, params }) => ({ body: await service.review.undo({ caller, agentId: params.agent_id, memoryId: params.memory_id }) })),
];
