import { CONTRACT } from '@memory-agents/core/contract';
import { route } from '../route.js';

const { memories } = CONTRACT;

/** The memories API (issue 30): an extension under `/v1/agents/{agent_id}/memories`; docs/api.md "Memories". */
export const memoryRoutes = [
  route(memories.list, async ({ service, caller, params, query }) => ({ body: await service.memories.list({ caller, agentId: params.agent_id, query }) })),
  route(memories.search, async ({ service, caller, params, body }) => ({ body: await service.memories.search({ caller, agentId: params.agent_id, body }) })),
  route(memories.get, async ({ service, caller, params, query }) => ({
    body: await service.memories.get({ caller, agentId: params.agent_id, memoryId: params.memory_id, query }),
  })),
  route(memories.history, async ({ service, caller, params, query }) => ({
    body: await service.memories.history({ caller, agentId: params.agent_id, memoryId: params.memory_id, query }),
  })),
  route(memories.update, async ({ service, caller, params, body }) => ({
    body: await service.memories.update({ caller, agentId: params.agent_id, memoryId: params.memory_id, body }),
  })),
  route(memories.forget, async ({ service, caller, params, body }) => ({
    body: await service.memories.forget({ caller, agentId: params.agent_id, memoryId: params.memory_id, body }),
  })),
  route(memories.restore, async ({ service, caller, params }) => ({
    body: await service.memories.restore({ caller, agentId: params.agent_id, memoryId: params.memory_id }),
  })),
  route(memories.delete, async ({ service, caller, params }) => {
    await service.memories.delete({ caller, agentId: params.agent_id, memoryId: params.memory_id });
    return { body: null };
  }),
];
