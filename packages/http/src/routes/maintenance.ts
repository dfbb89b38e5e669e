import { schemas } from '@memory-agents/core';
import { route } from '../route.js';

const MAINTENANCE = '/v1/agents/{agent_id}/maintenance';

/**
 * Maintenance runs of an agent (an extension, issue 43): a dry run's diff, applied, undone. The
 * POSTs honour `Idempotency-Key` as the learning routes do (a replay returns the first answer).
 */
export const maintenanceRoutes = [
  route({
    method: 'POST',
    path: MAINTENANCE,
    operationId: 'planMaintenance',
    tag: 'Memories',
    summary: 'A dry run of one maintenance kind (merge_duplicates, supersede_history, sweep_expired): the diff, nothing changed',
    status: 201,
    body: schemas.maintenancePlanBody,
    response: schemas.maintenanceRun,
    codes: ['agent_not_found', 'forbidden', 'conflict'],
    handler: async ({ service, caller, params, body, headers }) => ({
      body: await service.maintenance.plan({ caller, agentId: params.agent_id, body: body as schemas.MaintenancePlanInput, idempotencyKey: headers['idempotency-key'] }),
    }),
  }),
  route({
    method: 'GET',
    path: MAINTENANCE,
    operationId: 'listMaintenance',
    tag: 'Memories',
    summary: "The agent's maintenance runs, newest first, without their diffs",
    status: 200,
    query: schemas.maintenanceListQuery,
    response: schemas.maintenanceRunList,
    codes: ['agent_not_found', 'forbidden'],
    handler: async ({ service, caller, params, query }) => ({ body: await service.maintenance.list({ caller, agentId: params.agent_id, query }) }),
  }),
  route({
    method: 'GET',
    path: `${MAINTENANCE}/{run_id}`,
    operationId: 'getMaintenance',
    tag: 'Memories',
    summary: 'A maintenance run with its diff, guard, progress and receipt',
    status: 200,
    response: schemas.maintenanceRun,
    codes: ['agent_not_found', 'forbidden', 'not_found'],
    handler: async ({ service, caller, params }) => ({ body: await service.maintenance.get({ caller, agentId: params.agent_id, runId: params.run_id }) }),
  }),
  route({
    method: 'POST',
    path: `${MAINTENANCE}/{run_id}/apply`,
    operationId: 'applyMaintenance',
    tag: 'Memories',
    summary: "Applies exactly the dry run's diff (409 when a memory changed since, the guard refuses, or it is not a dry run)",
    status: 200,
    response: schemas.maintenanceRun,
    codes: ['agent_not_found', 'forbidden', 'not_found', 'conflict'],
    handler: async ({ service, caller, params, headers }) => ({
      body: await service.maintenance.apply({ caller, agentId: params.agent_id, runId: params.run_id, idempotencyKey: headers['idempotency-key'] }),
    }),
  }),
  route({
    method: 'POST',
    path: `${MAINTENANCE}/{run_id}/undo`,
    operationId: 'undoMaintenance',
    tag: 'Memories',
    summary: 'Reverses an applied run within its undo window (the restore window)',
    status: 200,
    response: schemas.maintenanceRun,
    codes: ['agent_not_found', 'forbidden', 'not_found', 'conflict'],
    handler: async ({ service, caller, params, headers }) => ({
      body: await service.maintenance.undo({ caller, agentId: params.agent_id, runId: params.run_id, idempotencyKey: headers['idempotency-key'] }),
    }),
  }),
];
