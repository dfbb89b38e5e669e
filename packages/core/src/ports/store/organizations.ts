import type { LimitOverrides } from '../limit-overrides.js';

/**
 * Store area `organizations`: the tenants.
 * Part of the {@link Store} port (see `index.ts` for the general contract: absent is `null`,
 * records are copies, backend failures reject).
 */

export type OrganizationRecord = {
  id: string;
  name: string;
  limits: LimitOverrides;
  createdAt: string;
};

export type OrganizationStore = {
  insert(request: { organization: OrganizationRecord }): Promise<void>;
  get(request: { id: string }): Promise<OrganizationRecord | null>;
  list(): Promise<OrganizationRecord[]>;
  /** Replaces `limits` whole. Resolves the updated record, or null when absent. */
  updateLimits(request: { id: string; limits: LimitOverrides }): Promise<OrganizationRecord | null>;
};
