import type { Limits } from '../limits/index.js';
import type { RateLimitTable } from '../limits/rate-limits.js';

/** The display name of whoever a partner key acts for (spec "Session": `partner key`). */
export const PARTNER_DISPLAY_NAME = 'partner key';

/** Who a request acts for, resolved from the API key and `X-SP-End-User`. */
export type Caller = {
  readonly organizationId: string;
  readonly organizationName: string;
  readonly limits: Limits;
  /** Key id of the presenting key (safe to log). */
  readonly keyId: string;
  /** The derived `eu_` id when `X-SP-End-User` was sent, else null. */
  readonly endUserId: string | null;
  /** Whose per-subject windows the call spends: `endUserId`, or the organization id. */
  readonly subjectId: string;
  /** The organization's request-rate windows (spec "Limits / Request rates" with its overrides). */
  readonly rateLimits: RateLimitTable;
  /** Server-issued id of the request. */
  readonly requestId: string;
};
