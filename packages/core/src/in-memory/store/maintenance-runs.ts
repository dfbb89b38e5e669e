import { copy, newestFirst, type State } from './state.js';
import type { MaintenanceRunStore } from '../../ports/store/index.js';

/** Maintenance runs (issue 43) in process memory. */
export function inMemoryMaintenanceRuns(get: () => State): MaintenanceRunStore {
  return {
    async insert({ run }) {
      get().maintenanceRuns.set(run.id, copy(run));
    },
    async get({ agentId, runId }) {
      const run = get().maintenanceRuns.get(runId);
      return run && run.agentId === agentId ? copy(run) : null;
    },
    async update({ runId, patch, updatedAt, ifStatus }) {
      const run = get().maintenanceRuns.get(runId);
      if (!run || (ifStatus !== undefined && !ifStatus.includes(run.status))) return null;
      Object.assign(run, copy(patch), { updatedAt });
      return copy(run);
    },
    async list({ agentId, limit, before }) {
      const runs = [...get().maintenanceRuns.values()].filter((run) => run.agentId === agentId).sort(newestFirst);
      const start = before ? runs.findIndex((run) => run.id === before) + 1 : 0;
      return (before && start === 0 ? [] : runs.slice(start, start + limit)).map(copy);
    },
    async listByStatus({ statuses }) {
      return [...get().maintenanceRuns.values()]
        .filter((run) => statuses.includes(run.status))
        .sort((a, b) => -newestFirst(a, b))
        .map(copy);
    },
  };
}
