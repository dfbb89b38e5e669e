import type { SseEvent } from './route.js';

/** A comment line sent this often keeps proxies from closing a quiet stream (DESIGN "Decisions"). */
export const SSE_KEEP_ALIVE_MS = 15_000;

/** The response headers of a `text/event-stream` (besides `X-Request-Id` and the route's own). */
export const SSE_HEADERS: Readonly<Record<string, string>> = {
  'Content-Type': 'text/event-stream; charset=utf-8',
  'Cache-Control': 'no-store',
  Connection: 'keep-alive',
};

/**
 * The text of an event stream, chunk by chunk, as either bridge writes it: one `event:`/`data:`
 * block per event and a `: keep-alive` comment whenever `keepAliveMs` pass without one.
 * `close()` (the client went away) ends it at once and closes the event source (`return()`), even
 * while an event is awaited, so whatever the source holds (an answer place) is released.
 */
export type SseChunks = {
  next(): Promise<IteratorResult<string, undefined>>;
  close(): void;
};

export function sseChunks(events: AsyncIterable<SseEvent>, keepAliveMs = SSE_KEEP_ALIVE_MS): SseChunks {
  const iterator = events[Symbol.asyncIterator]();
  let pending: Promise<IteratorResult<SseEvent>> | null = null;
  let closed = false;
  let wakeClosed: () => void = () => undefined;
  const closedSignal = new Promise<'closed'>((resolve) => (wakeClosed = () => resolve('closed')));
  const done = { done: true, value: undefined } as const;

  return {
    async next() {
      if (closed) return done;
      pending ??= iterator.next();
      let timer: ReturnType<typeof setTimeout> | undefined;
      const quiet = new Promise<'quiet'>((resolve) => (timer = setTimeout(() => resolve('quiet'), keepAliveMs)));
      try {
        const next = await Promise.race([pending, quiet, closedSignal]);
        if (closed || next === 'closed') return done;
        if (next === 'quiet') return { done: false, value: ': keep-alive\n\n' };
        pending = null;
        if (next.done) {
          closed = true;
          return done;
        }
        return { done: false, value: `event: ${next.value.event}\ndata: ${JSON.stringify(next.value.data)}\n\n` };
      } finally {
        clearTimeout(timer);
      }
    },
    close() {
      if (closed) return;
      closed = true;
      wakeClosed();
      void Promise.resolve(iterator.return?.()).catch(() => undefined);
    },
  };
}
