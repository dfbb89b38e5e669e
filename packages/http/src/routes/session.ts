import { CONTRACT } from '@memory-agents/core/contract';
import { route } from '../route.js';

export const sessionRoutes = [route(CONTRACT.session.get, async ({ service, caller }) => ({ body: await service.session({ caller }) }))];
