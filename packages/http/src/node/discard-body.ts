import type { Readable } from 'node:stream';

/** After a refusal, the rest of a body is read and dropped up to this many bytes, then the socket closes. */
export const MAX_DISCARD_BYTES = 64 * 1024 * 1024;

/**
 * Reads and drops the rest of a body the service refused (413 over a limit, 401, 429, 400 ...), so
 * the client, which is still sending, reads the answer instead of a reset connection (closing a
 * socket with unread bytes makes the kernel answer with RST, and the client loses the response).
 * Memory stays bounded: nothing is buffered. Past `maxBytes` the socket is destroyed; a slow
 * sender is bounded by the server's `requestTimeout`. Once the body ends, the connection is
 * reused like any other keep-alive connection. Safe to call more than once.
 */
export function discardBody(request: DiscardableBody, maxBytes = MAX_DISCARD_BYTES): void {
  if (request.complete === true || request.readableEnded || request.destroyed || discarding.has(request)) return;
  discarding.add(request);
  let dropped = 0;
  request.on('data', (chunk: Buffer) => {
    dropped += chunk.length;
    // A Web body (the fetch handler's uploads) has no socket: destroying the stream cancels it.
    if (dropped > maxBytes) (request.socket ?? request).destroy();
  });
  request.on('error', () => undefined);
  request.resume();
}

/** A node:http request, or a Readable made from a Web body (no socket, no `complete`). */
export type DiscardableBody = Readable & { complete?: boolean; socket?: { destroy(): void } | null };

const discarding = new WeakSet<DiscardableBody>();
