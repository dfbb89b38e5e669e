import type { IncomingMessage } from 'node:http';
import { jsonBodyTooLarge as tooLarge, parseJsonText } from '../json-body.js';

/**
 * Reads a JSON body, refusing more than `limit` bytes while it streams (413) and malformed JSON
 * (400). An empty body reads as `undefined`.
 */
export async function readJsonBody(request: IncomingMessage, limit: number): Promise<unknown> {
  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) throw tooLarge(limit);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw tooLarge(limit);
    chunks.push(chunk);
  }
  return parseJsonText(Buffer.concat(chunks, size).toString('utf8'));
}

/** Lower-cased single-valued headers (repeated headers are joined by ", " as Node does). */
export function headerRecord(request: IncomingMessage): Record<string, string | undefined> {
  const headers: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(request.headers)) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  return headers;
}
