import { abortError } from './abort.js';

/**
 * A FIFO counting semaphore. One instance is shared by every call of an adapter so that a bulk
 * ingest (hundreds of turns, thousands of embeddings) never has more than `limit` requests open
 * against the provider at once.
 */
export type Semaphore = {
  /** Resolves with a release function once a slot is free; rejects with an `AbortError` if `signal` aborts first. */
  acquire(signal?: AbortSignal): Promise<() => void>;
  /** Requests holding a slot right now. */
  readonly active: number;
  /** Calls waiting for a slot. */
  readonly waiting: number;
};

export function createSemaphore(limit: number): Semaphore {
  let active = 0;
  const queue: { grant: () => void }[] = [];

  const releaseOnce = (): (() => void) => {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      active -= 1;
      // Hand the slot straight to the next waiter so a newcomer can never overtake the queue.
      const next = queue.shift();
      if (next) {
        active += 1;
        next.grant();
      }
    };
  };

  return {
    get active() {
      return active;
    },
    get waiting() {
      return queue.length;
    },
    acquire(signal) {
      if (signal?.aborted) return Promise.reject(abortError(signal));
      if (active < limit) {
        active += 1;
        return Promise.resolve(releaseOnce());
      }
      return new Promise((resolve, reject) => {
        const waiter = {
          grant: () => {
            signal?.removeEventListener('abort', onAbort);
            resolve(releaseOnce());
          },
        };
        const onAbort = () => {
          const position = queue.indexOf(waiter);
          if (position >= 0) queue.splice(position, 1);
          reject(abortError(signal));
        };
        signal?.addEventListener('abort', onAbort, { once: true });
        queue.push(waiter);
      });
    },
  };
}
