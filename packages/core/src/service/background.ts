import { describeError, type Logger } from './logger.js';

/**
 * Work that continues after a 202 (agent creation, deletions). Tracked so `stop()` can wait for
 * it; a failure is logged, never thrown into the request that started it.
 */
export class BackgroundTasks {
  readonly #running = new Set<Promise<void>>();
  readonly #logger: Logger;

  constructor(logger: Logger) {
    this.#logger = logger;
  }

  run(name: string, fields: Record<string, unknown>, task: () => Promise<void>): void {
    const promise = Promise.resolve()
      .then(task)
      .catch((error: unknown) => this.#logger.error(`background task failed: ${name}`, { ...fields, error: describeError(error) }))
      .finally(() => this.#running.delete(promise));
    this.#running.add(promise);
  }

  /** Resolves when every task started so far (and any they start) has settled. */
  async drain(): Promise<void> {
    while (this.#running.size > 0) await Promise.all([...this.#running]);
  }
}
