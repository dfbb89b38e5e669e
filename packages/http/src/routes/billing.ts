import { CONTRACT } from '@memory-agents/core/contract';
import { route } from '../route.js';

export const billingRoutes = [route(CONTRACT.billing.get, async ({ service, caller, query }) => ({ body: await service.billing({ caller, query }) }))];
