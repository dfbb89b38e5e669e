import type { MemoryAdmin } from '../memory-service.js';
import type { ServiceContext } from '../service/context.js';
import { createAdmin } from './admin.js';
import { createBillingAdmin } from './billing-admin.js';
import { exportAgent } from '../export/agent-export.js';
import { importAgent } from '../export/agent-import.js';
import { ServiceError } from '../errors/index.js';

/**
 * `service.admin`: organizations and keys (`admin.ts`) with their credits (`billing-admin.ts`);
 * `createOrganization` with `credits` opens the organization with billing on and that balance.
 */
export function createMemoryAdmin(context: ServiceContext): MemoryAdmin {
  const admin = createAdmin(context);
  const billing = createBillingAdmin({ store: context.store, clock: context.clock });
  return {
    ...admin,
    createOrganization: billing.withCredits(admin),
    getBilling: billing.getBilling,
    addCredits: billing.addCredits,
    configureBilling: billing.configureBilling,
    async *exportAgent({ agentId, organizationId, vectors }) {
      let owner = organizationId;
      if (owner === undefined) {
        for (const organization of await context.store.organizations.list()) {
          if (await context.store.agents.get({ organizationId: organization.id, agentId })) owner = organization.id;
        }
        if (owner === undefined) throw new ServiceError('not_found', `No agent ${agentId} in any organization.`);
      }
      yield* exportAgent(context, { organizationId: owner, agentId, ...(vectors === undefined ? {} : { vectors }) });
    },
    importAgent: (input) => importAgent(context, input),
  };
}
