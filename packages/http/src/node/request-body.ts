import type { IncomingMessage } from 'node:http';
import { ServiceError } from '@memory-agents/core';
import { jsonBodyTooLarge, parseJsonText } from '../json-body.js';
import type { RequestBody } from '../request.js';
import { discardBody } from './discard-body.js';

/**
 * A node request's body for the core. Usually the core reads the stream itself. When middleware
 * that ran first already read it (Express `express.json()`, Next.js API routes, a Fastify route
 * passing `request.raw` with `raw.body = request.body`), the stream is spent and the parsed body
 * sits on `req.body`: an object is the JSON body, a Buffer or string (`express.raw()`,
 * `express.text()`) is parsed under the same size limit. A spent stream with nothing usable left
 * is refused with 400 and what to change, rather than read as empty.
 */
export function nodeRequestBody(request: IncomingMessage): RequestBody {
  return {
    hasBody: declaresBody(request),
    chunks(purpose) {
      if (isConsumed(request)) {
        if (purpose === 'upload' && declaresBody(request)) throw consumedUpload();
        return null;
      }
      // Not destroyed when the reader stops early (a 413): destroying would reset the socket
      // before the refusal can be read; `discard` drains the rest instead.
      return request.iterator({ destroyOnReturn: false }) as AsyncIterable<Uint8Array>;
    },
    alreadyRead(limit) {
      if (!isConsumed(request)) return null;
      const body = (request as { body?: unknown }).body;
      if (typeof body === 'string' || body instanceof Uint8Array) {
        const size = typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength;
        if (size > limit) throw jsonBodyTooLarge(limit);
        return { value: parseJsonText(typeof body === 'string' ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8')) };
      }
      if (body !== null && typeof body === 'object') return { value: body };
      if (!declaresBody(request)) return { value: undefined };
      throw new ServiceError(
        'invalid_request',
        'The request body was already read by middleware that ran before the memory-agents handler, and no parsed body was left on `req.body`; ' +
          'mount the handler before body-parsing middleware (or keep that middleware off its paths), or let the parser store the JSON body on `req.body`.',
        { status: 400 },
      );
    },
    discard: () => discardBody(request),
  };
}

/** A multipart upload whose stream middleware already read (the file cannot be recovered from a parsed body). */
function consumedUpload(): ServiceError {
  return new ServiceError(
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

/** Lower-cased single-valued headers (repeated headers are joined by ", " as Node does). */
export function headerRecord(request: IncomingMessage): Record<string, string | undefined> {
  const headers: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(request.headers)) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  return headers;
}
