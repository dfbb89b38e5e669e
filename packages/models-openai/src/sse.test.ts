import { describe, expect, it } from 'vitest';
import { readServerSentEvents } from './sse.js';

const body = (chunks: string[]) =>
  new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(new TextEncoder().encode(chunk));
      controller.close();
    },
  });

async function events(chunks: string[]): Promise<string[]> {
  const seen: string[] = [];
  for await (const data of readServerSentEvents(body(chunks), () => undefined)) seen.push(data);
  return seen;
}

describe('readServerSentEvents', () => {
  it('yields each event data, across chunk boundaries and line endings, skipping comments', async () => {
    expect(await events([': keep-alive\n\ndata: {"a"', ':1}\r', '\n\r\ndata: [DONE]\n\n'])).toEqual(['{"a":1}', '[DONE]']);
  });

  it('joins multi-line data and flushes a last event without a blank line', async () => {
    expect(await events(['event: message\ndata: one\ndata: two\n\ndata:three'])).toEqual(['one\ntwo', 'three']);
  });
});
