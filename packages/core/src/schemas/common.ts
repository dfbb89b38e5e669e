import { z } from 'zod';

/** ISO 8601 date-time with an offset, as the spec's `date-time`. */
export const dateTime = z.iso.datetime({ offset: true });

/** Exact decimal amount crossing the API (spec Billing): `^-?\d+(\.\d+)?$`. */
export const decimalString = z.string().regex(/^-?\d+(\.\d+)?$/);

/**
 * True when `value` can be stored as text: no U+0000 (PostgreSQL text and jsonb cannot hold it) and
 * no unpaired UTF-16 surrogate (it has no UTF-8 encoding). Every caller text is checked with this
 * at the schema, so such input is a 422 naming the field, never a storage failure.
 */
export function isStorableText(value: string): boolean {
  return !UNSTORABLE.test(value);
}

/** U+0000, a high surrogate not followed by a low one, or a low one not preceded by a high one. */
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

const STORABLE_TEXT_MESSAGE = 'must not contain U+0000 (NUL) or an unpaired UTF-16 surrogate';

/**
 * A caller-supplied string that every store can keep (see {@link isStorableText}). Every free-text
 * field of a request schema is built from this, never from a bare `z.string()`.
 */
export const text = () => z.string().refine(isStorableText, { message: STORABLE_TEXT_MESSAGE, abort: true });

/** Deepest nesting of objects and arrays inside a metadata value. */
export const MAX_METADATA_DEPTH = 16;

/**
 * Why a metadata value cannot be stored, or null: every key and string at any depth must be
 * storable text, and nesting stops at {@link MAX_METADATA_DEPTH}.
 */
function metadataProblem(value: unknown, depth: number): string | null {
  if (typeof value === 'string') return isStorableText(value) ? null : `a string value ${STORABLE_TEXT_MESSAGE}`;
  if (value === null || typeof value !== 'object') return null;
  if (depth >= MAX_METADATA_DEPTH) return `nested deeper than ${MAX_METADATA_DEPTH} levels`;
  const entries = Array.isArray(value) ? value.map((item) => ['', item] as const) : Object.entries(value);
  for (const [key, item] of entries) {
    if (!isStorableText(key)) return `a key ${STORABLE_TEXT_MESSAGE}`;
    const problem = metadataProblem(item, depth + 1);
    if (problem) return problem;
  }
  return null;
}

/**
 * An opaque caller object of at most 50 keys (agent_config.metadata, thread metadata); keys and
 * values are checked recursively for storable text and bounded nesting.
 */
export const metadataObject = z
  .record(z.string(), z.unknown())
  .refine((value) => Object.keys(value).length <= 50, { message: 'at most 50 keys', abort: true })
  .superRefine((value, context) => {
    for (const [key, item] of Object.entries(value)) {
      const problem = isStorableText(key) ? metadataProblem(item, 1) : `a key ${STORABLE_TEXT_MESSAGE}`;
      if (problem) {
        // The path names the top-level key only when it is printable itself.
        context.addIssue({ code: 'custom', message: problem, ...(isStorableText(key) ? { path: [key] } : {}) });
        return;
      }
    }
  });

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
