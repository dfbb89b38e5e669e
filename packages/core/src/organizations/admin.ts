import { z } from 'zod';
import { ServiceError } from '../errors/index.js';
import { mintKey } from '../keys/keys.js';
import { resolveLimits } from '../limits/index.js';
import { rateLimitOverridesSchema } from '../limits/rate-limits.js';
import type { LimitOverrides } from '../ports/limit-overrides.js';
import type { KeyRecord, OrganizationRecord } from '../ports/store/index.js';
import type { ServiceContext } from '../service/context.js';
import { parseBody } from '../validation/parse.js';

/** Keys are issued with a deadline of one year (spec "Authentication" 7). */
export const KEY_LIFETIME_MS = 365 * 24 * 60 * 60 * 1000;
/** Keys are marked as expiring during their last month. */
export const KEY_EXPIRING_SOON_MS = 30 * 24 * 60 * 60 * 1000;

const positiveInt = z.number().int().min(1);
export const limitOverridesSchema = z
  .object({
    maxUploadBytes: positiveInt,
    maxImageBytes: positiveInt,
    maxImagesPerTurn: positiveInt,
    maxImageBytesPerTurn: positiveInt,
    maxAgents: positiveInt,
    maxLiveKeys: positiveInt,
    rateLimits: rateLimitOverridesSchema,
  })
  .partial()
  .strict();

const createOrganizationSchema = z.object({ name: z.string().trim().min(1).max(200), limits: limitOverridesSchema.optional() }).strict();

export type OrganizationSummary = { organizationId: string; name: string; limits: LimitOverrides; createdAt: string };
export type CreatedKey = { key: string; keyId: string; organizationId: string; expiresAt: string };
export type KeySummary = {
  keyId: string;
  organizationId: string;
  createdAt: string;
  expiresAt: string;
  revokedAt: string | null;
  status: 'live' | 'revoked' | 'expired';
  /** True during the last month before expiry (spec "Authentication" 7). */
  expiringSoon: boolean;
};

function summarizeOrganization(record: OrganizationRecord): OrganizationSummary {
  return { organizationId: record.id, name: record.name, limits: record.limits, createdAt: record.createdAt };
}

/**
 * The administrator's operations. The spec has no endpoint for them ("An administrator mints and
 * revokes keys in the application settings"); the CLI and embedding hosts call these.
 */
export function createAdmin(context: ServiceContext) {
  async function requireOrganization(organizationId: string): Promise<OrganizationRecord> {
    const organization = await context.store.organizations.get({ id: organizationId });
    if (!organization) throw new ServiceError('not_found', `Organization ${organizationId} does not exist.`);
    return organization;
  }

  function summarizeKey(record: KeyRecord): KeySummary {
    const now = context.clock.now();
    const expires = Date.parse(record.expiresAt);
    const status = record.revokedAt !== null ? 'revoked' : expires <= now ? 'expired' : 'live';
    return {
      keyId: record.keyId,
      organizationId: record.organizationId,
      createdAt: record.createdAt,
      expiresAt: record.expiresAt,
      revokedAt: record.revokedAt,
      status,
      expiringSoon: status === 'live' && expires - now <= KEY_EXPIRING_SOON_MS,
    };
  }

  return {
    async createOrganization(input: { name: string; limits?: LimitOverrides }): Promise<OrganizationSummary> {
      const { name, limits } = parseBody(createOrganizationSchema, input, 'organization');
      const record: OrganizationRecord = { id: context.ids('org_'), name, limits: limits ?? {}, createdAt: context.nowIso() };
      await context.store.organizations.insert({ organization: record });
      return summarizeOrganization(record);
    },

    async getOrganization(input: { organizationId: string }): Promise<OrganizationSummary | null> {
      const record = await context.store.organizations.get({ id: input.organizationId });
      return record ? summarizeOrganization(record) : null;
    },

    async listOrganizations(): Promise<OrganizationSummary[]> {
      return (await context.store.organizations.list()).map(summarizeOrganization);
    },

    /** Replaces the organization's limit overrides (absent fields fall back to the defaults). */
    async setLimits(input: { organizationId: string; limits: LimitOverrides }): Promise<OrganizationSummary> {
      const limits = parseBody(limitOverridesSchema, input.limits, 'limits');
      const record = await context.store.organizations.updateLimits({ id: input.organizationId, limits });
      if (!record) throw new ServiceError('not_found', `Organization ${input.organizationId} does not exist.`);
      return summarizeOrganization(record);
    },

    /** Mints a key; the returned `key` is shown once. 409 `conflict` past the live-key ceiling. */
    async createKey(input: { organizationId: string }): Promise<CreatedKey> {
      const organization = await requireOrganization(input.organizationId);
      const limits = resolveLimits(organization.limits, context.defaultLimits);
      const minted = mintKey();
      const now = context.clock.now();
      const record: KeyRecord = {
        keyId: minted.keyId,
        organizationId: organization.id,
        secretHash: minted.secretHash,
        createdAt: new Date(now).toISOString(),
        expiresAt: new Date(now + KEY_LIFETIME_MS).toISOString(),
        revokedAt: null,
      };
      const inserted = await context.store.keys.insert({ key: record, maxLive: limits.maxLiveKeys, now: record.createdAt });
      if (!inserted) {
        throw new ServiceError('conflict', `The organization already holds ${limits.maxLiveKeys} live keys; revoke one first.`);
      }
      return { key: minted.key, keyId: record.keyId, organizationId: organization.id, expiresAt: record.expiresAt };
    },

    /** Revokes a key; effective on the very next request. */
    async revokeKey(input: { keyId: string }): Promise<KeySummary> {
      const record = await context.store.keys.revoke({ keyId: input.keyId, at: context.nowIso() });
      if (!record) throw new ServiceError('not_found', `Key ${input.keyId} does not exist.`);
      return summarizeKey(record);
    },

    async listKeys(input: { organizationId: string }): Promise<KeySummary[]> {
      await requireOrganization(input.organizationId);
      return (await context.store.keys.list({ organizationId: input.organizationId })).map(summarizeKey);
    },
  };
}

export type Admin = ReturnType<typeof createAdmin>;
