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

describe('readServerSentEvents at awkward byte boundaries', () => {
  const stream = ': hi\r\n\r\nevent: message\r\ndata: {"text":"café ☕ 😀"}\r\n\r\ndata: line one\ndata: line two\r\rdata: [DONE]\n\n';
  const expected = ['{"text":"café ☕ 😀"}', 'line one\nline two', '[DONE]'];
  const bytes = new TextEncoder().encode(stream);
  const byteBody = (chunks: Uint8Array[]) =>
    new ReadableStream<Uint8Array>({
      start(controller) {
        for (const chunk of chunks) controller.enqueue(chunk);
        controller.close();
      },
    });
  async function eventsOf(chunks: Uint8Array[]): Promise<{ seen: string[]; chunks: number }> {
    const seen: string[] = [];
    let count = 0;
    for await (const data of readServerSentEvents(byteBody(chunks), () => void count++)) seen.push(data);
    return { seen, chunks: count };
  }

  it('yields the same events wherever one split falls (inside a UTF-8 character, a CRLF, a field name)', async () => {
    for (let at = 1; at < bytes.length; at++) {
      const { seen } = await eventsOf([bytes.slice(0, at), bytes.slice(at)]);
      expect(seen, `split at byte ${at}`).toEqual(expected);
    }
  });

  it('yields the same events from a body sent one byte per chunk, calling onChunk for each', async () => {
    const chunks = Array.from(bytes, (byte) => Uint8Array.of(byte));
    expect(await eventsOf(chunks)).toEqual({ seen: expected, chunks: bytes.length });
  });
});
