import { schemas } from '@memory-agents/core';
import { route } from '../route.js';

/** The memories API (issue 30): an extension under `/v1/agents/{agent_id}/memories`; docs/api.md "Memories". */
export const memoryRoutes = [
  route({
    method: 'GET',
    path: '/v1/agents/{agent_id}/memories',
    operationId: 'listMemories',
    tag: 'Memories',
    summary: 'The memories of the agent the caller reaches, newest first, filtered, one page at a time',
    status: 200,
    query: schemas.memoryListQuery,
    queryValidates: true,
    response: schemas.memoryList,
    headers: ['X-SP-End-User'],
    codes: ['agent_not_found', 'thread_not_found'],
    handler: async ({ service, caller, params, query }) => ({ body: await service.memories.list({ caller, agentId: params.agent_id, query }) }),
  }),
  route({
    method: 'POST',
    path: '/v1/agents/{agent_id}/memories/search',
    operationId: 'searchMemories',
    tag: 'Memories',
    summary: "Chat's retrieval for a query, each hit with its rank, fused score and every signal's contribution",
    status: 200,
    body: schemas.memorySearchBody,
    response: schemas.memorySearchResponse,
    headers: ['X-SP-End-User'],
    codes: ['agent_not_found', 'agent_not_ready'],
    handler: async ({ service, caller, params, body }) => ({
      body: await service.memories.search({ caller, agentId: params.agent_id, body: body as schemas.MemorySearchInput }),
    }),
  }),
  route({
    method: 'GET',
    path: '/v1/agents/{agent_id}/memories/{memory_id}',
    operationId: 'getMemory',
    tag: 'Memories',
    summary: 'One memory: its text, dates, where it was learned from, by which job and writer, and what learning it cost',
    status: 200,
    query: schemas.memoryGetQuery,
    queryValidates: true,
    response: schemas.memoryDetail,
    headers: ['X-SP-End-User'],
    codes: ['agent_not_found', 'not_found'],
    handler: async ({ service, caller, params, query }) => ({
      body: await service.memories.get({ caller, agentId: params.agent_id, memoryId: params.memory_id, query }),
    }),
  }),
  route({
    method: 'PATCH',
    path: '/v1/agents/{agent_id}/memories/{memory_id}',
    operationId: 'updateMemory',
    tag: 'Memories',
    summary: 'Set (ISO date-time) or clear (null) when a memory expires (an extension, issue 42)',
    status: 200,
    body: schemas.memoryPatchBody,
    response: schemas.memoryDetail,
    headers: ['X-SP-End-User'],
    codes: ['agent_not_found', 'not_found'],
    handler: async ({ service, caller, params, body }) => ({
      body: await service.memories.setExpiry({ caller, agentId: params.agent_id, memoryId: params.memory_id, body: body as schemas.MemoryPatchInput }),
    }),
  }),
  route({
    method: 'DELETE',
    path: '/v1/agents/{agent_id}/memories/{memory_id}',
    operationId: 'deleteMemory',
    tag: 'Memories',
    summary: 'Delete one memory (204)',
    status: 204,
    response: schemas.memoryDetail,
    headers: ['X-SP-End-User'],
    codes: ['agent_not_found', 'not_found'],
    handler: async ({ service, caller, params }) => {
      await service.memories.delete({ caller, agentId: params.agent_id, memoryId: params.memory_id });
      return { body: null };
    },
  }),
];
