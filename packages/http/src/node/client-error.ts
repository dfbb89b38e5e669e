import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import { errorBody } from './error-json.js';
import type { Duplex } from 'node:stream';
import { HTTP_ERROR_CODES, type ErrorCode, type HttpErrorCode } from '@memory-agents/core';

/** Options of {@link createClientErrorHandler}. */
export type ClientErrorHandlerOptions = {
  /** Makes the `request_id` of the refusal. @default `req_` + a random UUID, as `createHandler` */
  requestId?: () => string;
  /**
   * How long the half-closed socket keeps reading (and dropping) what the client still sends, so
   * the client reads the answer instead of a reset; then it is destroyed.
   * @default 2000
   */
  lingerMs?: number;
};

type ParserError = Error & { code?: string };

/**
 * Status, code and sentence for an error node:http raised before a request reached the handler.
 * 400 and 413 are pairs of the spec's table; 408 and 431 are statuses it does not use, which carry
 * codes of their own (HTTP_ERROR_CODES, docs/api.md "Codes outside the spec's table").
 */
function describe(error: ParserError): { status: number; code: ErrorCode | HttpErrorCode; message: string } {
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW':
      return { status: HTTP_ERROR_CODES.headers_too_large.status, code: 'headers_too_large', message: 'The request headers are too large.' };
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return { status: 413, code: 'payload_too_large', message: 'The chunk extensions of the request body are too large.' };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { status: HTTP_ERROR_CODES.request_timeout.status, code: 'request_timeout', message: 'The request was not received in time; send it again without pausing.' };
    default:
      return { status: 400, code: 'invalid_request', message: 'The request is not valid HTTP/1.1 (bad request line, header or body framing).' };
  }
}

/**
 * A listener for the node:http server's `clientError` event: errors Node raises itself (a bad
 * request line, 431 headers too large, 408 request timeout, bad chunked framing) are answered with
 * the spec's error body `{ error, code, request_id }` instead of Node's empty one. The answer is
 * followed by a half-close: the socket keeps reading for `lingerMs` so the client reads the answer.
 *
 * @example
 * const server = http.createServer(createHandler(service));
 * server.on('clientError', createClientErrorHandler());
 */
export function createClientErrorHandler(options: ClientErrorHandlerOptions = {}): (error: Error, socket: Duplex) => void {
  const makeRequestId = options.requestId ?? (() => `req_${randomUUID().replaceAll('-', '')}`);
  const lingerMs = options.lingerMs ?? 2000;
  return (error: ParserError, socket: Duplex) => {
    // A parse error can be raised again for later bytes of the same connection: answer once.
    socket.on('error', () => undefined);
    const inProgress = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (error.code === 'ECONNRESET' || !socket.writable || socket.writableEnded || inProgress?.headersSent) {
      socket.destroy();
      return;
    }
    const { status, code, message } = describe(error);
    const requestId = makeRequestId();
    const payload = JSON.stringify(errorBody(code, message, requestId));
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Bad Request'}\r\n` +
        'Connection: close\r\n' +
        'Content-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(payload)}\r\n` +
        `X-Request-Id: ${requestId}\r\n` +
        'Cache-Control: no-store\r\n\r\n' +
        payload,
    );
    // Lingering close: read and drop what is still in flight, then let go of the socket.
    const timer = setTimeout(() => socket.destroy(), lingerMs);
    timer.unref();
    socket.once('close', () => clearTimeout(timer));
    socket.once('end', () => socket.destroy());
    socket.resume();
  };
}

/** {@link createClientErrorHandler} with the default options. */
export const handleClientError = createClientErrorHandler();
