import { type ConvertDocumentLimits, type Ocr } from '@memory-agents/core';
import {
  checkConvertedText,
  conversionCheckpoint as checkpoint,
  conversionTimeLimitError as timeLimitError,
  decodeText,
  detectFormat,
  resolveConvertLimits as resolveLimits,
  textFormatBlocks,
  type ConvertedDocument,
  type DocumentBlock,
  type DocumentInspection,
  type ResolvedConvertLimits as ResolvedLimits,
} from '@memory-agents/core/adapter';
import { convertDocx } from './docx-to-blocks.js';
import { htmlToBlocks } from './html-to-blocks.js';
import { convertPdf, inspectPdf } from './pdf-to-blocks.js';

/** Options of {@link convertDocument}. */
export type ConvertDocumentOptions = {
  /** The uploaded file name; only a hint for the format (the bytes decide). */
  filename: string;
  /**
   * Text recognition for scanned pages and for text inside figures. Without it, a document whose
   * pages need OCR fails with `document_needs_ocr`, and figures carry no recognised text.
   */
  ocr?: Ocr;
  /** Cancels the conversion; the returned promise then rejects with `signal.reason`. */
  signal?: AbortSignal;
  /** Resource budgets; every field defaults to the matching `DEFAULT_*` constant. */
  limits?: ConvertDocumentLimits;
};

/**
 * Races `work` against the caller's signal and the wall-clock budget, so a stuck converter never
 * hangs the caller. The timeout maps to `document_too_complex` (a converter resource limit).
 */
async function withBudget<T>(work: (signal: AbortSignal, deadline: number) => Promise<T>, limits: ResolvedLimits, outer: AbortSignal | undefined): Promise<T> {
  outer?.throwIfAborted();
  const deadline = Date.now() + limits.timeoutMs;
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const onAbort = (): void => controller.abort(outer?.reason);
  outer?.addEventListener('abort', onAbort, { once: true });
  const stopped = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort(timeLimitError(limits));
    }, limits.timeoutMs);
    controller.signal.addEventListener('abort', () => reject(controller.signal.reason), { once: true });
  });
  stopped.catch(() => undefined);
  try {
    const running = work(controller.signal, deadline);
    // When the budget wins the race, the work still settles later; its outcome is no longer wanted.
    running.catch(() => undefined);
    return await Promise.race([running, stopped]);
  } catch (error) {
    if (controller.signal.aborted) throw controller.signal.reason;
    throw error;
  } finally {
    clearTimeout(timer);
    outer?.removeEventListener('abort', onAbort);
  }
}

/**
 * Converts an uploaded document into blocks in reading order, with figures (PDF image and
 * vector-drawing regions, DOCX pictures) as PNGs described inline by `figure` blocks.
 *
 * Contract:
 * - The format comes from {@link detectFormat}; unsupported bytes throw `unsupported_document`.
 * - MUST be deterministic for the same bytes, options and OCR answers.
 * - MUST NOT hang: the conversion is bounded by `limits.timeoutMs` (-> `document_too_complex`) and
 *   stops when `signal` aborts (rejecting with `signal.reason`).
 * - Every failure is a `ServiceError` with a document code (see the spec's Errors/Codes):
 *   `unsupported_document`, `empty_document`, `encrypted_document`, `malformed_document`,
 *   `document_needs_ocr`, `ocr_failed`, `ingestion_failed`, `document_too_complex`,
 *   `document_too_many_pages`, `document_too_large_for_ocr`. A `ServiceError` the OCR port throws
 *   itself (e.g. `ocr_busy`) passes through unchanged.
 *
 * @example
 * const doc = await convertDocument(bytes, { filename: 'paper.pdf', ocr: tesseractOcr() });
 * const pieces = chunkDocument(doc.blocks, { strategy: 'auto', maxChars: 2000, overlapChars: 200 });
 */
export async function convertDocument(bytes: Uint8Array, options: ConvertDocumentOptions): Promise<ConvertedDocument> {
  const limits = resolveLimits(options.limits);
  const detected = detectFormat(bytes, options.filename);
  const base = { format: detected.format, mediaType: detected.mediaType };
  return withBudget(async (signal, deadline) => {
    if (detected.format === 'pdf') {
      const pdf = await convertPdf(bytes, { ocr: options.ocr, signal, deadline, limits });
      checkConvertedText(pdf.blocks, limits);
      return { ...base, ...pdf };
    }
    if (detected.format === 'docx') {
      const docx = await convertDocx(bytes, { limits, ocr: options.ocr, signal, deadline });
      checkConvertedText(docx.blocks, limits);
      return { ...base, pageCount: null, ...docx, ocrPages: [] };
    }
    // HTML here; the text formats (Markdown, text, code, CSV, JSON) as core reads them.
    const blocks: DocumentBlock[] = detected.format === 'html' ? htmlToBlocks(decodeText(bytes) ?? '') : (textFormatBlocks(detected, bytes) ?? []);
    checkpoint(signal, deadline, limits);
    checkConvertedText(blocks, limits);
    return { ...base, pageCount: null, blocks, figures: [], figuresDropped: 0, ocrPages: [] };
  }, limits, options.signal);
}

/**
 * Cheaply reports a document's format, page count and the pages that need OCR, without
 * rendering, OCR or full conversion, so the service can decide to defer OCR work. For a PDF it
 * reads the text layer (milliseconds per page) and, for pages without readable text only, the
 * painted images (pdf.js decodes them: roughly 0.1-0.3 s per full-page scan).
 * Throws `unsupported_document` and, for PDFs, `encrypted_document` / `malformed_document` /
 * `ingestion_failed` / `document_too_complex` like {@link convertDocument}.
 */
export async function inspectDocument(
  bytes: Uint8Array,
  filename: string,
  options: { signal?: AbortSignal; limits?: ConvertDocumentLimits } = {},
): Promise<DocumentInspection> {
  options.signal?.throwIfAborted();
  const limits = resolveLimits(options.limits);
  const detected = detectFormat(bytes, filename);
  if (detected.format !== 'pdf') return { format: detected.format, mediaType: detected.mediaType, pageCount: null, pagesNeedingOcr: [] };
  const pdf = await withBudget((signal, deadline) => inspectPdf(bytes, limits, signal, deadline), limits, options.signal);
  return { format: 'pdf', mediaType: detected.mediaType, pageCount: pdf.pageCount, pagesNeedingOcr: pdf.pagesNeedingOcr };
}
