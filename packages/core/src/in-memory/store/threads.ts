import { copy, deleteIngests, deleteJobs, isLive, newestFirst, type State } from './state.js';
import type { ThreadStore } from '../../ports/store/index.js';

/** Threads in process memory; deleting one removes its messages, jobs, learning records and ingests. */
export function inMemoryThreads(get: () => State): ThreadStore {
  return {
    async insert({ thread }) {
      get().threads.set(thread.id, copy(thread));
    },
    async get({ agentId, threadId }) {
      const record = get().threads.get(threadId);
      return record && record.agentId === agentId ? copy(record) : null;
    },
    async list({ agentId, endUserId }) {
      return [...get().threads.values()]
        .filter((t) => t.agentId === agentId && isLive(t.status) && (endUserId === undefined || t.endUserId === endUserId))
        .sort(newestFirst)
        .map(copy);
    },
    async listByStatus({ statuses }) {
      return [...get().threads.values()].filter((t) => statuses.includes(t.status)).map(copy);
    },
    async update({ agentId, threadId, patch, updatedAt }) {
      const record = get().threads.get(threadId);
      if (!record || record.agentId !== agentId) return null;
      Object.assign(record, copy(patch), { updatedAt });
      return copy(record);
    },
    async delete({ agentId, threadId }) {
      const state = get();
      const record = state.threads.get(threadId);
      if (!record || record.agentId !== agentId) return;
      state.threads.delete(threadId);
      state.messages.delete(threadId);
      deleteJobs(state, (job) => job.threadId === threadId);
      state.notLearned = state.notLearned.filter((record) => record.threadId !== threadId);
      deleteIngests(state, (record) => record.threadId === threadId);
    },
  };
}
