import { copy, type State } from './state.js';
import type { NotLearnedStore } from '../../ports/store/index.js';

/** Learning records of turns not learned, per thread. */
export function inMemoryNotLearned(get: () => State): NotLearnedStore {
  return {
    async insert({ record }) {
      const state = get();
      const id = ++state.sequence;
      state.notLearned.push({ ...copy(record), id, reported: false });
      return id;
    },
    async list({ threadId, limit, beforeId }) {
      return get()
        .notLearned.filter((record) => record.threadId === threadId && (beforeId === undefined || record.id < beforeId))
        .sort((a, b) => b.id - a.id)
        .slice(0, limit)
        .map(copy);
    },
    async takeUnreported({ threadId }) {
      const taken = get().notLearned.filter((record) => record.threadId === threadId && !record.reported);
      for (const record of taken) record.reported = true;
      return taken.map(copy);
    },
  };
}
