import type { ServerResponse } from 'node:http';
import type { StreamResult } from '../route.js';

/** A comment line sent this often keeps proxies from closing a quiet stream (DESIGN "Decisions"). */
export const SSE_KEEP_ALIVE_MS = 15_000;

/**
 * Writes a stream of events as `text/event-stream`. When the client disconnects the iterator is
 * closed at once (`return()`), so whatever it holds (an answer place) is released.
 */
export async function writeSse(response: ServerResponse, result: StreamResult, requestId: string, keepAliveMs = SSE_KEEP_ALIVE_MS): Promise<void> {
  response.statusCode = result.status;
  response.setHeader('X-Request-Id', requestId);
  for (const [name, value] of Object.entries(result.headers ?? {})) response.setHeader(name, value);
  response.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
  response.setHeader('Cache-Control', 'no-store');
  response.setHeader('Connection', 'keep-alive');
  response.flushHeaders();

  const iterator = result.stream[Symbol.asyncIterator]();
  let closed = false;
  const onClose = () => {
    closed = true;
    void iterator.return?.();
  };
  response.on('close', onClose);
  const keepAlive = setInterval(() => {
    if (!closed) response.write(': keep-alive\n\n');
  }, keepAliveMs);
  try {
    for (;;) {
      const next = await iterator.next();
      if (next.done || closed) break;
      response.write(`event: ${next.value.event}\ndata: ${JSON.stringify(next.value.data)}\n\n`);
    }
  } finally {
    clearInterval(keepAlive);
    response.off('close', onClose);
    if (!closed) response.end();
  }
}
