import type { ServerResponse } from 'node:http';
import type { ErrorCode, HttpErrorCode } from '@memory-agents/core';

/** The spec's error body: what every refusal answers, whoever writes it. */
export type ErrorBody = { error: string; code: ErrorCode | HttpErrorCode; request_id: string };

/** A new request id (`req_` and 32 hex digits), for answers written outside the API handler. */
export function newRequestId(): string {
  return `req_${globalThis.crypto.randomUUID().replaceAll('-', '')}`;
}

/** `{ error, code, request_id }` with a new request id unless one is given. */
export function errorBody(code: ErrorCode | HttpErrorCode, message: string, requestId: string = newRequestId()): ErrorBody {
  return { error: message, code, request_id: requestId };
}

/**
 * Answers a node response with the spec's error body, for the server's own edges that run before
 * or beside the API handler (a server still starting, a request with no Host, the inspector's
 * and the metrics' refusals): the same body, `X-Request-Id` and `Cache-Control: no-store` as the
 * API's own errors. `headers` adds to them (`Allow`, `Retry-After`, `WWW-Authenticate`, ...).
 * Resolves the request id it answered with.
 */
export function sendErrorJson(response: ServerResponse, status: number, code: ErrorCode | HttpErrorCode, message: string, headers: Record<string, string> = {}): string {
  const body = errorBody(code, message);
  const text = JSON.stringify(body);
  response.writeHead(status, {
    ...headers,
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': String(Buffer.byteLength(text)),
    'Cache-Control': 'no-store',
    'X-Request-Id': body.request_id,
  });
  response.end(text);
  return body.request_id;
}
