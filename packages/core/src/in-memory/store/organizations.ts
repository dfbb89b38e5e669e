import { copy, type State } from './state.js';
import type { OrganizationStore } from '../../ports/store/index.js';

/** Organizations in process memory. */
export function inMemoryOrganizations(get: () => State): OrganizationStore {
  return {
    async insert({ organization }) {
      get().organizations.set(organization.id, copy(organization));
    },
    async get({ id }) {
      const record = get().organizations.get(id);
      return record ? copy(record) : null;
    },
    async list() {
      return [...get().organizations.values()].map(copy);
    },
    async updateLimits({ id, limits }) {
      const record = get().organizations.get(id);
      if (!record) return null;
      record.limits = copy(limits);
      return copy(record);
    },
  };
}
