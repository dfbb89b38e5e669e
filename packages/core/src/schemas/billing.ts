import { z } from 'zod';
import { dateTime, decimalString } from './common.js';

/** Largest `cursor` the spec admits on `GET /v1/billing`. */
const MAX_CURSOR = 9223372036854776000n;

/** `GET /v1/billing` query: `limit` 1-100 (default 50), `cursor` an integer 1..9223372036854776000. */
export const billingQuery = z
  .object({
    limit: z.coerce.number().int().min(1).max(100).default(50),
    cursor: z
      .string()
      .regex(/^\d{1,19}$/)
      .refine((value) => /^\d{1,19}$/.test(value) && BigInt(value) >= 1n && BigInt(value) <= MAX_CURSOR, { message: 'cursor is an integer from 1 to 9223372036854776000' })
      .optional(),
  })
  .strict();

/**
 * One ledger entry. `cost` is what the entry took from the balance: positive for charges, negative
 * for grants and refunds. `in_words` / `out_words` appear only when the entry counts such words
 * (the spec types them as integers >= 1; an entry without words of a side leaves the field out).
 */
export const billingEntry = z
  .object({
    entry_id: z.number().int().min(1),
    route: z.string(),
    in_words: z.number().int().min(1).optional(),
    out_words: z.number().int().min(1).optional(),
    cost: decimalString,
    created_at: dateTime,
  })
  .strict()
  .meta({ id: 'BillingEntry' });

export const billing = z
  .object({
    organization_id: z.string(),
    enabled: z.boolean(),
    balance: decimalString.nullable(),
    low_credit_threshold: z.string().regex(/^\d+(\.\d+)?$/),
    entries: z.array(billingEntry),
    /** Send back as `cursor` for the next page; null on the last page. */
    next_cursor: z.number().int().min(1).nullable(),
  })
  .strict()
  .meta({ id: 'Billing' });

export type BillingEntryBody = z.infer<typeof billingEntry>;
