import type { MemoryAdmin } from '../memory-service.js';
import type { ServiceContext } from '../service/context.js';
import { createAdmin } from './admin.js';
import { createBillingAdmin } from './billing-admin.js';

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
  };
}
