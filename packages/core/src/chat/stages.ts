/** One timed stage of an answering call, as the response's `stages` report it. */
export type Stage = { name: string; duration_ms: number };

/** Times one stage; the durations are whole milliseconds. */
export async function timed<T>(stages: Stage[], name: string, work: () => Promise<T>): Promise<T> {
  const start = performance.now();
  try {
    return await work();
  } finally {
    stages.push({ name, duration_ms: Math.max(0, Math.round(performance.now() - start)) });
  }
}
