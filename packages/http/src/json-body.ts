import { ServiceError } from '@memory-agents/core';

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
 * body needs no Content-Type. Both bridges call it before reading.
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
