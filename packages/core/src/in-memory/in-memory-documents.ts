import type { DocumentIngestRecord, DocumentStore, IdempotencyRecord, IdempotencyStore, ImageRecord, ImageStore } from '../ports/store/index.js';

/** What the in-memory store holds for documents, idempotency keys and images. */
export type DocumentsState = {
  ingests: Map<string, DocumentIngestRecord>;
  idempotency: Map<string, IdempotencyRecord>;
  images: Map<string, ImageRecord>;
};

export function emptyDocumentsState(): DocumentsState {
  return { ingests: new Map(), idempotency: new Map(), images: new Map() };
}

const copy = <T>(value: T): T => structuredClone(value);
const idempotencyKey = (organizationId: string, key: string) => `${organizationId}\0${key}`;
const oldestFirst = (a: DocumentIngestRecord, b: DocumentIngestRecord) =>
  a.createdAt === b.createdAt ? (a.jobId < b.jobId ? -1 : a.jobId > b.jobId ? 1 : 0) : a.createdAt < b.createdAt ? -1 : 1;

/** Forgets the ingests of an agent (or of one thread), as deletion of that agent or thread does. */
export function deleteIngests(state: DocumentsState, matches: (record: DocumentIngestRecord) => boolean): void {
  for (const [jobId, record] of state.ingests) if (matches(record)) state.ingests.delete(jobId);
}

/** The document areas of the in-memory store over `get()` (the store's mutex serializes calls). */
export function inMemoryDocumentAreas(get: () => DocumentsState): { documents: DocumentStore; idempotency: IdempotencyStore; images: ImageStore } {
  return {
    documents: {
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
    },
    idempotency: {
      async claim({ record, notBefore, inFlightNotBefore }) {
        const records = get().idempotency;
        const id = idempotencyKey(record.organizationId, record.key);
        const existing = records.get(id);
        const abandoned = existing?.state === 'in_flight' && inFlightNotBefore !== undefined && existing.createdAt < inFlightNotBefore;
        if (existing && existing.createdAt >= notBefore && !abandoned) return copy(existing);
        records.set(id, { ...copy(record), state: 'in_flight', status: null, response: null });
        return null;
      },
      async complete({ organizationId, key, status, response }) {
        const record = get().idempotency.get(idempotencyKey(organizationId, key));
        if (!record) return;
        Object.assign(record, { state: 'completed', status, response });
      },
      async release({ organizationId, key }) {
        get().idempotency.delete(idempotencyKey(organizationId, key));
      },
    },
    images: {
      async insert({ image }) {
        const images = get().images;
        if (!images.has(image.id)) images.set(image.id, copy(image));
      },
      async get({ organizationId, imageId }) {
        const image = get().images.get(imageId);
        return image && image.organizationId === organizationId ? copy(image) : null;
      },
    },
  };
}
