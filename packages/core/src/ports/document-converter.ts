import type { Ocr } from './ocr.js';

/**
 * Canonical document formats (the spec's `doc_format` values this service converts).
 */
export type DocFormat = 'pdf' | 'docx' | 'html' | 'markdown' | 'text' | 'code' | 'csv' | 'json';

/** The kinds of block a converted document is made of. */
export type BlockKind = 'heading' | 'paragraph' | 'code' | 'table' | 'list' | 'figure';

/**
 * One unit of converted content, in reading order.
 *
 * - `text` is plain text (tables as rows `a | b`, lists as `- item` lines, figures as
 *   `[Figure (page N): caption. Text in figure: ...]`). It is never empty.
 * - `page` is the 1-based page the block came from, or `null` for formats without pages.
 * - `level` is set on headings only (1..6).
 * - `language` is set on code blocks when known (from the file extension or a fence).
 */
export type DocumentBlock = {
  kind: BlockKind;
  text: string;
  page: number | null;
  level?: number;
  language?: string;
};

/** A figure kept from a document: a PNG image (a page crop for PDFs) plus the text found for it. */
export type DocumentFigure = {
  /** 1-based page the figure is on, or `null` for formats without pages (DOCX). */
  page: number | null;
  /** PNG bytes of the crop. */
  png: Uint8Array;
  width: number;
  height: number;
  /** Caption found near the figure (`Figure 2. ...`), or `''`. */
  caption: string;
  /** Text recognised inside the figure, or `''` when no OCR port was given or nothing was read. */
  ocrText: string;
};

/** The result of {@link DocumentConverter.convert}. */
export type ConvertedDocument = {
  format: DocFormat;
  mediaType: string;
  /** Number of pages for paged formats (PDF), otherwise `null`. */
  pageCount: number | null;
  blocks: DocumentBlock[];
  /** Figures kept, in page order (top to bottom within a page); each one also appears as a `figure` block. */
  figures: DocumentFigure[];
  /** Figures found but left out because the figure budget was spent. */
  figuresDropped: number;
  /** Pages whose text came from OCR (1-based); empty for born-digital documents. */
  ocrPages: number[];
};

/** The result of {@link DocumentConverter.inspect}. */
export type DocumentInspection = {
  format: DocFormat;
  mediaType: string;
  pageCount: number | null;
  /** 1-based pages that have no text layer but show an image (a scan); they need OCR. */
  pagesNeedingOcr: number[];
};

/**
 * Resource budgets of one conversion. Every field is optional; the defaults are core's exported
 * `DEFAULT_*` constants (`resolveConvertLimits` fills them in).
 */
export type ConvertDocumentLimits = {
  /**
   * Pages a PDF may have; more -> `document_too_complex`.
   * @default DEFAULT_MAX_PAGES (2000)
   */
  maxPages?: number;
  /**
   * Pages needing OCR that one conversion reads; more -> `document_too_many_pages`.
   * @default DEFAULT_MAX_OCR_PAGES (100)
   */
  maxOcrPages?: number;
  /**
   * Largest file (bytes) whose scanned pages are read by OCR; larger -> `document_too_large_for_ocr`.
   * @default DEFAULT_MAX_OCR_BYTES (8 MiB)
   */
  maxOcrBytes?: number;
  /**
   * Figures kept per document; the rest are counted in `figuresDropped`.
   * @default DEFAULT_MAX_FIGURES (20)
   */
  maxFigures?: number;
  /**
   * Smallest width and height (PDF points) of an image region to count as a figure.
   * @default DEFAULT_MIN_FIGURE_SIZE (48)
   */
  minFigureSize?: number;
  /**
   * Characters of converted text a document may yield; more -> `document_too_complex`.
   * @default DEFAULT_MAX_TEXT_CHARS (20,000,000)
   */
  maxTextChars?: number;
  /**
   * Inflated size of a DOCX archive's entries; more -> `document_too_complex`.
   * @default DEFAULT_MAX_UNCOMPRESSED_BYTES (200 MiB)
   */
  maxUncompressedBytes?: number;
  /**
   * Wall-clock budget in milliseconds; exceeding it -> `document_too_complex`.
   * @default DEFAULT_CONVERT_TIMEOUT_MS (300,000)
   */
  timeoutMs?: number;
  /**
   * Render scale (1 = 72 dpi) of scanned pages sent to OCR.
   * @default DEFAULT_OCR_SCALE (3)
   */
  ocrScale?: number;
  /**
   * Render scale (1 = 72 dpi) of figure crops.
   * @default DEFAULT_FIGURE_SCALE (2)
   */
  figureScale?: number;
};

