import type { ApiResponse } from '../api-handler.js';
import type { SseChunks } from '../sse.js';

/**
 * The core's answer as a Web `Response`. An event stream becomes a `ReadableStream` that pulls
 * one chunk at a time; cancelling it (the client went away) or `signal` aborting closes the event
 * source at once. `Connection` is left to the runtime (HTTP/2 forbids it).
 */
export function toWebResponse(result: ApiResponse, signal: AbortSignal): Response {
  const headers = new Headers(result.headers);
  switch (result.kind) {
    case 'json':
      return new Response(result.text === '' ? null : result.text, { status: result.status, headers });
    case 'binary':
      return new Response(result.bytes as Uint8Array<ArrayBuffer>, { status: result.status, headers });
    case 'chunks':
      return new Response(byteStream(result.chunks, signal), { status: result.status, headers });
    case 'aborted':
      return new Response(null, { status: result.status, headers });
    case 'events':
      headers.delete('Connection');
      return new Response(eventStream(result.chunks, signal), { status: result.status, headers });
  }
}

/**
 * Bytes pulled one chunk at a time (a large file is never held whole); cancelling the stream or
 * `signal` aborting stops the reading and releases the source. A source failing part-way errors
 * the stream (the client sees a short body, not a complete-looking one).
 */
function byteStream(chunks: AsyncIterable<Uint8Array>, signal: AbortSignal): ReadableStream<Uint8Array> {
  const iterator = chunks[Symbol.asyncIterator]();
  const stop = () => void iterator.return?.()?.catch(() => undefined);
  signal.addEventListener('abort', stop, { once: true });
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const next = await iterator.next();
        if (next.done) {
          signal.removeEventListener('abort', stop);
          controller.close();
        } else controller.enqueue(next.value);
      } catch (error) {
        signal.removeEventListener('abort', stop);
        controller.error(error);
      }
    },
    cancel() {
      signal.removeEventListener('abort', stop);
      stop();
    },
  });
}

function eventStream(chunks: SseChunks, signal: AbortSignal): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let cancelled = false;
  const close = () => chunks.close();
  signal.addEventListener('abort', close, { once: true });
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const next = await chunks.next();
        // Cancelled while the next event was awaited: the controller is closed already.
        if (cancelled) return;
        if (next.done) {
          signal.removeEventListener('abort', close);
          controller.close();
        } else controller.enqueue(encoder.encode(next.value));
      } catch {
        // The core logs an event source that fails (its chunks then end); this is the stream's own failure.
        if (cancelled) return;
        signal.removeEventListener('abort', close);
        chunks.close();
        controller.close();
      }
    },
    cancel() {
      cancelled = true;
      signal.removeEventListener('abort', close);
      chunks.close();
    },
  });
}
