import { ServiceError } from '@memory-agents/core';
import type { RequestBody } from '../request.js';

/**
 * A Web request's body for the core: its `ReadableStream`, read chunk by chunk (no `node:stream`,
 * so the fetch handler runs on Bun, Deno and edge runtimes). Leaving the reading early cancels the
 * stream; nothing past a limit is buffered.
 */
export function webRequestBody(request: Request): RequestBody {
  return {
    hasBody: request.body !== null,
    chunks() {
      refuseUsedBody(request);
      return request.body === null ? null : streamChunks(request.body);
    },
    alreadyRead() {
      refuseUsedBody(request);
      return null;
    },
    discard() {
      if (request.body !== null && !request.body.locked) void request.body.cancel().catch(() => undefined);
    },
  };
}

/** The chunks of a stream; stopping early (return) cancels it. */
async function* streamChunks(stream: ReadableStream<Uint8Array>): AsyncGenerator<Uint8Array> {
  const reader = stream.getReader();
  let done = false;
  try {
    for (;;) {
      const next = await reader.read();
      if (next.done) {
        done = true;
        return;
      }
      yield next.value;
    }
  } finally {
    if (!done) void reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}

/** A body something read before the handler (a framework's `await c.req.json()`) cannot be read again. */
function refuseUsedBody(request: Request): void {
  if (!request.bodyUsed) return;
  throw new ServiceError(
    'invalid_request',
    'The request body was already read before the memory-agents handler ran; hand the handler the original, unread Request ' +
      '(in Hono `c.req.raw`, before any `c.req.json()` or `c.req.parseBody()`).',
    { status: 400 },
  );
}
