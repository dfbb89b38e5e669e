import { createHmac, timingSafeEqual } from 'node:crypto';

/** The header every delivery carries its signatures in. */
export const WEBHOOK_SIGNATURE_HEADER = 'X-Memory-Agents-Signature';

/** HMAC-SHA256 (hex) of `${timestamp}.${body}` with `secret`. */
function hmac(secret: string, timestamp: number, body: string): string {
  return createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex');
}

/**
 * The signature header's value: `t=<unix seconds>,v1=<hex>` with one `v1` per secret (the current
 * one first; the previous one too while a rotation's window runs), as Stripe's scheme does.
 */
export function signWebhook({ secrets, timestamp, body }: { secrets: readonly string[]; timestamp: number; body: string }): string {
  return [`t=${timestamp}`, ...secrets.map((secret) => `v1=${hmac(secret, timestamp, body)}`)].join(',');
}

/** What `verifyWebhookSignature` checks. */
export type VerifyWebhookSignatureOptions = {
  /** The `X-Memory-Agents-Signature` header as received. */
  header: string | null | undefined;
  /** The request body exactly as received (before any JSON parsing). */
  body: string;
  /** The endpoint's secret (`whsec_...`). */
  secret: string;
  /** Oldest accepted timestamp, in seconds from now (replays of older deliveries fail). @default 300 */
  toleranceSeconds?: number;
  /** Current time in ms. @default Date.now() */
  now?: number;
};

/**
 * Verifies a webhook delivery on the receiving side: true when one `v1` signature of the header
 * is the HMAC-SHA256 of `${t}.${body}` with `secret` (compared in constant time) and `t` is within
 * the tolerance.
 *
 * @example
 * const ok = verifyWebhookSignature({ header: request.headers['x-memory-agents-signature'], body: rawBody, secret: process.env.WEBHOOK_SECRET! });
 */
export function verifyWebhookSignature({ header, body, secret, toleranceSeconds = 300, now = Date.now() }: VerifyWebhookSignatureOptions): boolean {
  if (!header) return false;
  let timestamp: number | null = null;
  const signatures: string[] = [];
  for (const part of header.split(',')) {
    const [name, value] = part.trim().split('=', 2);
    if (name === 't' && value && /^\d+$/.test(value)) timestamp = Number(value);
    else if (name === 'v1' && value) signatures.push(value);
  }
  if (timestamp === null || Math.abs(now / 1000 - timestamp) > toleranceSeconds) return false;
  const expected = Buffer.from(hmac(secret, timestamp, body), 'hex');
  return signatures.some((signature) => {
    const given = Buffer.from(signature, 'hex');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}
