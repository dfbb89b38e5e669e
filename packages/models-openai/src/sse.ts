import { createParser } from 'eventsource-parser';

/**
 * Reads a `text/event-stream` body and yields the `data` of each event (multi-line data joined with
 * `\n`), parsed by `eventsource-parser` (the parser the client uses too). Comments and other fields
 * are skipped; a last event the body ends without a blank line after is still yielded. `onChunk`
 * runs after every network chunk, so the caller can restart an idle timer.
 */
export async function* readServerSentEvents(body: ReadableStream<Uint8Array>, onChunk: () => void): AsyncGenerator<string> {
  const pending: string[] = [];
  const parser = createParser({ onEvent: (event) => void pending.push(event.data) });
  // Decoded here rather than through a TextDecoderStream, which drops a chunk holding only part of a
  // UTF-8 character: every network chunk must reach `onChunk`.
  const decoder = new TextDecoder();
  const reader = body.getReader();
  let finished = false;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      onChunk();
      parser.feed(decoder.decode(value, { stream: true }));
      while (pending.length > 0) yield pending.shift()!;
    }
    // End the last event as a blank line would (the spec drops an unterminated one; providers that
    // close without it still meant it).
    parser.feed(`${decoder.decode()}\n\n`);
    while (pending.length > 0) yield pending.shift()!;
    finished = true;
  } finally {
    if (!finished) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}
