import type { BillingSummary, MemoryService } from '@memory-agents/core';

/**
 * The admin commands of the CLI, as plain functions over the service. The CLI runs them in
 * process (no server on the data) or sends them over the control socket to the running server,
 * which runs the same functions, so both paths print the same JSON.
 */
export type AdminCommand =
  | 'orgs.create'
  | 'orgs.list'
  | 'orgs.limits'
  | 'keys.create'
  | 'keys.revoke'
  | 'keys.list'
  | 'credits.add'
  | 'billing.show'
  | 'billing.enable'
  | 'billing.disable'
  | 'billing.threshold';

/** An organization's billing as the CLI prints it (snake_case, like the API). */
function billingRow(billing: BillingSummary) {
  return {
    organization_id: billing.organizationId,
    enabled: billing.enabled,
    balance: billing.balance,
    low_credit_threshold: billing.lowCreditThreshold,
    low_credit: billing.lowCredit,
  };
}

export async function runAdminCommand(service: MemoryService, command: AdminCommand, args: Record<string, unknown>): Promise<unknown> {
  switch (command) {
    case 'orgs.create': {
      const org = await service.admin.createOrganization({
        name: String(args.name ?? ''),
        ...(args.credits === undefined ? {} : { credits: String(args.credits) }),
      });
      return { organization_id: org.organizationId, name: org.name, balance: org.balance };
    }
    case 'orgs.list':
      return (await service.admin.listOrganizations()).map((org) => ({ organization_id: org.organizationId, name: org.name, created_at: org.createdAt }));
    case 'orgs.limits': {
      // Replaces the organization's overrides whole (absent fields use the defaults), e.g.
      // {"rateLimits":{"chat":{"subject":{"limit":50,"windowSeconds":60}}}}.
      const org = await service.admin.setLimits({ organizationId: String(args.org ?? ''), limits: (args.limits ?? {}) as never });
      return { organization_id: org.organizationId, limits: org.limits };
    }
    case 'keys.create': {
      const key = await service.admin.createKey({ organizationId: String(args.org ?? '') });
      return { key: key.key, key_id: key.keyId, organization_id: key.organizationId, expires_at: key.expiresAt };
    }
    case 'keys.revoke': {
      const key = await service.admin.revokeKey({ keyId: String(args.keyId ?? '') });
      return { key_id: key.keyId, organization_id: key.organizationId, status: key.status, revoked_at: key.revokedAt };
    }
    case 'keys.list':
      return (await service.admin.listKeys({ organizationId: String(args.org ?? '') })).map((key) => ({
        key_id: key.keyId,
        organization_id: key.organizationId,
        status: key.status,
        created_at: key.createdAt,
        expires_at: key.expiresAt,
        revoked_at: key.revokedAt,
        expiring_soon: key.expiringSoon,
      }));
    case 'credits.add': {
      const added = await service.admin.addCredits({ organizationId: String(args.org ?? ''), amount: String(args.amount ?? '') });
      return { ...billingRow(added), entry_id: added.entryId };
    }
    case 'billing.show':
      return billingRow(await service.admin.getBilling({ organizationId: String(args.org ?? '') }));
    case 'billing.enable':
    case 'billing.disable':
      return billingRow(await service.admin.configureBilling({ organizationId: String(args.org ?? ''), enabled: command === 'billing.enable' }));
    case 'billing.threshold':
      return billingRow(await service.admin.configureBilling({ organizationId: String(args.org ?? ''), lowCreditThreshold: String(args.amount ?? '') }));
  }
}

export const ADMIN_COMMANDS: readonly AdminCommand[] = [
  'orgs.create',
  'orgs.list',
  'orgs.limits',
  'keys.create',
  'keys.revoke',
  'keys.list',
  'credits.add',
  'billing.show',
  'billing.enable',
  'billing.disable',
  'billing.threshold',
];
