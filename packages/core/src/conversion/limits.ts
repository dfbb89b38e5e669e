import { ServiceError } from '../errors/index.js';
import type { ConvertDocumentLimits } from '../ports/document-converter.js';

export type { ConvertDocumentLimits };

/** Default for {@link ConvertDocumentLimits.maxPages}: pages a PDF may have at all. */
export const DEFAULT_MAX_PAGES = 2000;
/** Default for {@link ConvertDocumentLimits.maxOcrPages}: scanned pages text recognition reads in one upload. */
export const DEFAULT_MAX_OCR_PAGES = 100;
/**
 * Default for {@link ConvertDocumentLimits.maxOcrBytes}: file size above which a document that needs
 * OCR is refused (8 MiB, under the 10 MB upload limit: dense scans that big take minutes to read).
 */
export const DEFAULT_MAX_OCR_BYTES = 8 * 1024 * 1024;
/** Default for {@link ConvertDocumentLimits.maxFigures}: figures kept per document. */
export const DEFAULT_MAX_FIGURES = 20;
/** Default for {@link ConvertDocumentLimits.minFigureSize}: smallest figure side, in PDF points (1/72 inch). */
export const DEFAULT_MIN_FIGURE_SIZE = 48;
/** Default for {@link ConvertDocumentLimits.maxTextChars}: characters of converted text a document may yield. */
export const DEFAULT_MAX_TEXT_CHARS = 20_000_000;
/** Default for {@link ConvertDocumentLimits.maxUncompressedBytes}: inflated size of a DOCX archive (zip-bomb guard). */
export const DEFAULT_MAX_UNCOMPRESSED_BYTES = 200 * 1024 * 1024;
/** Default for {@link ConvertDocumentLimits.timeoutMs}: wall-clock budget of one conversion. */
export const DEFAULT_CONVERT_TIMEOUT_MS = 300_000;
/** Default for {@link ConvertDocumentLimits.ocrScale}: render scale of scanned pages for OCR (216 dpi). */
export const DEFAULT_OCR_SCALE = 3;
/** Default for {@link ConvertDocumentLimits.figureScale}: render scale of figure crops (144 dpi). */
export const DEFAULT_FIGURE_SCALE = 2;

/** {@link ConvertDocumentLimits} with every default filled in. */
export type ResolvedLimits = Required<ConvertDocumentLimits>;

/** The error of a conversion that ran past `limits.timeoutMs`. */
export function timeLimitError(limits: ResolvedLimits): ServiceError {
  return new ServiceError(
    'document_too_complex',
    `The document took longer than ${Math.max(1, Math.round(limits.timeoutMs / 1000))} s to convert, the converter's time limit; split it or send a text version.`,
  );
}

/**
 * A checkpoint for long conversions: throws the signal's reason when aborted, and the time-limit
 * error once `deadline` (epoch ms) has passed. pdf.js works in long synchronous stretches in which
 * timers cannot fire, so converters call this between steps rather than rely on a timer alone.
 */
export function checkpoint(signal: AbortSignal | undefined, deadline: number, limits: ResolvedLimits): void {
  signal?.throwIfAborted();
  if (Date.now() > deadline) throw timeLimitError(limits);
}

/** Fills in the defaults (`DEFAULT_*`) of the limits a converter is given. */
export function resolveLimits(limits: ConvertDocumentLimits = {}): ResolvedLimits {
  return {
    maxPages: limits.maxPages ?? DEFAULT_MAX_PAGES,
    maxOcrPages: limits.maxOcrPages ?? DEFAULT_MAX_OCR_PAGES,
    maxOcrBytes: limits.maxOcrBytes ?? DEFAULT_MAX_OCR_BYTES,
    maxFigures: limits.maxFigures ?? DEFAULT_MAX_FIGURES,
    minFigureSize: limits.minFigureSize ?? DEFAULT_MIN_FIGURE_SIZE,
    maxTextChars: limits.maxTextChars ?? DEFAULT_MAX_TEXT_CHARS,
    maxUncompressedBytes: limits.maxUncompressedBytes ?? DEFAULT_MAX_UNCOMPRESSED_BYTES,
    timeoutMs: limits.timeoutMs ?? DEFAULT_CONVERT_TIMEOUT_MS,
    ocrScale: limits.ocrScale ?? DEFAULT_OCR_SCALE,
    figureScale: limits.figureScale ?? DEFAULT_FIGURE_SCALE,
  };
}
