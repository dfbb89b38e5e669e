import type { ServerResponse } from 'node:http';
import type { BinaryResult, JsonResult } from '../route.js';

/** Writes a JSON result. No CORS headers are ever sent (spec "Authentication" 9). */
export function writeJson(response: ServerResponse, result: JsonResult, requestId: string): void {
  if (response.headersSent) {
    response.end();
    return;
  }
  const payload = result.status === 204 ? '' : JSON.stringify(result.body);
  response.statusCode = result.status;
  response.setHeader('X-Request-Id', requestId);
  for (const [name, value] of Object.entries(result.headers ?? {})) response.setHeader(name, value);
  if (payload !== '') {
    response.setHeader('Content-Type', 'application/json; charset=utf-8');
    response.setHeader('Content-Length', Buffer.byteLength(payload));
  }
  response.setHeader('Cache-Control', 'no-store');
  response.end(payload);
}

/** Writes raw bytes (a stored original) with the result's headers. */
export function writeBinary(response: ServerResponse, result: BinaryResult, requestId: string): void {
  if (response.headersSent) {
    response.end();
    return;
  }
  response.statusCode = result.status;
  response.setHeader('X-Request-Id', requestId);
  for (const [name, value] of Object.entries(result.headers)) response.setHeader(name, value);
  response.setHeader('Content-Length', result.binary.byteLength);
  response.setHeader('Cache-Control', 'private, no-store');
  response.setHeader('X-Content-Type-Options', 'nosniff');
  response.end(Buffer.from(result.binary.buffer, result.binary.byteOffset, result.binary.byteLength));
}
