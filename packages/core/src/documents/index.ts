export { convertDocument, inspectDocument, type ConvertDocumentOptions } from './convert-document.js';
export { detectFormat, type DetectedFormat } from './detect-format.js';
export {
  DEFAULT_CONVERT_TIMEOUT_MS,
  DEFAULT_FIGURE_SCALE,
  DEFAULT_MAX_FIGURES,
  DEFAULT_MAX_OCR_BYTES,
  DEFAULT_MAX_OCR_PAGES,
  DEFAULT_MAX_PAGES,
  DEFAULT_MAX_TEXT_CHARS,
  DEFAULT_MAX_UNCOMPRESSED_BYTES,
  DEFAULT_MIN_FIGURE_SIZE,
  DEFAULT_OCR_SCALE,
  type ConvertDocumentLimits,
} from './limits.js';
export type { BlockKind, ConvertedDocument, DocFormat, DocumentBlock, DocumentFigure, DocumentInspection } from './types.js';
