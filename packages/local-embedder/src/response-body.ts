/** Reading and letting go of a fetch response's body, as the model pull does. */

/**
 * The chunks of a body, ending with the signal's reason as soon as it is aborted: an abort does not
 * wait for the fetch to error its body stream (CI once saw an aborted pull hang for 180 s; a read
 * pending in that stream is the suspect), and the body is cancelled when reading stops, however it stops.
 */
export async function* chunksOf(body: ReadableStream<Uint8Array>, signal: AbortSignal | undefined): AsyncGenerator<Uint8Array> {
  const reader = body.getReader();
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal?.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
  aborted.catch(() => undefined);
  try {
    for (;;) {
      signal?.throwIfAborted();
      const next = await Promise.race([reader.read(), aborted]);
      if (next.done) return;
      yield next.value;
    }
  } finally {
    if (onAbort !== undefined) signal?.removeEventListener('abort', onAbort);
    reader.cancel().catch(() => undefined);
  }
}

/** Lets go of a body that will not be read (a cancelled or already-read body is fine). */
export function discard(response: Response): void {
  response.body?.cancel().catch(() => undefined);
}
