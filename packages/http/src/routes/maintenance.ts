import { CONTRACT } from '@memory-agents/core/contract';
import { route } from '../route.js';

const { maintenance } = CONTRACT;

/** Maintenance runs of an agent (an extension, issue 43): each contract entry bound to its service call. */
export const maintenanceRoutes = [
  route(maintenance.plan, async ({ service, caller, params, body, headers }) => ({
    body: await service.maintenance.plan({ caller, agentId: params.agent_id, body, idempotencyKey: headers['idempotency-key'] }),
  })),
  route(maintenance.list, async ({ service, caller, params, query }) => ({ body: await service.maintenance.list({ caller, agentId: params.agent_id, query }) })),
  route(maintenance.get, async ({ service, caller, params }) => ({ body: await service.maintenance.get({ caller, agentId: params.agent_id, runId: params.run_id }) })),
  route(maintenance.apply, async ({ service, caller, params, headers }) => ({
    body: await service.maintenance.apply({ caller, agentId: params.agent_id, runId: params.run_id, idempotencyKey: headers['idempotency-key'] }),
  })),
  route(maintenance.undo, async ({ service, caller, params, headers }) => ({
    body: await service.maintenance.undo({ caller, agentId: params.agent_id, runId: params.run_id, idempotencyKey: headers['idempotency-key'] }),
  })),
];
