import { z } from 'zod';
import { RATE_LIMITED_OPERATIONS, type RateLimitedOperation, type RateLimitOverrides, type WindowLimit } from '../ports/limit-overrides.js';

/** Each window is counted twice: per subject and per organization (spec "Limits"). */
export type RateLimitTable = Record<RateLimitedOperation, { subject: WindowLimit; organization: WindowLimit }>;

const w = (limit: number, windowSeconds: number): WindowLimit => ({ limit, windowSeconds });

/** The spec's "Request rates" table. */
export const DEFAULT_RATE_LIMITS: RateLimitTable = {
  thread_create: { subject: w(5, 10), organization: w(30, 10) },
  observe: { subject: w(60, 60), organization: w(300, 60) },
  observe_respond: { subject: w(20, 60), organization: w(120, 60) },
  chat: { subject: w(20, 60), organization: w(120, 60) },
  observe_file: { subject: w(1, 10), organization: w(6, 10) },
  image_upload: { subject: w(20, 60), organization: w(120, 60) },
};

const windowLimitSchema = z.object({ limit: z.number().int().min(1), windowSeconds: z.number().int().min(1).max(86_400) }).strict();
/** Validates `RateLimitOverrides` (admin input). */
export const rateLimitOverridesSchema = z
  .object(Object.fromEntries(RATE_LIMITED_OPERATIONS.map((operation) => [operation, z.object({ subject: windowLimitSchema, organization: windowLimitSchema }).partial().strict()])))
  .partial()
  .strict();

/** The table in force: `overrides` over `defaults`, window by window. */
export function resolveRateLimits(overrides: RateLimitOverrides | undefined, defaults: RateLimitTable = DEFAULT_RATE_LIMITS): RateLimitTable {
  // Built with plain copies, not structuredClone: every authenticated request resolves it.
  const table = {} as RateLimitTable;
  for (const operation of RATE_LIMITED_OPERATIONS) {
    const override = overrides?.[operation];
    table[operation] = {
      subject: { ...(override?.subject ?? defaults[operation].subject) },
      organization: { ...(override?.organization ?? defaults[operation].organization) },
    };
  }
  return table;
}
