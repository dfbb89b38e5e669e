import type { IncomingMessage } from 'node:http';
import { ServiceError } from '@memory-agents/core';
import { discardBody } from './discard-body.js';

/**
 * Reads a JSON body, refusing more than `limit` bytes while it streams (413), a body that is not
 * declared as JSON (400, see {@link checkJsonContentType}) and malformed JSON (400). An empty body
 * reads as `undefined`. A refused body is read to its end and dropped (bounded), so the client
 * reads the refusal instead of a reset connection.
 */
export async function readJsonBody(request: IncomingMessage, limit: number): Promise<unknown> {
  const declared = Number(request.headers['content-length']);
  try {
    checkJsonContentType(request);
    if (Number.isFinite(declared) && declared > limit) throw tooLarge(limit);
  } catch (error) {
    discardBody(request);
    throw error;
  }
  if (request.readableEnded) return undefined;
  const text = await new Promise<string>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        // Not request.destroy(): that resets the socket before the 413 can be read.
        stop();
        chunks.length = 0;
        discardBody(request);
        reject(tooLarge(limit));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      stop();
      resolve(Buffer.concat(chunks, size).toString('utf8'));
    };
    const onError = (error: Error) => {
      stop();
      reject(error);
    };
    // The client went away mid-body: the handler sees its abort signal and answers nobody.
    const onClose = () => {
      stop();
      if (!request.complete) reject(new Error('the request body was not received to its end'));
    };
    const stop = () => {
      request.off('data', onData);
      request.off('end', onEnd);
      request.off('error', onError);
      request.off('close', onClose);
    };
    request.on('data', onData);
    request.on('end', onEnd);
    request.on('error', onError);
    request.on('close', onClose);
  });
  if (text.length === 0) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new ServiceError('invalid_request', 'The request body is not valid JSON.', { status: 400 });
  }
}

/**
 * A body sent to a JSON route must be declared `application/json` (parameters allowed, charset
 * only utf-8) or a `+json` type; anything else (text/plain, a form, multipart) is 400
 * `invalid_request` naming the type to send, instead of being read as JSON. A request without a
 * body needs no Content-Type.
 */
export function checkJsonContentType(request: IncomingMessage): void {
  const hasBody = request.headers['transfer-encoding'] !== undefined || Number(request.headers['content-length'] ?? 0) > 0;
  if (!hasBody) return;
  const header = request.headers['content-type'];
  if (header === undefined) throw wrongType('no Content-Type');
  const [type = '', ...parameters] = header.split(';').map((part) => part.trim().toLowerCase());
  const isJson = type === 'application/json' || /^application\/[a-z0-9!#$&^_.-]+\+json$/.test(type);
  const charset = parameters.find((parameter) => parameter.startsWith('charset='))?.slice('charset='.length).replace(/^"|"$/g, '');
  if (!isJson) throw wrongType(`Content-Type ${JSON.stringify(header.slice(0, 100))}`);
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') throw wrongType(`charset ${JSON.stringify(charset.slice(0, 40))}`);
}

function wrongType(sent: string): ServiceError {
  return new ServiceError('invalid_request', `This endpoint takes a JSON body: send it as Content-Type: application/json (UTF-8); the request had ${sent}.`, { status: 400 });
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
