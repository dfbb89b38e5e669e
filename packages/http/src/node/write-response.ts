import type { ServerResponse } from 'node:http';
import type { ApiResponse } from '../api-handler.js';
import type { SseChunks } from '../sse.js';

/**
 * Writes the core's answer to a node:http response. No CORS headers are ever sent (spec
 * "Authentication" 9). An aborted request (the client went away) only ends the response.
 *
 * With `endAfter` (a refusal whose request body is still arriving and being discarded), the whole
 * answer is written at once (the client can read it while it sends) but the response is ended only
 * when `endAfter` settles: ending it closes a `Connection: close` socket, and closing a socket with
 * unread bytes resets it before the client reads the answer (see `bodyFinished`).
 */
export async function writeApiResponse(response: ServerResponse, result: ApiResponse, endAfter?: Promise<void> | null): Promise<void> {
  if (response.headersSent || result.kind === 'aborted') {
    if (!response.writableEnded) response.end();
    return;
  }
  if (result.kind === 'json') {
    // One writeHead with every header (node's fast path when nothing was set before: no
    // per-header setHeader), then header and body leave in one write.
    if (result.text !== '') result.headers['Content-Length'] = String(Buffer.byteLength(result.text));
    response.writeHead(result.status, result.headers);
    await endOnce(response, result.text, endAfter);
  } else if (result.kind === 'binary') {
    response.writeHead(result.status, result.headers);
    await endOnce(response, Buffer.from(result.bytes.buffer, result.bytes.byteOffset, result.bytes.byteLength), endAfter);
  } else if (result.kind === 'chunks') {
    response.writeHead(result.status, result.headers);
    await writeChunks(response, result.chunks);
  } else {
    response.statusCode = result.status;
    for (const [name, value] of Object.entries(result.headers)) response.setHeader(name, value);
    await writeEvents(response, result.chunks);
  }
}

/** Ends the response with `payload`, or writes it now and ends once `endAfter` settles. */
async function endOnce(response: ServerResponse, payload: string | Buffer, endAfter?: Promise<void> | null): Promise<void> {
  if (!endAfter) {
    response.end(payload);
    return;
  }
  if (payload.length > 0) response.write(payload);
  await endAfter;
  if (!response.writableEnded && !response.destroyed) response.end();
}

/**
 * Writes bytes as they are read, waiting for the socket to drain (memory stays at a chunk or two
 * whatever the file's size). When the client goes away the reading stops (the source is released)
 * and the response is destroyed; a source that fails part-way destroys it too, so the client sees a
 * short body against its Content-Length, never a complete-looking one.
 */
async function writeChunks(response: ServerResponse, chunks: AsyncIterable<Uint8Array>): Promise<void> {
  const iterator = chunks[Symbol.asyncIterator]();
  try {
    for (;;) {
      if (response.destroyed) break;
      const next = await iterator.next();
      if (next.done) {
        response.end();
        return;
      }
      if (!response.write(next.value)) await drainedOrClosed(response);
    }
  } catch {
    response.destroy();
    return;
  } finally {
    await iterator.return?.();
  }
  response.destroy();
}

/** Resolves when the response can take more, or is gone. */
function drainedOrClosed(response: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      response.off('drain', done);
      response.off('close', done);
      resolve();
    };
    response.on('drain', done);
    response.on('close', done);
  });
}

/**
 * Writes an event stream as it comes. When the client disconnects the chunks are closed at once,
 * so whatever the event source holds (an answer place) is released.
 */
export async function writeEvents(response: ServerResponse, chunks: SseChunks): Promise<void> {
  response.flushHeaders();
  let closed = false;
  const onClose = () => {
    closed = true;
    chunks.close();
  };
  response.on('close', onClose);
  try {
    for (;;) {
      const next = await chunks.next();
      if (next.done || closed) break;
      response.write(next.value);
    }
  } finally {
    response.off('close', onClose);
    chunks.close();
    if (!closed) response.end();
  }
}
