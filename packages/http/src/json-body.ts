import { ServiceError } from '@memory-agents/core';
import type { ApiRequest } from './request.js';

/** The 413 of a JSON body over `limit` bytes (refused while it streams, by either bridge). */
export function jsonBodyTooLarge(limit: number): ServiceError {
  return new ServiceError('payload_too_large', `The JSON request body is larger than ${limit} bytes.`);
}

/** Parses a JSON body's text; an empty body reads as `undefined`, malformed JSON is 400. */
export function parseJsonText(text: string): unknown {
  if (text === '') return undefined;
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
export function checkJsonContentType(header: string | undefined, hasBody: boolean): void {
  if (!hasBody) return;
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

/**
 * Reads `chunks` to their end into one buffer, throwing `tooLarge()` as soon as more than `limit`
 * bytes arrived (the iteration is left there, nothing past the limit is kept).
 */
export async function readCapped(chunks: AsyncIterable<Uint8Array>, limit: number, tooLarge: () => Error): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of chunks) {
    size += chunk.byteLength;
    if (size > limit) throw tooLarge();
    parts.push(chunk);
  }
  if (parts.length === 1) return parts[0]!;
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const part of parts) {
    bytes.set(part, offset);
    offset += part.byteLength;
  }
  return bytes;
}

/**
 * Reads a request's JSON body (both bridges): a body middleware already parsed, else the stream,
 * refusing a body not declared as JSON (400), more than `limit` bytes while it streams (413) and
 * malformed JSON (400). An empty body reads as `undefined`. A refused body is discarded so the
 * client reads the refusal.
 */
export async function readJsonBody(request: ApiRequest, limit: number): Promise<unknown> {
  const parsed = request.body.alreadyRead(limit);
  if (parsed) return parsed.value;
  try {
    checkJsonContentType(request.headers['content-type'], request.body.hasBody);
    const declared = Number(request.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) throw jsonBodyTooLarge(limit);
    const chunks = request.body.chunks('json');
    if (chunks === null) return undefined;
    return parseJsonText(new TextDecoder().decode(await readCapped(chunks, limit, () => jsonBodyTooLarge(limit))));
  } catch (error) {
    request.body.discard();
    throw error;
  }
}
