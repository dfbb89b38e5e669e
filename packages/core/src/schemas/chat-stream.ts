import { z } from 'zod';
import { chatResponse, citation } from './observations.js';

/**
 * The events of `chat/stream` (DESIGN "Decisions"), for OpenAPI and typed clients: `context`
 * once, `delta` zero or more times, then `done` or `error`. Each is one server-sent event whose
 * `event:` line is the name and whose `data:` line is the JSON below.
 */
export const chatStreamContextEvent = z
  .object({
    event: z.literal('context'),
    data: z.object({ memory_context: z.string(), citations: z.array(citation) }).strict(),
  })
  .strict()
  .meta({ id: 'ChatStreamContextEvent', description: 'The memory context and its citations, before the answer is written.' });

export const chatStreamDeltaEvent = z
  .object({ event: z.literal('delta'), data: z.object({ text: z.string() }).strict() })
  .strict()
  .meta({ id: 'ChatStreamDeltaEvent', description: 'The next piece of the answer; the pieces joined are the answer.' });

export const chatStreamDoneEvent = z
  .object({ event: z.literal('done'), data: chatResponse })
  .strict()
  .meta({ id: 'ChatStreamDoneEvent', description: 'The last event of a stream that answered: the whole chat response.' });

export const chatStreamErrorEvent = z
  .object({
    event: z.literal('error'),
    data: z.object({ error: z.string(), code: z.string(), request_id: z.string() }).strict(),
  })
  .strict()
  .meta({ id: 'ChatStreamErrorEvent', description: 'The last event of a stream that failed after it started; `code` is an error code.' });

export const chatStreamEvent = z
  .discriminatedUnion('event', [chatStreamContextEvent, chatStreamDeltaEvent, chatStreamDoneEvent, chatStreamErrorEvent])
  .meta({ id: 'ChatStreamEvent', description: 'One server-sent event of chat/stream: `event:` is the name, `data:` the JSON.' });
