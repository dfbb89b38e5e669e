import { copy, type State } from './state.js';
import type { UploadRecord, UploadStore } from '../../ports/store/index.js';

const oldestFirst = (a: UploadRecord, b: UploadRecord) =>
  a.createdAt === b.createdAt ? (a.jobId < b.jobId ? -1 : a.jobId > b.jobId ? 1 : 0) : a.createdAt < b.createdAt ? -1 : 1;

/** Ingests of uploaded files in process memory. */
export function inMemoryUploads(get: () => State): UploadStore {
  return {
    async insert({ record }) {
      get().ingests.set(record.jobId, copy(record));
    },
    async get({ agentId, jobId }) {
      const record = get().ingests.get(jobId);
      return record && record.agentId === agentId ? copy(record) : null;
    },
    async update({ jobId, patch }) {
      const record = get().ingests.get(jobId);
      if (!record) return null;
      Object.assign(record, copy(patch));
      return copy(record);
    },
    async listBySource({ agentId, sourceId }) {
      return [...get().ingests.values()]
        .filter((record) => record.agentId === agentId && record.sourceId === sourceId)
        .sort(oldestFirst)
        .map(copy);
    },
    async listByThread({ agentId, threadId }) {
      return [...get().ingests.values()]
        .filter((record) => record.agentId === agentId && record.threadId === threadId)
        .sort(oldestFirst)
        .reverse()
        .map(copy);
    },
    async findStored({ organizationId, sourceId }) {
      const found = [...get().ingests.values()]
        .filter((record) => record.organizationId === organizationId && record.sourceId === sourceId && record.stored)
        .sort(oldestFirst)[0];
      return found ? copy(found) : null;
    },
  };
}
