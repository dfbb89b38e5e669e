import * as schemas from '../schemas/index.js';
import { operation } from './operation.js';

const MAINTENANCE = '/v1/agents/{agent_id}/maintenance';

/**
 * Maintenance runs of an agent (an extension, issue 43): a dry run's diff, applied, undone. The
 * POSTs honour `Idempotency-Key` as the learning routes do (a replay returns the first answer).
 */
export const maintenanceOperations = {
  plan: operation({
    operationId: 'planMaintenance',
    method: 'POST',
    path: MAINTENANCE,
    tag: 'Memories',
    summary: 'A dry run of one maintenance kind (merge_duplicates, supersede_history, sweep_expired, reapply_policy): the diff, nothing changed',
    status: 201,
    body: schemas.maintenancePlanBody,
    output: schemas.maintenanceRun,
    idempotent: true,
    codes: ['agent_not_found', 'forbidden', 'conflict', 'payment_required'],
  }),
  list: operation({
    operationId: 'listMaintenance',
    method: 'GET',
    path: MAINTENANCE,
    tag: 'Memories',
    summary: "The agent's maintenance runs, newest first, without their diffs",
    status: 200,
    query: schemas.maintenanceListQuery,
    output: schemas.maintenanceRunList,
    codes: ['agent_not_found', 'forbidden'],
  }),
  get: operation({
    operationId: 'getMaintenance',
    method: 'GET',
    path: `${MAINTENANCE}/{run_id}`,
    tag: 'Memories',
    summary: 'A maintenance run with its diff, guard, progress and receipt',
    status: 200,
    output: schemas.maintenanceRun,
    codes: ['agent_not_found', 'forbidden', 'not_found'],
  }),
  apply: operation({
    operationId: 'applyMaintenance',
    method: 'POST',
    path: `${MAINTENANCE}/{run_id}/apply`,
    tag: 'Memories',
    summary: "Applies exactly the dry run's diff (409 when a memory changed since, the guard refuses, or it is not a dry run; 402 out of credit)",
    status: 200,
    output: schemas.maintenanceRun,
    idempotent: true,
    codes: ['agent_not_found', 'forbidden', 'not_found', 'conflict', 'payment_required'],
  }),
  undo: operation({
    operationId: 'undoMaintenance',
    method: 'POST',
    path: `${MAINTENANCE}/{run_id}/undo`,
    tag: 'Memories',
    summary: 'Reverses an applied run within its undo window (the restore window)',
    status: 200,
    output: schemas.maintenanceRun,
    idempotent: true,
    codes: ['agent_not_found', 'forbidden', 'not_found', 'conflict'],
  }),
};
