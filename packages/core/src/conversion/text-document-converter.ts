import { ServiceError, isServiceError } from '../errors/index.js';
import type { ConvertedDocument, DocFormat, DocumentBlock, DocumentConverter } from '../ports/document-converter.js';
import { decodeText, detectFormat, type DetectedFormat } from './detect-format.js';
import { checkpoint, resolveLimits, type ResolvedLimits } from './limits.js';
import { markdownToBlocks } from './markdown-to-blocks.js';
import { codeToBlocks, csvToBlocks, jsonToBlocks, plainTextToBlocks } from './text-to-blocks.js';

/** The formats core reads without a converter package: UTF-8/UTF-16 text of every kind but HTML. */
export const TEXT_FORMATS = ['markdown', 'text', 'code', 'csv', 'json'] as const satisfies readonly DocFormat[];

const FORMAT_NAMES: Partial<Record<DocFormat, string>> = { pdf: 'a PDF', docx: 'a Word document (.docx)', html: 'an HTML page' };

/**
 * Blocks of a text-format document (`markdown`, `text`, `code`, `csv`, `json`), from bytes
 * {@link detectFormat} classified as `detected`. Returns `null` for the formats that need a
 * converter package (`pdf`, `docx`, `html`).
 */
export function textFormatBlocks(detected: DetectedFormat, bytes: Uint8Array): DocumentBlock[] | null {
  // detectFormat already proved the bytes decode; `?? ''` only satisfies the type.
  const text = (): string => decodeText(bytes) ?? '';
  switch (detected.format) {
    case 'markdown':
      return markdownToBlocks(text());
    case 'code':
      return codeToBlocks(text(), detected.language);
    case 'csv':
      return csvToBlocks(text());
    case 'json':
      return jsonToBlocks(text());
    case 'text':
      return plainTextToBlocks(text());
    default:
      return null;
  }
}

/**
 * The checks every conversion ends with: at most `limits.maxTextChars` characters of text
 * (`document_too_complex`), and at least one block with a letter or digit outside figures
 * (`empty_document`).
 */
export function checkConvertedText(blocks: readonly DocumentBlock[], limits: ResolvedLimits): void {
  let total = 0;
  let readable = false;
  for (const block of blocks) {
    total += block.text.length;
    if (!readable && block.kind !== 'figure' && /[\p{L}\p{N}]/u.test(block.text)) readable = true;
  }
  if (total > limits.maxTextChars) {
    throw new ServiceError('document_too_complex', `The document yields ${total} characters of text; the converter keeps at most ${limits.maxTextChars}. Split it.`);
  }
  if (!readable) throw new ServiceError('empty_document', 'The document has no readable text; check that it is the file you meant to send.');
}

/** What core alone reads, for the refusal sentences. */
const TEXT_ONLY_ADVICE = 'send a Markdown, text, source code, CSV or JSON file (PDF, Word and HTML need a document converter: `documentConverter()` from @memory-agents/documents).';

function detectText(bytes: Uint8Array, filename: string): DetectedFormat {
  let detected: DetectedFormat;
  try {
    detected = detectFormat(bytes, filename);
  } catch (error) {
    // detectFormat's sentence lists every format the full converter reads; say what core reads.
    if (isServiceError(error) && error.code === 'unsupported_document') {
      throw new ServiceError('unsupported_document', error.message.replace(/; send a .*$/, `; ${TEXT_ONLY_ADVICE}`), { cause: error });
    }
    throw error;
  }
  const name = FORMAT_NAMES[detected.format];
  if (name !== undefined) {
    throw new ServiceError(
      'unsupported_document',
      `This file is ${name}, and this service has no document converter for it; it reads Markdown, text, source code, CSV and JSON. ` +
        'Pass `documentConverter: documentConverter()` from @memory-agents/documents to createMemoryService to read PDF, Word and HTML files.',
    );
  }
  return detected;
}

/**
 * The converter core uses when `createMemoryService` gets no `documentConverter`: it reads the text
 * formats ({@link TEXT_FORMATS}) with no dependency, and refuses PDF, Word and HTML with
 * `unsupported_document` and a sentence that names `@memory-agents/documents`.
 *
 * @example
 * ```ts
 * const doc = await textDocumentConverter().convert({ bytes, filename: 'notes.md' });
 * ```
 */
export function textDocumentConverter(): DocumentConverter {
  return {
    specificationVersion: 'v1',
    id: 'memory-agents-text',
    formats: TEXT_FORMATS,
    async inspect({ bytes, filename, signal }) {
      signal?.throwIfAborted();
      const detected = detectText(bytes, filename);
      return { format: detected.format, mediaType: detected.mediaType, pageCount: null, pagesNeedingOcr: [] };
    },
    async convert({ bytes, filename, signal, limits }): Promise<ConvertedDocument> {
      signal?.throwIfAborted();
      const resolved = resolveLimits(limits);
      const deadline = Date.now() + resolved.timeoutMs;
      const detected = detectText(bytes, filename);
      const blocks = textFormatBlocks(detected, bytes) ?? [];
      checkpoint(signal, deadline, resolved);
      checkConvertedText(blocks, resolved);
      return { format: detected.format, mediaType: detected.mediaType, pageCount: null, blocks, figures: [], figuresDropped: 0, ocrPages: [] };
    },
  };
}
