import { ServiceError } from '../errors/index.js';
import { endUserId as deriveEndUserId } from '../ids/index.js';
import { parseKey, secretMatches } from '../keys/keys.js';
import { resolveLimits } from '../limits/index.js';
import { resolveRateLimits } from '../limits/rate-limits.js';
import type { ServiceContext } from './context.js';
import type { Caller } from '../auth/caller.js';

export type AuthenticateRequest = {
  /** The `Authorization` header as sent. */
  authorization: string | undefined;
  /** The `X-SP-End-User` header as sent (undefined when absent). */
  endUser: string | undefined;
  /** The `Sec-Fetch-Site` header as sent (undefined when absent). */
  secFetchSite: string | undefined;
  requestId: string;
};

/** Longest `X-SP-End-User` value, measured as sent (spec "X-SP-End-User"). */
export const MAX_END_USER_LENGTH = 255;

/**
 * Resolves the caller, or throws 401 `unauthorized` alike for a key that is missing, malformed,
 * unknown, revoked or expired (spec "Authentication" 8). Key and organization come in one store
 * read; a caching store (the embedded default's `cachingStore`) answers it from memory and drops
 * the entry on every write, and expiry is checked against the clock here, so a revocation, an
 * expiry or a limits change takes effect on the very next request.
 */
export async function authenticate(context: ServiceContext, request: AuthenticateRequest): Promise<Caller> {
  if (request.authorization !== undefined && request.secFetchSite !== undefined) {
    throw new ServiceError('invalid_request', 'API keys belong on a server: a request carrying a key and a Sec-Fetch-Site header is refused.', { status: 400 });
  }
  const token = /^Bearer\s+(\S+)\s*$/i.exec(request.authorization ?? '')?.[1];
  const parsed = token ? parseKey(token) : null;
  // Key and organization in one read (one round trip on a shared database, none when cached).
  const found = parsed ? await context.store.keys.getWithOrganization({ keyId: parsed.keyId }) : null;
  const key = found?.key ?? null;
  const now = context.clock.now();
  if (
    !parsed ||
    !key ||
    key.revokedAt !== null ||
    Date.parse(key.expiresAt) <= now ||
    !secretMatches(parsed.secret, key.secretHash)
  ) {
    throw new ServiceError('unauthorized', 'The API key is missing, malformed, unknown, revoked or expired.');
  }
  const organization = found!.organization;
  return callerOf(context, organization, key.keyId, request.endUser, request.requestId);
}

/** Options of `service.as`: the person of yours the calls act for, and a request id for logs. */
export type ActAsOptions = {
  /** Same as the `X-SP-End-User` header: narrows which threads the calls reach. */
  endUser?: string;
  /** @default `inproc_` + a counter */
  requestId?: string;
};

/** The key id recorded for calls made in process through `service.as` (no key was presented). */
export const IN_PROCESS_KEY_ID = 'in_process';

let inProcessRequests = 0;

/**
 * A caller acting for an organization in process, without minting a key: what an embedding app
 * uses instead of `authenticate`. Resolves the organization's limits now, like a request would;
 * throws 404 `not_found` for an unknown organization and 400 for a bad `endUser`.
 */
export async function actAs(context: ServiceContext, organizationId: string, options: ActAsOptions = {}): Promise<Caller> {
  const organization = await context.store.organizations.get({ id: organizationId });
  if (!organization) throw new ServiceError('not_found', `No organization ${organizationId}.`);
  return callerOf(context, organization, IN_PROCESS_KEY_ID, options.endUser, options.requestId ?? `inproc_${++inProcessRequests}`);
}

function callerOf(
  context: ServiceContext,
  organization: NonNullable<Awaited<ReturnType<ServiceContext['store']['organizations']['get']>>>,
  keyId: string,
  endUser: string | undefined,
  requestId: string,
): Caller {
  const request = { endUser, requestId };
  let endUserId: string | null = null;
  if (request.endUser !== undefined) {
    if (request.endUser.length > MAX_END_USER_LENGTH) {
      throw new ServiceError('invalid_request', `X-SP-End-User is longer than ${MAX_END_USER_LENGTH} characters.`, { status: 400 });
    }
    const value = request.endUser.trim();
    if (value === '') throw new ServiceError('invalid_request', 'X-SP-End-User is empty or whitespace; leave the header out to act as the organization.', { status: 400 });
    endUserId = deriveEndUserId(organization.id, value);
  }
  return {
    organizationId: organization.id,
    organizationName: organization.name,
    limits: resolveLimits(organization.limits, context.defaultLimits),
    keyId,
    endUserId,
    subjectId: endUserId ?? organization.id,
    rateLimits: resolveRateLimits(organization.limits.rateLimits),
    requestId: request.requestId,
  };
}
