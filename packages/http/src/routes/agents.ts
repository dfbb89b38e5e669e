import { CONTRACT } from '@memory-agents/core/contract';
import { route } from '../route.js';

const { agents } = CONTRACT;

export const agentRoutes = [
  route(agents.create, async ({ service, caller, body }) => ({ body: await service.agents.create({ caller, body }) })),
  route(agents.list, async ({ service, caller }) => ({ body: await service.agents.list({ caller }) })),
  route(agents.get, async ({ service, caller, params }) => ({ body: await service.agents.get({ caller, agentId: params.agent_id }) })),
  route(agents.update, async ({ service, caller, params, body }) => ({ body: await service.agents.update({ caller, agentId: params.agent_id, body }) })),
  route(agents.delete, async ({ service, caller, params }) => ({ body: await service.agents.delete({ caller, agentId: params.agent_id }) })),
  route(agents.logs, async ({ service, caller, params, query }) => ({ body: await service.logs({ caller, agentId: params.agent_id, query }) })),
];
