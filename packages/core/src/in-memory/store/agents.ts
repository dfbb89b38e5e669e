import { copy, deleteIngests, deleteJobs, isListed, isLive, newestFirst, type State } from './state.js';
import type { AgentStore } from '../../ports/store/index.js';

/** Agents in process memory; deleting one removes everything under it. */
export function inMemoryAgents(get: () => State): AgentStore {
  return {
    async insert({ agent, maxLive }) {
      const state = get();
      const live = [...state.agents.values()].filter((a) => a.organizationId === agent.organizationId && isLive(a.status)).length;
      if (live >= maxLive) return false;
      state.agents.set(agent.id, copy(agent));
      return true;
    },
    async get({ organizationId, agentId }) {
      const record = get().agents.get(agentId);
      return record && record.organizationId === organizationId ? copy(record) : null;
    },
    async list({ organizationId }) {
      return [...get().agents.values()]
        .filter((a) => a.organizationId === organizationId && isListed(a.status))
        .sort(newestFirst)
        .map(copy);
    },
    async listByStatus({ statuses }) {
      return [...get().agents.values()].filter((a) => statuses.includes(a.status)).map(copy);
    },
    async update({ organizationId, agentId, patch, updatedAt }) {
      const record = get().agents.get(agentId);
      if (!record || record.organizationId !== organizationId) return null;
      Object.assign(record, copy(patch), { updatedAt });
      return copy(record);
    },
    async delete({ organizationId, agentId }) {
      const state = get();
      const record = state.agents.get(agentId);
      if (!record || record.organizationId !== organizationId) return;
      state.agents.delete(agentId);
      for (const [id, thread] of state.threads) {
        if (thread.agentId !== agentId) continue;
        state.threads.delete(id);
        state.messages.delete(id);
      }
      state.logs = state.logs.filter((entry) => entry.agentId !== agentId);
      deleteJobs(state, (job) => job.agentId === agentId);
      state.notLearned = state.notLearned.filter((record) => record.agentId !== agentId);
      deleteIngests(state, (record) => record.agentId === agentId);
      state.memoryMarks.delete(agentId);
      for (const [id, run] of state.maintenanceRuns) if (run.agentId === agentId) state.maintenanceRuns.delete(id);
    },
  };
}
