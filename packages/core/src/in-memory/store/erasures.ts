import { copy, type State } from './state.js';
import type { ErasureStore } from '../../ports/store/index.js';

/** Erasure jobs in process memory; `reclaim` has nothing to do (deleted records are gone). */
export function inMemoryErasures(get: () => State): ErasureStore {
  return {
    async insert({ erasure }) {
      get().erasures.set(erasure.id, copy(erasure));
    },
    async get({ agentId, erasureId }) {
      const erasure = get().erasures.get(erasureId);
      return erasure && erasure.agentId === agentId ? copy(erasure) : null;
    },
    async update({ erasureId, patch, updatedAt }) {
      const erasure = get().erasures.get(erasureId);
      if (!erasure) return null;
      Object.assign(erasure, copy(patch), { updatedAt });
      return copy(erasure);
    },
    async listByStatus({ statuses }) {
      return [...get().erasures.values()]
        .filter((erasure) => statuses.includes(erasure.status))
        .sort((a, b) => (a.createdAt === b.createdAt ? (a.id < b.id ? -1 : 1) : a.createdAt < b.createdAt ? -1 : 1))
        .map(copy);
    },
    async reclaim() {},
  };
}
