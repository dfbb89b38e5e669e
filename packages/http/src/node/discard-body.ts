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

/**
 * Settles once nothing more of the request's body will arrive: it ended, the connection closed, or
 * the discard bound destroyed the socket (so never later than {@link DISCARD_TIMEOUT_MS} after
 * `discardBody`); null when the body was already complete. A refusal's answer is ended only then:
 * on a connection that closes after the answer (the client sent `Connection: close`, or HTTP/1.0),
 * node destroys the socket when the answer ends, and a socket destroyed with unread bytes is reset,
 * so a client still sending would lose the answer it had not read yet (EPIPE instead of its 413).
 */
export function bodyFinished(request: IncomingMessage): Promise<void> | null {
  if (request.complete || request.readableEnded || request.destroyed) return null;
  return new Promise((resolve) => {
    const done = () => {
      request.off('end', done);
      request.off('close', done);
      resolve();
    };
    request.once('end', done);
    request.once('close', done);
  });
}
