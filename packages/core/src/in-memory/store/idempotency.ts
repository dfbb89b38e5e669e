import { copy, type State } from './state.js';
import type { IdempotencyStore } from '../../ports/store/index.js';

const idempotencyKey = (organizationId: string, key: string) => `${organizationId}\0${key}`;

/** Idempotency-Key records in process memory. */
export function inMemoryIdempotency(get: () => State): IdempotencyStore {
  return {
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
    async forget({ organizationId, mentioning }) {
      const records = get().idempotency;
      let removed = 0;
      for (const [id, record] of records) {
        if (record.organizationId !== organizationId || record.response === null) continue;
        if (mentioning.some((text) => text !== '' && record.response!.includes(text))) {
          records.delete(id);
          removed++;
        }
      }
      return removed;
    },
  };
}
