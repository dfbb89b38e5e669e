import type { IncomingMessage } from 'node:http';
import { ServiceError } from '@memory-agents/core';

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
  if (size === 0) return undefined;
  const text = Buffer.concat(chunks, size).toString('utf8');
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new ServiceError('invalid_request', 'The request body is not valid JSON.', { status: 400 });
  }
}

function tooLarge(limit: number): ServiceError {
  return new ServiceError('payload_too_large', `The JSON request body is larger than ${limit} bytes.`);
}

/** Lower-cased single-valued headers (repeated headers are joined by ", " as Node does). */
export function headerRecord(request: IncomingMessage): Record<string, string | undefined> {
  const headers: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(request.headers)) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  return headers;
}
