import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import busboy from 'busboy';
import { ServiceError, type FileUpload } from '@memory-agents/core';
import type { ParsedUpload, ReadMultipartOptions } from '../route.js';
import { discardBody } from './discard-body.js';

/**
 * What a multipart body is read from: a node `IncomingMessage`, or a `Readable` made from a Web
 * request's body (`Readable.fromWeb`) carrying that request's headers.
 */
export type MultipartSource = Readable & { headers: IncomingHttpHeaders; socket?: { destroy(): void } | null };

/** Bytes a form may carry besides its file: boundaries, part headers and the few short fields. */
export const MULTIPART_OVERHEAD_BYTES = 64 * 1024;
/** Longest text field value. */
export const MAX_FIELD_BYTES = 1024;

const invalid = (message: string) => new ServiceError('invalid_request', message, { status: 400 });

/**
 * Reads a `multipart/form-data` body with hard limits: exactly one file part named `file` (a
 * second file, an unknown field, more parts or a longer field value than allowed is 400), and the
 * file refused with 413 as soon as it passes `maxFileBytes`. Never holds more than the limit in
 * memory. After a refusal the rest of the body is drained (not buffered) so the client reads the
 * error response instead of a reset connection.
 */
export function readMultipart(request: MultipartSource, options: ReadMultipartOptions): Promise<ParsedUpload> {
  const tooLarge = () =>
    new ServiceError(
      options.tooLargeCode,
      options.tooLargeCode === 'document_too_large'
        ? `The document is larger than ${options.maxFileBytes} bytes, the size limit; split it.`
        : `The image is larger than ${options.maxFileBytes} bytes, the size limit.`,
    );
  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && declared > options.maxFileBytes + MULTIPART_OVERHEAD_BYTES) {
    discardBody(request);
    return Promise.reject(tooLarge());
  }
  let parser: busboy.Busboy;
  try {
    // busboy throws synchronously on a missing boundary or a content type it does not parse.
    parser = busboy({
      headers: request.headers,
      limits: {
        files: 1,
        fields: options.fields.length,
        // busboy emits `partsLimit` when the count reaches the limit: one more than file + fields.
        parts: options.fields.length + 2,
        fieldNameSize: 100,
        fieldSize: MAX_FIELD_BYTES,
        fileSize: options.maxFileBytes,
        headerPairs: 20,
      },
    });
  } catch {
    discardBody(request);
    return Promise.reject(invalid('The body must be multipart/form-data with a boundary, holding the file as the `file` field.'));
  }

  return new Promise<ParsedUpload>((resolve, reject) => {
    const fields: Record<string, string> = {};
    let file: FileUpload | null = null;
    let pending = 0;
    let closed = false;
    let settled = false;

    const fail = (error: ServiceError) => {
      if (settled) return;
      settled = true;
      request.unpipe(parser);
      parser.removeAllListeners();
      parser.on('error', () => undefined);
      discardBody(request);
      reject(error);
    };
    const finish = () => {
      if (settled || !closed || pending > 0) return;
      settled = true;
      resolve({ file, fields });
    };

    parser.on('file', (name, stream, info) => {
      if (name !== 'file') {
        stream.resume();
        fail(invalid(`Unexpected file field \`${name}\`; send the document as the \`file\` field.`));
        return;
      }
      pending++;
      const chunks: Buffer[] = [];
      let size = 0;
      stream.on('data', (chunk: Buffer) => {
        size += chunk.length;
        chunks.push(chunk);
      });
      stream.on('limit', () => fail(tooLarge()));
      stream.on('error', () => fail(invalid('The file part could not be read.')));
      stream.on('end', () => {
        pending--;
        if (settled) return;
        file = { filename: info.filename ?? 'document', mediaType: info.mimeType || null, data: new Uint8Array(Buffer.concat(chunks, size)) };
        finish();
      });
    });
    parser.on('field', (name, value, info) => {
      if (!options.fields.includes(name)) return fail(invalid(`Unknown form field \`${name}\`; allowed: file${options.fields.map((f) => `, ${f}`).join('')}.`));
      if (info.valueTruncated || info.nameTruncated) return fail(invalid(`The form field \`${name}\` is too long.`));
      if (name in fields) return fail(invalid(`The form field \`${name}\` is sent twice.`));
      fields[name] = value;
    });
    parser.on('filesLimit', () => fail(invalid('The form may carry one file only.')));
    parser.on('fieldsLimit', () => fail(invalid('The form has more fields than allowed.')));
    parser.on('partsLimit', () => fail(invalid('The form has more parts than allowed.')));
    parser.on('error', () => fail(invalid('The multipart body is malformed.')));
    parser.on('close', () => {
      closed = true;
      finish();
    });
    request.on('aborted', () => fail(invalid('The upload was aborted by the client.')));
    // A Web body that errors (the client went away) errors its Readable instead.
    request.on('error', () => fail(invalid('The upload was aborted by the client.')));
    request.pipe(parser);
  });
}
