import { z } from 'zod';

/** ISO 8601 date-time with an offset, as the spec's `date-time`. */
export const dateTime = z.iso.datetime({ offset: true });

/** Exact decimal amount crossing the API (spec Billing): `^-?\d+(\.\d+)?$`. */
export const decimalString = z.string().regex(/^-?\d+(\.\d+)?$/);

/** An opaque caller object of at most 50 keys (agent_config.metadata, thread metadata). */
export const metadataObject = z
  .record(z.string(), z.unknown())
  .refine((value) => Object.keys(value).length <= 50, { message: 'at most 50 keys' });

export const agentId = z.string().regex(/^agent_[0-9A-HJKMNP-TV-Z]{26}$/);
export const threadId = z.string().regex(/^thread_[0-9A-HJKMNP-TV-Z]{26}$/);
export const observationId = z.string().regex(/^obs_[0-9A-HJKMNP-TV-Z]{26}$/);
export const sourceId = z.string().regex(/^src_[0-9a-f]{32}$/);
export const imageId = z.string().regex(/^img_[0-9a-f]{32}$/);

/** The spec's error body. */
export const errorBody = z
  .object({
    error: z.string(),
    code: z.string(),
    request_id: z.string(),
    details: z.enum(['user', 'organization', 'capacity', 'ingestion-organization', 'ingestion-capacity']).optional(),
  })
  .strict()
  .meta({ id: 'Error' });

/** `limit` on list calls: 1 to 100, default 50 (spec Limits / Text fields: 400 when out of range). */
export const listLimit = z.coerce.number().int().min(1).max(100).default(50);
