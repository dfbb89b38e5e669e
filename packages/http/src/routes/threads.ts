import { schemas } from '@memory-agents/core';
import { route } from '../route.js';

export const threadRoutes = [
  route({
    method: 'POST',
    path: '/v1/agents/{agent_id}/threads',
    operationId: 'createThread',
    tag: 'Threads',
    rateLimit: 'thread_create',
    summary: 'Create a thread, recorded against the end user when X-SP-End-User is sent',
    status: 201,
    body: schemas.createThreadBody,
    response: schemas.thread,
    headers: ['X-SP-End-User'],
    codes: ['agent_not_found', 'agent_not_ready'],
    handler: async ({ service, caller, params, body }) => ({
      body: await service.threads.create({ caller, agentId: params.agent_id, body: body as schemas.CreateThreadInput }),
    }),
  }),
  route({
    method: 'GET',
    path: '/v1/agents/{agent_id}/threads/{thread_id}',
    operationId: 'getThread',
    tag: 'Threads',
    summary: 'One thread with up to 200 recent messages',
    status: 200,
    response: schemas.thread,
    headers: ['X-SP-End-User'],
    codes: ['agent_not_found', 'thread_not_found'],
    handler: async ({ service, caller, params }) => ({
      body: await service.threads.get({ caller, agentId: params.agent_id, threadId: params.thread_id }),
    }),
  }),
  route({
    method: 'DELETE',
    path: '/v1/agents/{agent_id}/threads/{thread_id}',
    operationId: 'deleteThread',
    tag: 'Threads',
    summary: 'Delete a thread, its messages and the memories learned in it (202)',
    status: 202,
    response: schemas.threadDeleteAccepted,
    headers: ['X-SP-End-User'],
    codes: ['agent_not_found', 'thread_not_found'],
    handler: async ({ service, caller, params }) => ({
      body: await service.threads.delete({ caller, agentId: params.agent_id, threadId: params.thread_id }),
    }),
  }),
];
