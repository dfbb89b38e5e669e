import { Readable } from 'node:stream';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import { ServiceError } from '@memory-agents/core';
import { checkJsonContentType, jsonBodyTooLarge, parseJsonText } from '../json-body.js';
import { readMultipart } from '../node/multipart.js';
import type { ParsedUpload, ReadMultipartOptions } from '../route.js';

/**
 * Reads a Web request's JSON body, refusing more than `limit` bytes while it streams (413; the
 * rest of the body is cancelled, never buffered) and malformed JSON (400). An empty body reads as
 * `undefined`.
 */
export async function readWebJsonBody(request: Request, limit: number): Promise<unknown> {
  refuseUsedBody(request);
  try {
    checkJsonContentType(request.headers.get('content-type') ?? undefined, request.body !== null);
  } catch (error) {
    void request.body?.cancel().catch(() => undefined);
    throw error;
  }
  const declared = Number(request.headers.get('content-length') ?? Number.NaN);
  if (Number.isFinite(declared) && declared > limit) {
    void request.body?.cancel().catch(() => undefined);
    throw jsonBodyTooLarge(limit);
  }
  if (request.body === null) return undefined;
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      void reader.cancel().catch(() => undefined);
      throw jsonBodyTooLarge(limit);
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return parseJsonText(new TextDecoder().decode(bytes));
}

/**
 * Reads a Web request's `multipart/form-data` body with the node handler's parser and limits:
 * the body streams through busboy (`Readable.fromWeb`), the file is refused with 413 as soon as
 * it passes the limit, never buffered past it.
 */
export function readWebUpload(request: Request, options: ReadMultipartOptions): Promise<ParsedUpload> {
  refuseUsedBody(request);
  const body = request.body === null ? Readable.from([]) : Readable.fromWeb(request.body as NodeReadableStream<Uint8Array>);
  return readMultipart(Object.assign(body, { headers: Object.fromEntries(request.headers) }), options);
}

/** A body something read before the handler (a framework's `await c.req.json()`) cannot be read again. */
function refuseUsedBody(request: Request): void {
  if (!request.bodyUsed) return;
  throw new ServiceError(
    'invalid_request',
    'The request body was already read before the memory-agents handler ran; hand the handler the original, unread Request ' +
      '(in Hono `c.req.raw`, before any `c.req.json()` or `c.req.parseBody()`).',
    { status: 400 },
  );
}
