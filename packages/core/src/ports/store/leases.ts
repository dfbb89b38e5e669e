/**
 * Store area `leases`: named, expiring, exclusive leases.
 * Part of the {@link Store} port (see `index.ts` for the general contract: absent is `null`,
 * records are copies, backend failures reject).
 */

export type LeaseRecord = { name: string; holder: string; expiresAt: number };

export type LeaseStore = {
  /**
   * Takes the lease when it is free, expired, or already held by `holder` (then it is extended).
   * Of N concurrent calls for a free lease by different holders, exactly one MUST succeed.
   */
  acquire(request: { name: string; holder: string; ttlMs: number; now: number }): Promise<boolean>;
  /** Extends a lease still held by `holder`; false when it was lost (expired and taken). */
  renew(request: { name: string; holder: string; ttlMs: number; now: number }): Promise<boolean>;
  /** Frees the lease when held by `holder`; a no-op otherwise. */
  release(request: { name: string; holder: string }): Promise<void>;
  get(request: { name: string }): Promise<LeaseRecord | null>;
};
