/**
 * The events `produce` pushes, as an async generator: yielded in order as they come, ending once
 * `produce` has settled and every event was yielded. `produce` starts on the first `next()`; it
 * should not reject (a failure is an event too), else the generator throws after the last event.
 * A consumer that stops early leaves `produce` running (it is stopped through its own signal).
 */
export async function* pushedEvents<T>(produce: (push: (event: T) => void) => Promise<void>): AsyncGenerator<T> {
  const queue: T[] = [];
  let wake: (() => void) | null = null;
  let finished = false;
  const work = produce((event) => {
    queue.push(event);
    wake?.();
  }).finally(() => {
    finished = true;
    wake?.();
  });
  for (;;) {
    while (queue.length > 0) yield queue.shift()!;
    if (finished) break;
    await new Promise<void>((resolve) => {
      wake = resolve;
    });
    wake = null;
  }
  await work;
}

/** Runs `release` (idempotent) when the consumer stops the generator, started or not. */
export function releasingOnReturn<T>(release: () => Promise<void>, generator: AsyncGenerator<T>): AsyncGenerator<T> {
  const original = generator.return.bind(generator);
  generator.return = async (value) => {
    try {
      return await original(value);
    } finally {
      await release();
    }
  };
  return generator;
}
