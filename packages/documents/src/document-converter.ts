import type { ConvertDocumentLimits, DocumentConverter } from '@memory-agents/core';
import type { DocFormat } from '@memory-agents/core/adapter';
import { z } from 'zod';
import { convertDocument, inspectDocument } from './convert-document.js';

const count = z.number().int().min(0).optional();
const positive = z.number().positive().optional();
const optionsSchema = z.strictObject({
  limits: z
    .strictObject({
      maxPages: count,
      maxOcrPages: count,
      maxOcrBytes: count,
      maxFigures: count,
      minFigureSize: z.number().min(0).optional(),
      maxTextChars: count,
      maxUncompressedBytes: count,
      timeoutMs: positive,
      ocrScale: positive,
      figureScale: positive,
    })
    .optional(),
});

/** Options of {@link documentConverter}. */
export type DocumentConverterOptions = {
  /**
   * Budgets under every request's own `limits` (a field the request sets wins).
   * @default the `DEFAULT_*` constants of `@memory-agents/core`
   */
  limits?: ConvertDocumentLimits;
};

/** Every format {@link documentConverter} reads. */
export const DOCUMENT_FORMATS = ['pdf', 'docx', 'html', 'markdown', 'text', 'code', 'csv', 'json'] as const satisfies readonly DocFormat[];

/**
 * The full `DocumentConverter`: PDF (text layer in reading order, OCR of scanned pages through the
 * request's `ocr` port, figures cropped as PNGs), Word (.docx, with pictures), HTML (main content
 * only) and the text formats core reads itself (Markdown, text, code, CSV, JSON).
 * Synchronous and without I/O; throws a `ZodError` for options that are not valid (an unknown
 * field, a negative budget).
 *
 * @example
 * ```ts
 * import { createMemoryService, inMemoryStore } from '@memory-agents/core';
 * import { documentConverter } from '@memory-agents/documents';
 *
 * const service = createMemoryService({ store: inMemoryStore(), documentConverter: documentConverter() });
 * ```
 */
export function documentConverter(options: DocumentConverterOptions = {}): DocumentConverter {
  optionsSchema.parse(options);
  const limitsOf = (limits: ConvertDocumentLimits | undefined): ConvertDocumentLimits => ({ ...options.limits, ...limits });
  return {
    specificationVersion: 'v1',
    id: 'memory-agents-documents',
    formats: DOCUMENT_FORMATS,
    inspect: ({ bytes, filename, limits, signal }) => inspectDocument(bytes, filename, { limits: limitsOf(limits), ...(signal ? { signal } : {}) }),
    convert: ({ bytes, filename, limits, signal, ocr }) =>
      convertDocument(bytes, { filename, limits: limitsOf(limits), ...(signal ? { signal } : {}), ...(ocr ? { ocr } : {}) }),
  };
}
