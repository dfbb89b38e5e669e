import { copy, type State } from './state.js';
import type { LeaseStore } from '../../ports/store/index.js';

/** Leases in process memory. */
export function inMemoryLeases(get: () => State): LeaseStore {
  return {
    async acquire({ name, holder, ttlMs, now }) {
      const leases = get().leases;
      const current = leases.get(name);
      if (current && current.holder !== holder && current.expiresAt > now) return false;
      leases.set(name, { name, holder, expiresAt: now + ttlMs });
      return true;
    },
    async renew({ name, holder, ttlMs, now }) {
      const leases = get().leases;
      const current = leases.get(name);
      if (!current || current.holder !== holder) return false;
      current.expiresAt = now + ttlMs;
      return true;
    },
    async release({ name, holder }) {
      const leases = get().leases;
      if (leases.get(name)?.holder === holder) leases.delete(name);
    },
    async get({ name }) {
      const record = get().leases.get(name);
      return record ? copy(record) : null;
    },
  };
}
