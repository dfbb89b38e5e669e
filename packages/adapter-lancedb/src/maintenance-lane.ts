import { setImmediate as nextTurn } from 'node:timers/promises';

/**
 * Runs one index instance's maintenance (ANN and full-text index builds, `optimize()`) beside its
 * write queue, one job at a time, FIFO. Writes and searches go on while a job runs: LanceDB commits
 * an index build on top of whatever was appended meanwhile (rows written after the build started
 * are searched unindexed until the next optimize). Compaction rewrites fragments and would conflict
 * with a merge or a delete of rows in them, so those take {@link MaintenanceLane.rewrite} with it.
 *
 * Background jobs are deduplicated by kind (a second "vector index build" requested while one waits
 * is the same job), and the lane yields a turn of the event loop between jobs so queued writes and
 * searches get the main thread. `close()` drops the jobs not started and waits for the running one
 * (a LanceDB build cannot be interrupted once started).
 */
export class MaintenanceLane {
  #tail: Promise<void> = Promise.resolve();
  #waiting = new Set<string>();
  #closed = false;
  #rewriteTail: Promise<void> = Promise.resolve();
  /** The kind of the job running now, if any. */
  running: string | null = null;

  /**
   * Queues a background job unless one of the same kind is waiting already; never rejects (its
   * failure goes to `onError`). Resolves when the job finished or was dropped.
   */
  schedule(kind: string, fn: () => Promise<void>, onError: (error: unknown) => void): Promise<void> {
    if (this.#closed || this.#waiting.has(kind)) return this.#tail;
    this.#waiting.add(kind);
    return this.#enqueue(kind, fn).catch((error: unknown) => {
      if (!(error instanceof LaneClosedError)) onError(error);
    });
  }

  /** Runs `fn` in the lane after the jobs queued before it (rejects with its failure). */
  run<T>(kind: string, fn: () => Promise<T>): Promise<T> {
    return this.#enqueue(kind, fn);
  }

  #enqueue<T>(kind: string, fn: () => Promise<T>): Promise<T> {
    const result = this.#tail.then(async () => {
      this.#waiting.delete(kind);
      if (this.#closed) throw new LaneClosedError();
      this.running = kind;
      try {
        return await fn();
      } finally {
        this.running = null;
        // Let writes and searches queued meanwhile run before the next job.
        await nextTurn();
      }
    });
    this.#tail = result.then(
      () => undefined,
      () => undefined,
    );
    return result;
  }

  /**
   * Serializes fragment rewrites: compaction in the lane against merges and deletes in the write
   * queue (appends and index builds need no turn).
   */
  rewrite<T>(fn: () => Promise<T>): Promise<T> {
    const result = this.#rewriteTail.then(fn);
    this.#rewriteTail = result.then(
      () => undefined,
      () => undefined,
    );
    return result;
  }

  /** Resolves once every job queued so far finished (or was dropped). */
  idle(): Promise<void> {
    return this.#tail;
  }

  /** Drops the jobs not started yet and waits for the running one. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#tail;
  }
}

/** A lane job dropped because the index closed first. */
export class LaneClosedError extends Error {
  constructor() {
    super('The memory index closed before this maintenance job started.');
    this.name = 'LaneClosedError';
  }
}
