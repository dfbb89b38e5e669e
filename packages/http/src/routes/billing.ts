import { schemas } from '@memory-agents/core';
import { route } from '../route.js';

export const billingRoutes = [
  route({
    method: 'GET',
    path: '/v1/billing',
    operationId: 'getBilling',
    tag: 'Billing',
    summary: 'Credit balance, billing settings and ledger entries (newest first); readable with no credit left',
    status: 200,
    query: schemas.billingQuery,
    response: schemas.billing,
    codes: [],
    handler: async ({ service, caller, query }) => ({ body: await service.billing({ caller, query }) }),
  }),
];
