import type { IncomingMessage } from 'node:http';
import { ServiceError } from '@memory-agents/core';
import { jsonBodyTooLarge, parseJsonText } from '../json-body.js';
import { readJsonBody } from './read-request.js';

/**
 * The JSON body of a node request, wherever it is. Usually the handler reads the stream itself
 * (`readJsonBody`). When middleware that ran first already read it (Express `express.json()`,
 * Next.js API routes, a Fastify route passing `request.raw` with `raw.body = request.body`), the
 * stream is spent and the parsed body sits on `req.body`: an object is the JSON body, a Buffer or
 * string (`express.raw()`, `express.text()`) is parsed under the same size limit. A spent stream
 * with nothing usable left is refused with 400 and what to change, rather than read as empty.
 */
export async function readNodeJsonBody(request: IncomingMessage, limit: number): Promise<unknown> {
  if (!isConsumed(request)) return readJsonBody(request, limit);
  const body = (request as { body?: unknown }).body;
  if (typeof body === 'string' || body instanceof Uint8Array) {
    const size = typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength;
    if (size > limit) throw jsonBodyTooLarge(limit);
    return parseJsonText(typeof body === 'string' ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8'));
  }
  if (body !== null && typeof body === 'object') return body;
  if (!declaresBody(request)) return undefined;
  throw new ServiceError(
    'invalid_request',
    'The request body was already read by middleware that ran before the memory-agents handler, and no parsed body was left on `req.body`; ' +
      'mount the handler before body-parsing middleware (or keep that middleware off its paths), or let the parser store the JSON body on `req.body`.',
    { status: 400 },
  );
}

/**
 * Refuses a multipart upload whose stream middleware already read (the file cannot be recovered
 * from a parsed body), with what to change.
 */
export function refuseConsumedUpload(request: IncomingMessage): void {
  if (!isConsumed(request) || !declaresBody(request)) return;
  throw new ServiceError(
    'invalid_request',
    'The upload was already read by middleware that ran before the memory-agents handler; mount the handler before body-parsing ' +
      'middleware (or keep multipart/form-data away from it, e.g. no multer or Fastify multipart parser on these paths) so it can stream the file.',
    { status: 400 },
  );
}

/** The stream was read to its end by someone else (nothing is left for the handler to read). */
function isConsumed(request: IncomingMessage): boolean {
  return request.readableEnded;
}

/** The request announced a body (a non-zero Content-Length or a Transfer-Encoding). */
function declaresBody(request: IncomingMessage): boolean {
  const length = request.headers['content-length'];
  if (length !== undefined) return Number(length) > 0;
  return request.headers['transfer-encoding'] !== undefined;
}
