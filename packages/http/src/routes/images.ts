import { CONTRACT } from '@memory-agents/core/contract';
import { route } from '../route.js';

export const imageRoutes = [
  route(CONTRACT.images.upload, async ({ service, caller, upload }) => ({ body: await service.images.upload({ caller, file: upload?.file ?? null }) })),
];
