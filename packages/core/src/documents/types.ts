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

/** The result of {@link convertDocument}. */
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

/** The result of {@link inspectDocument}. */
export type DocumentInspection = {
  format: DocFormat;
  mediaType: string;
  pageCount: number | null;
  /** 1-based pages that have no text layer but show an image (a scan); they need OCR. */
  pagesNeedingOcr: number[];
};
