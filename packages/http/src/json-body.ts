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
