import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { MemoryAgentsError } from './errors.js';
import type { ChatStreamEvent } from './types.js';

const EVENT_NAMES: ReadonlySet<string> = new Set(['context', 'delta', 'done', 'error']);

/**
 * The typed events of a `chat/stream` response body, in order. Unknown event names are skipped
 * (the server may add some); a `data:` line that is not JSON throws. Stopping early cancels the
 * body, which ends the request.
 */
export async function* readChatStream(response: Response): AsyncGenerator<ChatStreamEvent, void, undefined> {
  if (!response.body) return;
  const pending: ChatStreamEvent[] = [];
  const parser = createParser({
    onEvent(message: EventSourceMessage) {
      if (message.event === undefined || !EVENT_NAMES.has(message.event)) return;
      let data: unknown;
      try {
        data = JSON.parse(message.data);
      } catch {
        throw new MemoryAgentsError({
          status: response.status,
          code: 'internal_error',
          requestId: response.headers.get('x-request-id'),
          message: `The ${message.event} event of the chat stream did not carry JSON.`,
        });
      }
      pending.push({ event: message.event, data } as ChatStreamEvent);
    },
  });
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let finished = false;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      parser.feed(value);
      while (pending.length > 0) yield pending.shift()!;
    }
    parser.reset({ consume: true });
    while (pending.length > 0) yield pending.shift()!;
    finished = true;
  } finally {
    if (!finished) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}

/**
 * Throws the `error` event of a stream as a `MemoryAgentsError` (the status is the stream's
 * 200); other events pass through. For callers that prefer a throw to a final `error` event.
 */
export function throwOnStreamError(event: ChatStreamEvent): Exclude<ChatStreamEvent, { event: 'error' }> {
  if (event.event !== 'error') return event;
  throw new MemoryAgentsError({ status: 200, code: event.data.code, requestId: event.data.request_id, message: event.data.error });
}
