import { copy, type State } from './state.js';
import type { JobRepoint, RepointStore } from '../../ports/store/index.js';

/** Erasures' re-points in process memory. */
export function inMemoryRepoints(get: () => State): RepointStore {
  return {
    async record({ jobId, repoint }) {
      const state = get();
      if (!state.jobs.has(jobId)) return;
      const recorded = state.repoints.get(jobId) ?? new Map<string, JobRepoint>();
      recorded.set(repoint.memoryId, copy(repoint));
      state.repoints.set(jobId, recorded);
    },
    async list({ jobId }) {
      const recorded = get().repoints.get(jobId) ?? new Map<string, JobRepoint>();
      return [...recorded.values()].sort((a, b) => (a.memoryId < b.memoryId ? -1 : a.memoryId > b.memoryId ? 1 : 0)).map(copy);
    },
    async clear({ jobId, memoryId }) {
      get().repoints.get(jobId)?.delete(memoryId);
    },
  };
}
