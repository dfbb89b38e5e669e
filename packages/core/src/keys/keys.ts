import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** A freshly minted key; `key` (the whole bearer token) is shown once and never stored. */
export type MintedKey = { key: string; keyId: string; secretHash: string };

const KEY_PATTERN = /^sp_(k[0-9a-f]{20})_([0-9a-f]{64})$/;

/** Mints `sp_<key_id>_<secret>` with a 256-bit secret. */
export function mintKey(): MintedKey {
  const keyId = `k${randomBytes(10).toString('hex')}`;
  const secret = randomBytes(32).toString('hex');
  return { key: `sp_${keyId}_${secret}`, keyId, secretHash: hashSecret(secret) };
}

/** Splits a bearer token into key id and secret; null when it is not shaped like a key. */
export function parseKey(token: string): { keyId: string; secret: string } | null {
  const match = KEY_PATTERN.exec(token);
  return match ? { keyId: match[1]!, secret: match[2]! } : null;
}

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

/** Constant-time comparison of a presented secret with a stored hash. */
export function secretMatches(secret: string, storedHash: string): boolean {
  const presented = Buffer.from(hashSecret(secret), 'hex');
  const stored = Buffer.from(storedHash, 'hex');
  return presented.length === stored.length && timingSafeEqual(presented, stored);
}
