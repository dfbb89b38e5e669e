import type { OrganizationRecord } from './organizations.js';

/**
 * Store area `keys`: API keys (hashes only).
 * Part of the {@link Store} port (see `index.ts` for the general contract: absent is `null`,
 * records are copies, backend failures reject).
 */

export type KeyRecord = {
  /** The public part of `sp_<key_id>_<secret>`; safe to log. */
  keyId: string;
  organizationId: string;
  /** Hex SHA-256 of the secret; the secret itself is never stored. */
  secretHash: string;
  createdAt: string;
  expiresAt: string;
  revokedAt: string | null;
};

export type KeyStore = {
  /**
   * Inserts the key only if the organization holds fewer than `maxLive` keys that are neither
   * revoked nor expired at `now`. Of N concurrent inserts at the ceiling, only as many succeed as
   * there are free places. Resolves false when the ceiling is reached.
   */
  insert(request: { key: KeyRecord; maxLive: number; now: string }): Promise<boolean>;
  get(request: { keyId: string }): Promise<KeyRecord | null>;
  /**
   * The key and its organization in one read: what authentication needs per request (a shared
   * database answers it in one round trip). Null when the key, or its organization, is absent.
   */
  getWithOrganization(request: { keyId: string }): Promise<{ key: KeyRecord; organization: OrganizationRecord } | null>;
  /** Every key of the organization, newest first, revoked and expired included. */
  list(request: { organizationId: string }): Promise<KeyRecord[]>;
  /** Sets `revokedAt` once; resolves the record (null when absent). Revoking twice keeps the first time. */
  revoke(request: { keyId: string; at: string }): Promise<KeyRecord | null>;
};
