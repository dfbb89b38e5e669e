import { copy, type State } from './state.js';
import type { KeyStore } from '../../ports/store/index.js';

/** API keys in process memory. */
export function inMemoryKeys(get: () => State): KeyStore {
  return {
    async insert({ key, maxLive, now }) {
      const state = get();
      const live = [...state.keys.values()].filter(
        (k) => k.organizationId === key.organizationId && k.revokedAt === null && k.expiresAt > now,
      ).length;
      if (live >= maxLive) return false;
      state.keys.set(key.keyId, copy(key));
      return true;
    },
    async get({ keyId }) {
      const record = get().keys.get(keyId);
      return record ? copy(record) : null;
    },
    async getWithOrganization({ keyId }) {
      const key = get().keys.get(keyId);
      const organization = key ? get().organizations.get(key.organizationId) : undefined;
      return key && organization ? { key: copy(key), organization: copy(organization) } : null;
    },
    async list({ organizationId }) {
      return [...get().keys.values()]
        .filter((k) => k.organizationId === organizationId)
        .sort((a, b) => (a.createdAt === b.createdAt ? b.keyId.localeCompare(a.keyId) : a.createdAt < b.createdAt ? 1 : -1))
        .map(copy);
    },
    async revoke({ keyId, at }) {
      const record = get().keys.get(keyId);
      if (!record) return null;
      record.revokedAt ??= at;
      return copy(record);
    },
  };
}
