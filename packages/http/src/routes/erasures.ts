import { CONTRACT } from '@memory-agents/core/contract';
import { route } from '../route.js';

const { erasures } = CONTRACT;

/** Erasure (an extension, issue 30): remove everything derived from a source, thread, observation or end user. */
export const erasureRoutes = [
  route(erasures.erase, async ({ service, caller, params, body }) => ({ body: await service.erasures.erase({ caller, agentId: params.agent_id, body }) })),
  route(erasures.get, async ({ service, caller, params }) => ({
    body: await service.erasures.get({ caller, agentId: params.agent_id, erasureId: params.erasure_id }),
  })),
];
