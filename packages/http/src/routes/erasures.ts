import { schemas } from '@memory-agents/core';
import { route } from '../route.js';

/** Erasure (an extension, issue 30): remove everything derived from a source, thread, observation or end user. */
export const erasureRoutes = [
  route({
    method: 'POST',
    path: '/v1/agents/{agent_id}/memories/erase',
    operationId: 'eraseMemories',
    tag: 'Memories',
    summary: 'Erase everything derived from one source, thread, observation or end user, as a job (202)',
    status: 202,
    body: schemas.eraseBody,
    response: schemas.erasure,
    headers: ['X-SP-End-User'],
    codes: ['agent_not_found', 'thread_not_found', 'not_found'],
    handler: async ({ service, caller, params, body }) => ({
      body: await service.erasures.erase({ caller, agentId: params.agent_id, body: body as schemas.EraseInput }),
    }),
  }),
  route({
    method: 'GET',
    path: '/v1/agents/{agent_id}/erasures/{erasure_id}',
    operationId: 'getErasure',
    tag: 'Memories',
    summary: 'An erasure job: its status and what it removed',
    status: 200,
    response: schemas.erasure,
    headers: ['X-SP-End-User'],
    codes: ['agent_not_found', 'not_found'],
    handler: async ({ service, caller, params }) => ({
      body: await service.erasures.get({ caller, agentId: params.agent_id, erasureId: params.erasure_id }),
    }),
  }),
];
