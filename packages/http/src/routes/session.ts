import { schemas } from '@memory-agents/core';
import { route } from '../route.js';

export const sessionRoutes = [
  route({
    method: 'GET',
    path: '/v1/session',
    operationId: 'getSession',
    tag: 'Session',
    summary: 'Which organization the key resolves to, and its upload limits',
    status: 200,
    response: schemas.session,
    headers: ['X-SP-End-User'],
    codes: [],
    handler: async ({ service, caller }) => ({ body: await service.session({ caller }) }),
  }),
];
