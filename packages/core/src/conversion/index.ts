export { decodeText, detectFormat, type DetectedFormat } from './detect-format.js';
export { figureBlockText } from './figure-text.js';
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
  checkpoint,
  resolveLimits,
  timeLimitError,
  type ConvertDocumentLimits,
  type ResolvedLimits,
} from './limits.js';
export { TEXT_FORMATS, checkConvertedText, textDocumentConverter, textFormatBlocks } from './text-document-converter.js';
export { readZipEntries, type ZipEntry } from './zip-entries.js';
