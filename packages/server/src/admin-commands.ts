import type { MemoryService } from '@memory-agents/core';

/**
 * The admin commands of the CLI, as plain functions over the service. The CLI runs them in
 * process (no server on the data) or sends them over the control socket to the running server,
 * which runs the same functions, so both paths print the same JSON.
 */
export type AdminCommand = 'orgs.create' | 'orgs.list' | 'keys.create' | 'keys.revoke' | 'keys.list';

export async function runAdminCommand(service: MemoryService, command: AdminCommand, args: Record<string, unknown>): Promise<unknown> {
  switch (command) {
    case 'orgs.create': {
      const org = await service.admin.createOrganization({ name: String(args.name ?? '') });
      return { organization_id: org.organizationId, name: org.name, balance: null };
    }
    case 'orgs.list':
      return (await service.admin.listOrganizations()).map((org) => ({ organization_id: org.organizationId, name: org.name, created_at: org.createdAt }));
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
  }
}

export const ADMIN_COMMANDS: readonly AdminCommand[] = ['orgs.create', 'orgs.list', 'keys.create', 'keys.revoke', 'keys.list'];
