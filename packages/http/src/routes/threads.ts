import { CONTRACT } from '@memory-agents/core/contract';
import { route } from '../route.js';

const { threads } = CONTRACT;

export const threadRoutes = [
  route(threads.create, async ({ service, caller, params, body }) => ({ body: await service.threads.create({ caller, agentId: params.agent_id, body }) })),
  route(threads.get, async ({ service, caller, params }) => ({ body: await service.threads.get({ caller, agentId: params.agent_id, threadId: params.thread_id }) })),
  route(threads.delete, async ({ service, caller, params }) => ({
    body: await service.threads.delete({ caller, agentId: params.agent_id, threadId: params.thread_id }),
  })),
];
