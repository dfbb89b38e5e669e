/** Serializes one index instance's writes and background work, FIFO. */
export class WriteQueue {
  #tail: Promise<void> = Promise.resolve();
  /** Writes queued or running, and when the last one finished (background work not counted). */
  pendingWrites = 0;
  lastWriteAt = 0;
  /** Counts finished writes. */
  generation = 0;

  /** Runs a write (counted for the quiet period and for cache generations). */
  write<T>(fn: () => Promise<T>): Promise<T> {
    this.pendingWrites++;
    return this.run(fn).finally(() => {
      this.generation++;
      this.pendingWrites--;
      this.lastWriteAt = Date.now();
    });
  }

  /** Runs background work after everything queued before it. */
  run<T>(fn: () => Promise<T>): Promise<T> {
    const result = this.#tail.then(fn);
    this.#tail = result.then(
      () => undefined,
      () => undefined,
    );
    return result;
  }

  /** Resolves once everything queued so far has finished. */
  idle(): Promise<void> {
    return this.#tail;
  }
}
