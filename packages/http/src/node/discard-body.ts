import type { IncomingMessage } from 'node:http';

/**
 * How long the rest of a refused body is read and dropped, from the refusal on; a client still
 * sending after that has its connection closed. A time bound, not a byte bound: draining costs
 * no memory (nothing is buffered), only bandwidth, and any body a client sends at a sane rate ends
 * well within it (200 MB takes under a second on a LAN, 20 s at 10 MB/s), so the client reads its
 * 413 whatever the body's size (docs/api.md "Limits", docs/decisions.md).
 */
export const DISCARD_TIMEOUT_MS = 30_000;

/**
 * Reads and drops the rest of a body the service refused (413 over a limit, 401, 429, 400 ...), so
 * the client, which is still sending, reads the answer instead of a reset connection (closing a
 * socket with unread bytes makes the kernel answer with RST, and the client loses the response).
 * Memory stays bounded: nothing is buffered. After `timeoutMs` the socket is destroyed; a slow
 * sender is also bounded by the server's `requestTimeout` and minimum body rate. Once the body
 * ends, the connection is reused like any other keep-alive connection. Safe to call more than once.
 */
export function discardBody(request: IncomingMessage, timeoutMs = DISCARD_TIMEOUT_MS): void {
  if (request.complete || request.readableEnded || request.destroyed || discarding.has(request)) return;
  discarding.add(request);
  const timer = setTimeout(() => {
    if (!request.complete) request.socket?.destroy();
  }, timeoutMs);
  timer.unref();
  request.once('end', () => clearTimeout(timer));
  request.once('close', () => clearTimeout(timer));
  request.on('error', () => undefined);
  request.resume();
}

const discarding = new WeakSet<IncomingMessage>();