/** What {@link DocumentConverter.inspect} receives. */
export type DocumentInspectRequest = {
  bytes: Uint8Array;
  /** The uploaded file name; only a hint for the format (the bytes decide). */
  filename: string;
  limits?: ConvertDocumentLimits;
  signal?: AbortSignal;
};

/** What {@link DocumentConverter.convert} receives. */
export type DocumentConvertRequest = DocumentInspectRequest & {
  /**
   * Text recognition for scanned pages and for text inside figures. Without it, a document whose
   * pages need OCR fails with `document_needs_ocr`, and figures carry no recognised text.
   */
  ocr?: Ocr;
};

/**
 * Turns an uploaded file into blocks in reading order (the `observe-file` converter). The service
 * calls `inspect` first to decide whether the upload needs OCR (and whether that OCR runs in the
 * request or in the background), then `convert`, then chunks the blocks itself.
 *
 * Contract:
 * - `formats` lists the formats the converter reads. Bytes of any other format (and bytes of no
 *   supported format at all: images, archives, executables) MUST reject with
 *   `ServiceError('unsupported_document')` and a sentence naming what the file is, from both
 *   `inspect` and `convert`. The format is decided by the bytes; `filename` is only a hint.
 * - `convert` MUST resolve with at least one block with readable text, blocks in reading order,
 *   `page` 1-based on paged formats (PDF) and `null` on the others; a file without readable text
 *   MUST reject with `empty_document`.
 * - `inspect` MUST be cheap (no rendering, no OCR) and report the same `format` and `mediaType` as
 *   `convert` would, plus the pages that need OCR.
 * - Every failure MUST be a `ServiceError` with a document code (spec Errors/Codes):
 *   `unsupported_document`, `empty_document`, `encrypted_document`, `malformed_document`,
 *   `document_needs_ocr`, `ocr_failed`, `ingestion_failed`, `document_too_complex`,
 *   `document_too_many_pages`, `document_too_large_for_ocr`. A `ServiceError` the OCR port throws
 *   (e.g. `ocr_busy`) passes through unchanged. (The service maps anything else to
 *   `ingestion_failed`, but a converter should not rely on it.)
 * - `limits` MUST be honoured: more text than `maxTextChars`, more pages than `maxPages` or a run
 *   longer than `timeoutMs` reject with `document_too_complex`; more scanned pages than
 *   `maxOcrPages` with `document_too_many_pages`.
 * - An aborted `signal` MUST make the call reject with `signal.reason` (already aborted: before any
 *   work). The converter MUST NOT hang: it stops at `timeoutMs` even when the work it waits on does not.
 * - MUST be deterministic for the same bytes, limits and OCR answers, and MUST NOT reach the network.
 */
export type DocumentConverter = {
  readonly specificationVersion: 'v1';
  /** The converter's name, used in logs, e.g. `memory-agents-documents`. */
  readonly id: string;
  /** Formats this converter reads (a capability: the conformance suite tests each one). */
  readonly formats: readonly DocFormat[];
  inspect(request: DocumentInspectRequest): Promise<DocumentInspection>;
  convert(request: DocumentConvertRequest): Promise<ConvertedDocument>;
};
