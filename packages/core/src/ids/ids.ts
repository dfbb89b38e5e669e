import { createHash } from 'node:crypto';
import { monotonicFactory } from 'ulid';

/** Prefixes of the ULID-based ids (spec "Identifiers"). */
export type UlidPrefix = 'agent_' | 'thread_' | 'obs_' | 'mem_' | 'org_' | 'era_' | 'whk_' | 'evt_' | 'exp_' | 'mnt_';

const ULID_PATTERN = '[0-9A-HJKMNP-TV-Z]{26}';

/** The spec's id patterns. */
export const ID_PATTERNS = {
  agent: new RegExp(`^agent_${ULID_PATTERN}$`),
  thread: new RegExp(`^thread_${ULID_PATTERN}$`),
  observation: new RegExp(`^obs_${ULID_PATTERN}$`),
  /** An erasure job (an extension: `POST .../memories/erase`). */
  erasure: new RegExp(`^era_${ULID_PATTERN}$`),
  maintenanceRun: new RegExp(`^mnt_${ULID_PATTERN}$`),
  source: /^src_[0-9a-f]{32}$/,
  image: /^img_[0-9a-f]{32}$/,
} as const;

export type IdGenerator = (prefix: UlidPrefix) => string;

/**
 * A generator of prefixed ULIDs, monotonic within one millisecond so ids made in order sort in
 * order. `now` lets tests drive the time part from an injected clock.
 */
export function createIdGenerator(now: () => number = Date.now): IdGenerator {
  const next = monotonicFactory();
  return (prefix) => `${prefix}${next(now())}`;
}

/** `src_`/`img_` id: 32 hex characters of the SHA-256 of the organization and the bytes. */
export function contentId(prefix: 'src_' | 'img_', organizationId: string, bytes: Uint8Array): string {
  const hash = createHash('sha256').update(organizationId).update('\0').update(bytes).digest('hex');
  return `${prefix}${hash.slice(0, 32)}`;
}

/**
 * The `eu_` id of one person of an organization: a hash of the organization id and the trimmed
 * `X-SP-End-User` value, so the value itself is never stored and two organizations sending the
 * same string get different people (spec "X-SP-End-User").
 */
export function endUserId(organizationId: string, value: string): string {
  const hash = createHash('sha256').update(organizationId).update('\0').update(value).digest('hex');
  return `eu_${hash.slice(0, 32)}`;
}
