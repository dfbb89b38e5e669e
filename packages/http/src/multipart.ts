import { getMultipartBoundary, MaxFileSizeExceededError, MaxPartsExceededError, MaxTotalSizeExceededError, MultipartParseError, MultipartParser, type MultipartPart } from '@remix-run/multipart-parser';
import { ServiceError, type FileUpload } from '@memory-agents/core';
import type { ApiRequest } from './request.js';
import type { ParsedUpload, ReadMultipartOptions } from './route.js';

/** Bytes a form may carry besides its file: boundaries, part headers and the few short fields. */
export const MULTIPART_OVERHEAD_BYTES = 64 * 1024;
/** Longest text field value. */
export const MAX_FIELD_BYTES = 1024;
/** Longest header block of one part. */
const MAX_PART_HEADER_BYTES = 8 * 1024;

const invalid = (message: string) => new ServiceError('invalid_request', message, { status: 400 });

/**
 * Reads a `multipart/form-data` body (both bridges, over the body's byte chunks, with the Web
 * streaming parser `@remix-run/multipart-parser`) under hard limits: exactly one file part named
 * `file` (a second file, an unknown field, more parts or a longer field value than allowed is
 * 400), the file refused with 413 `tooLargeCode` as soon as it passes `maxFileBytes`. Never holds
 * more than the limit (plus the small form overhead) in memory. A refused body is discarded so the
 * client reads the error response instead of a reset connection.
 */
export async function readMultipart(request: ApiRequest, options: ReadMultipartOptions): Promise<ParsedUpload> {
  try {
    return await parseUpload(request, options);
  } catch (error) {
    request.body.discard();
    throw error;
  }
}

async function parseUpload(request: ApiRequest, options: ReadMultipartOptions): Promise<ParsedUpload> {
  const tooLarge = () =>
    new ServiceError(
      options.tooLargeCode,
      options.tooLargeCode === 'document_too_large'
        ? `The document is larger than ${options.maxFileBytes} bytes, the size limit; split it.`
        : `The image is larger than ${options.maxFileBytes} bytes, the size limit.`,
    );
  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && declared > options.maxFileBytes + MULTIPART_OVERHEAD_BYTES) throw tooLarge();
  const contentType = request.headers['content-type'] ?? '';
  const boundary = /^multipart\/form-data\s*(;|$)/i.test(contentType) ? getMultipartBoundary(contentType) : null;
  if (!boundary) throw invalid('The body must be multipart/form-data with a boundary, holding the file as the `file` field.');
  const chunks = request.body.chunks('upload');
  if (chunks === null) throw invalid('The multipart body is malformed.');

  const parser = new MultipartParser(boundary, {
    maxHeaderSize: MAX_PART_HEADER_BYTES,
    maxFileSize: options.maxFileBytes,
    // The file and the allowed fields; one more part is refused as it starts.
    maxParts: options.fields.length + 1,
    maxTotalSize: options.maxFileBytes + MULTIPART_OVERHEAD_BYTES,
  });
  const fields: Record<string, string> = {};
  let file: FileUpload | null = null;
  const take = (part: MultipartPart) => {
    const name = part.name ?? '';
    if (part.isFile) {
      if (name !== 'file') throw invalid(`Unexpected file field \`${name}\`; send the document as the \`file\` field.`);
      if (file !== null) throw invalid('The form may carry one file only.');
      // A part without its own Content-Type is text/plain (RFC 7578 4.4), as busboy read it before.
      file = { filename: part.filename ?? 'document', mediaType: part.mediaType ?? 'text/plain', data: part.bytes };
      return;
    }
    if (!options.fields.includes(name)) throw invalid(`Unknown form field \`${name}\`; allowed: file${options.fields.map((f) => `, ${f}`).join('')}.`);
    if (part.size > MAX_FIELD_BYTES || name.length > 100) throw invalid(`The form field \`${name}\` is too long.`);
    if (name in fields) throw invalid(`The form field \`${name}\` is sent twice.`);
    fields[name] = part.text;
  };
  try {
    for await (const chunk of chunks) for (const part of parser.write(chunk)) take(part);
    parser.finish();
  } catch (error) {
    if (error instanceof MaxFileSizeExceededError || error instanceof MaxTotalSizeExceededError) throw tooLarge();
    if (error instanceof MaxPartsExceededError) throw invalid('The form has more parts than allowed.');
    if (error instanceof MultipartParseError) throw invalid('The multipart body is malformed.');
    throw error;
  }
  return { file, fields };
}
