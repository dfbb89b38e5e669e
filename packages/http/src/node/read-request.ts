import type { IncomingMessage } from 'node:http';
import { checkJsonContentType as checkType, jsonBodyTooLarge as tooLarge, parseJsonText } from '../json-body.js';
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
  return parseJsonText(text);
}

/** The Content-Type rule of JSON routes (see `checkJsonContentType` in json-body.ts) on a node request. */
export function checkJsonContentType(request: IncomingMessage): void {
  const hasBody = request.headers['transfer-encoding'] !== undefined || Number(request.headers['content-length'] ?? 0) > 0;
  checkType(request.headers['content-type'], hasBody);
}

/** Lower-cased single-valued headers (repeated headers are joined by ", " as Node does). */
export function headerRecord(request: IncomingMessage): Record<string, string | undefined> {
  const headers: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(request.headers)) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  return headers;
}
