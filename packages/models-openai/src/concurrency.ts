import type { LimitFunction } from 'p-limit';
import { abortError } from './abort.js';

/**
 * Waits for a slot of `limit` (p-limit: FIFO, one instance shared by every call of an adapter, so
 * a bulk ingest never has more than `maxConcurrency` requests open against the provider) and
 * resolves with the function that frees it; the slot is held until then, which lets a streamed
 * response keep it while it is read. Rejects with an `AbortError` as soon as `signal` aborts while
 * waiting; that waiter's turn, when it comes, passes the slot straight on.
 */
export function acquireSlot(limit: LimitFunction, signal?: AbortSignal): Promise<() => void> {
  if (signal?.aborted) return Promise.reject(abortError(signal));
  return new Promise((resolve, reject) => {
    let settled = false;
    const onAbort = () => {
      if (settled) return;
      settled = true;
      reject(abortError(signal));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    void limit(async () => {
      signal?.removeEventListener('abort', onAbort);
      if (settled) return;
      settled = true;
      await new Promise<void>((free) => {
        let freed = false;
        resolve(() => {
          if (freed) return;
          freed = true;
          free();
        });
      });
    });
  });
}
