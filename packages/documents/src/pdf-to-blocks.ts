import type { PDFParse } from 'pdf-parse';
import { ServiceError, isServiceError, type Ocr } from '@memory-agents/core';
import {
  conversionCheckpoint as checkpoint,
  figureBlockText,
  type DocumentBlock,
  type DocumentFigure,
  type ResolvedConvertLimits as ResolvedLimits,
} from '@memory-agents/core/adapter';
import { type Box, area, clip, groupBoxes, paintedBoxes } from './pdf-layout.js';
import { captionFor, captionLabel, ocrTextToBlocks, pageTextToBlocks, stripRunningLines } from './pdf-text.js';
import { recognize, recognizeFigure } from './figure-ocr.js';

/**
 * A page needs OCR when its text layer is mostly control characters (glyphs drawn without a
 * Unicode mapping), or has fewer readable characters than this while images cover
 * MIN_SCAN_COVERAGE of it (a scan, not an empty page with a logo).
 */
const MIN_TEXT_LAYER_CHARS = 16;
const MIN_SCAN_COVERAGE = 0.25;
/** An image region covering more than this share of the page is the page itself, not a figure. */
const MAX_FIGURE_COVERAGE = 0.8;
/** Image tiles closer than this (points) belong to the same figure. */
const FIGURE_GAP = 12;
/** Vector paths thinner than this (points) are rules and underlines, not drawing. */
const MIN_PATH_SIDE = 3;
/** A single vector path covering more than this share of the page is a frame or background. */
const MAX_PATH_COVERAGE = 0.5;
/** A region drawn only with vector paths needs at least this many of them to be a figure. */
const MIN_PATHS_PER_FIGURE = 3;
/** Boxes on one page beyond this are merged into one region without pairwise grouping. */
const MAX_BOXES_PER_PAGE = 2000;

/** Margin (points) added around a figure region so labels drawn as text next to the drawing are kept. */
const FIGURE_PADDING = 10;

/**
 * Figure regions of a page: images and vector paths grouped by proximity; a region must be at
 * least `minSize` points on each side, cover at most MAX_FIGURE_COVERAGE of the page, and hold an
 * image or MIN_PATHS_PER_FIGURE paths.
 */
function figureRegions(images: Box[], paths: Box[], pageArea: number, minSize: number): Box[] {
  const all = [...images, ...paths];
  const grouped =
    all.length > MAX_BOXES_PER_PAGE
      ? [all.reduce((union, box) => ({ x0: Math.min(union.x0, box.x0), y0: Math.min(union.y0, box.y0), x1: Math.max(union.x1, box.x1), y1: Math.max(union.y1, box.y1) }))]
      : groupBoxes(all, FIGURE_GAP);
  const inside = (box: Box, region: Box): boolean => box.x0 >= region.x0 && box.x1 <= region.x1 && box.y0 >= region.y0 && box.y1 <= region.y1;
  return grouped.filter((region) => {
    if (region.x1 - region.x0 < minSize || region.y1 - region.y0 < minSize) return false;
    if (area(region) / pageArea > MAX_FIGURE_COVERAGE) return false;
    return images.some((box) => inside(box, region)) || paths.filter((box) => inside(box, region)).length >= MIN_PATHS_PER_FIGURE;
  });
}

type PdfPage = {
  view: number[];
  rotate: number;
  getOperatorList(): Promise<{ fnArray: ArrayLike<number>; argsArray: ArrayLike<unknown> }>;
  getTextContent(): Promise<{ items: Array<{ str?: string; transform?: number[] }> }>;
  cleanup(): unknown;
};
type PdfDocument = { numPages: number; getPage(pageNumber: number): Promise<PdfPage> };

type PageAnalysis = {
  page: number;
  text: string;
  needsOcr: boolean;
  /** Figure regions (user space), top to bottom. */
  regions: Box[];
  pageBox: Box;
  rotate: number;
};

/** Maps whatever pdf.js / pdf-parse threw to the spec's document codes. */
export function mapPdfError(error: unknown): ServiceError {
  if (isServiceError(error)) return error;
  const name = error instanceof Error ? error.name : '';
  const message = error instanceof Error ? error.message : String(error);
  if (name === 'PasswordException') {
    return new ServiceError('encrypted_document', 'The PDF is protected by a password; remove the password and upload it again.', { cause: error });
  }
  if (name === 'InvalidPDFException' || name === 'FormatError' || name === 'MissingPDFException') {
    return new ServiceError('malformed_document', 'The PDF could not be read: its structure is damaged beyond repair; export it again.', { cause: error });
  }
  if (error instanceof RangeError && /allocation|memory|invalid (typed )?array length|too large/i.test(message)) {
    return new ServiceError('document_too_complex', 'The PDF needs more memory to convert than the converter allows; split it or send a text version.', { cause: error });
  }
  return new ServiceError('ingestion_failed', 'The PDF could not be converted: the PDF reader failed on it; export it again.', { cause: error });
}

async function openParser(bytes: Uint8Array): Promise<PDFParse> {
  // Loaded on first use: pdf.js and the canvas addon take about a second to load, which nobody
  // importing the core package for anything else should pay.
  const { PDFParse: Parser } = await import('pdf-parse');
  // pdf.js takes ownership of (transfers) the buffer it is given, so hand it a copy.
  return new Parser({ data: new Uint8Array(bytes), verbosity: 0, maxImageSize: 100_000_000, isEvalSupported: false, stopAtErrors: false });
}

function documentOf(parser: PDFParse): PdfDocument {
  // pdf-parse keeps the loaded pdf.js document in a private field; reading it avoids a second
  // parse for the operator lists (image geometry) that pdf-parse does not expose.
  const document = (parser as unknown as { doc?: PdfDocument }).doc;
  if (document === undefined) throw new ServiceError('ingestion_failed', 'The PDF reader did not load the document.');
  return document;
}

/** C0 control characters: what a font without a Unicode map leaves in the text layer. */
const CONTROL_CHARACTERS = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g;

/**
 * Reads a page's text layer: `text` with control characters turned into spaces, and whether the
 * layer is unusable (mostly control characters: glyphs without a Unicode mapping, readable only by OCR).
 */
function readTextLayer(raw: string): { text: string; readableChars: number; isGarbled: boolean } {
  const nonSpace = raw.replace(/\s+/g, '').length;
  const controls = (raw.match(CONTROL_CHARACTERS) ?? []).length;
  const text = raw.replace(CONTROL_CHARACTERS, ' ');
  const readable = text.replace(/\s+/g, '').length;
  return { text, readableChars: readable, isGarbled: nonSpace > 0 && controls / nonSpace > 0.3 };
}

/**
 * Reads every page's text layer and, where needed, its painted geometry. With `withFigures` off
 * (inspection), operator lists are read only for pages lacking readable text: they are what costs
 * (pdf.js decodes page images to build them), and text pages can neither need OCR nor matter.
 */
async function analyzePages(
  parser: PDFParse,
  limits: ResolvedLimits,
  signal: AbortSignal | undefined,
  deadline: number,
  withFigures: boolean,
): Promise<{ total: number; pages: PageAnalysis[] }> {
  const info = await parser.getInfo();
  const total = info.total;
  if (total > limits.maxPages) {
    throw new ServiceError('document_too_complex', `The PDF has ${total} pages; the converter reads at most ${limits.maxPages}. Split it into smaller files.`);
  }
  checkpoint(signal, deadline, limits);
  const text = await parser.getText({ pageJoiner: '' });
  const document = documentOf(parser);
  const pageTexts = stripRunningLines(Array.from({ length: total }, (_, index) => text.pages.find((entry) => entry.num === index + 1)?.text ?? ''));
  const pages: PageAnalysis[] = [];
  for (let number = 1; number <= total; number++) {
    checkpoint(signal, deadline, limits);
    const layer = readTextLayer(pageTexts[number - 1] ?? '');
    const page = await document.getPage(number);
    const [left = 0, bottom = 0, right = 612, top = 792] = page.view;
    const pageBox: Box = { x0: left, y0: bottom, x1: right, y1: top };
    const pageArea = Math.max(1, area(pageBox));
    const hasText = !layer.isGarbled && layer.readableChars >= MIN_TEXT_LAYER_CHARS;
    const painted = withFigures || !hasText ? paintedBoxes(await page.getOperatorList()) : { images: [], paths: [] };
    const boxes = painted.images.map((box) => clip(box, pageBox)).filter((box): box is Box => box !== null);
    // Vector drawing counts toward figures, but not hairlines (rules, underlines), page-size
    // frames and backgrounds, nor paths reaching off the page (clip fills).
    const paths = painted.paths.filter(
      (box) =>
        box.x0 >= pageBox.x0 - 2 &&
        box.y0 >= pageBox.y0 - 2 &&
        box.x1 <= pageBox.x1 + 2 &&
        box.y1 <= pageBox.y1 + 2 &&
        Math.min(box.x1 - box.x0, box.y1 - box.y0) >= MIN_PATH_SIDE &&
        area(box) / pageArea <= MAX_PATH_COVERAGE,
    );
    const coverage = boxes.reduce((sum, box) => sum + area(box), 0) / pageArea;
    const needsOcr = layer.isGarbled || (layer.readableChars < MIN_TEXT_LAYER_CHARS && coverage >= MIN_SCAN_COVERAGE);
    const regions = needsOcr || !withFigures ? [] : figureRegions(boxes, paths, pageArea, limits.minFigureSize);
    pages.push({ page: number, text: layer.text, needsOcr, regions, pageBox, rotate: page.rotate });
    page.cleanup();
  }
  return { total, pages };
}

/**
 * Reads a PDF's page count and which pages need OCR, without rendering or OCR.
 * Throws the same document codes as {@link convertPdf} for unreadable files.
 */
export async function inspectPdf(
  bytes: Uint8Array,
  limits: ResolvedLimits,
  signal?: AbortSignal,
  deadline = Number.POSITIVE_INFINITY,
): Promise<{ pageCount: number; pagesNeedingOcr: number[] }> {
  const parser = await openParser(bytes);
  try {
    const { total, pages } = await analyzePages(parser, limits, signal, deadline, false);
    return { pageCount: total, pagesNeedingOcr: pages.filter((page) => page.needsOcr).map((page) => page.page) };
  } catch (error) {
    signal?.throwIfAborted();
    throw mapPdfError(error);
  } finally {
    await parser.destroy().catch(() => undefined);
  }
}


async function renderPage(parser: PDFParse, page: number, scale: number): Promise<{ png: Uint8Array; width: number; height: number }> {
  const shot = await parser.getScreenshot({ partial: [page], scale, imageBuffer: true, imageDataUrl: false });
  const rendered = shot.pages[0];
  if (rendered === undefined) throw new ServiceError('ingestion_failed', `The PDF reader could not render page ${page}.`);
  return { png: rendered.data, width: rendered.width, height: rendered.height };
}

async function cropPng(png: Uint8Array, x: number, y: number, width: number, height: number): Promise<Uint8Array> {
  const { createCanvas, loadImage } = await import('@napi-rs/canvas');
  const image = await loadImage(Buffer.from(png));
  const canvas = createCanvas(width, height);
  const context = canvas.getContext('2d');
  context.fillStyle = '#ffffff';
  context.fillRect(0, 0, width, height);
  context.drawImage(image, x, y, width, height, 0, 0, width, height);
  return new Uint8Array(await canvas.encode('png'));
}

/** Caption labels on a page with their positions (user space baseline), from the text layer. */
async function captionAnchors(document: PdfDocument, pageNumber: number): Promise<CaptionAnchor[]> {
  const page = await document.getPage(pageNumber);
  const content = await page.getTextContent();
  const anchors: CaptionAnchor[] = [];
  const items = content.items.filter((item) => typeof item.str === 'string');
  for (let index = 0; index < items.length; index++) {
    const item = items[index];
    if (item === undefined || item.transform === undefined) continue;
    const joined = [item, items[index + 1], items[index + 2]].map((entry) => entry?.str ?? '').join('');
    const label = captionLabel(joined);
    if (label === null || !(item.str ?? '').trim().startsWith(label.slice(0, 3))) continue;
    anchors.push({ label, x: item.transform[4] ?? 0, y: item.transform[5] ?? 0 });
  }
  page.cleanup();
  return anchors;
}

type CaptionAnchor = { label: string; x: number; y: number };

/**
 * The caption label nearest a region: any caption below it (within 250 pt) first, else one just
 * above (within 80 pt, as tables are captioned); the caption must start left of the region's right edge
 * and at most 150 pt left of it (captions start at the column edge, figures are often centred).
 */
function nearestCaption(region: Box, anchors: CaptionAnchor[]): string | null {
  let best: { label: string; distance: number } | null = null;
  for (const anchor of anchors) {
    if (anchor.x < region.x0 - 150 || anchor.x > region.x1) continue;
    const below = region.y0 - anchor.y;
    const above = anchor.y - region.y1;
    let distance: number | null = null;
    if (below >= -8 && below <= 250) distance = below;
    else if (above >= -8 && above <= 80) distance = above + 250;
    if (distance !== null && (best === null || distance < best.distance)) best = { label: anchor.label, distance };
  }
  return best?.label ?? null;
}

/**
 * One figure per caption: regions that share their nearest caption are parts of one figure
 * (sub-figures (a), (b), ...) and are united; regions without a caption stay separate. Ordered
 * top to bottom, then left to right.
 */
function captionedFigures(regions: Box[], anchors: CaptionAnchor[]): Array<{ region: Box; label: string | null }> {
  const figures: Array<{ region: Box; label: string | null }> = [];
  for (const region of regions) {
    const label = nearestCaption(region, anchors);
    const same = label === null ? undefined : figures.find((figure) => figure.label === label);
    if (same === undefined) figures.push({ region: { ...region }, label });
    else {
      same.region = {
        x0: Math.min(same.region.x0, region.x0),
        y0: Math.min(same.region.y0, region.y0),
        x1: Math.max(same.region.x1, region.x1),
        y1: Math.max(same.region.y1, region.y1),
      };
    }
  }
  return figures.sort((a, b) => b.region.y1 - a.region.y1 || a.region.x0 - b.region.x0);
}


export type PdfConversion = {
  pageCount: number;
  blocks: DocumentBlock[];
  figures: DocumentFigure[];
  figuresDropped: number;
  ocrPages: number[];
};

/**
 * Converts a PDF: the text layer page by page; pages without one (or with unmapped glyphs) are
 * rendered and read by `ocr`; regions of raster images and vector drawing become figures (a crop
 * of the rendered page, the nearest "Figure N"/"Table N" caption, OCR of the crop), up to
 * `maxFigures`; each figure block is placed right after its caption's paragraph.
 */
export async function convertPdf(
  bytes: Uint8Array,
  options: { ocr?: Ocr | undefined; signal?: AbortSignal | undefined; deadline?: number; limits: ResolvedLimits },
): Promise<PdfConversion> {
  const { ocr, signal, limits } = options;
  const deadline = options.deadline ?? Number.POSITIVE_INFINITY;
  const parser = await openParser(bytes);
  try {
    const { total, pages } = await analyzePages(parser, limits, signal, deadline, true);
    const ocrPages = pages.filter((page) => page.needsOcr).map((page) => page.page);
    if (ocrPages.length > 0) {
      if (ocr === undefined) {
        throw new ServiceError('document_needs_ocr', `The PDF is a scan (${ocrPages.length} of ${total} pages have no text layer) and text recognition is not available for it; send a text version.`);
      }
      if (ocrPages.length > limits.maxOcrPages) {
        throw new ServiceError('document_too_many_pages', `The PDF has ${ocrPages.length} scanned pages; text recognition reads at most ${limits.maxOcrPages} in one upload. Split it.`);
      }
      if (bytes.length > limits.maxOcrBytes) {
        throw new ServiceError('document_too_large_for_ocr', `The scanned PDF is ${bytes.length} bytes; text recognition accepts at most ${limits.maxOcrBytes}. Split it or send a text version.`);
      }
    }

    const document = documentOf(parser);
    const blocks: DocumentBlock[] = [];
    const figures: DocumentFigure[] = [];
    let figuresDropped = 0;
    for (const page of pages) {
      checkpoint(signal, deadline, limits);
      if (page.needsOcr && ocr !== undefined) {
        const rendered = await renderPage(parser, page.page, limits.ocrScale);
        const text = await recognize(ocr, rendered.png, signal, `page ${page.page}`);
        blocks.push(...ocrTextToBlocks(text, page.page));
        continue;
      }
      const pageBlocks = pageTextToBlocks(page.text, page.page);
      // Rotated pages would need the crop rotated too; their regions are counted as dropped.
      const usable = page.rotate % 360 === 0 ? page.regions : [];
      figuresDropped += page.regions.length - usable.length;
      const room = Math.max(0, limits.maxFigures - figures.length);
      if (usable.length > 0) {
        const candidates = captionedFigures(usable, await captionAnchors(document, page.page));
        figuresDropped += Math.max(0, candidates.length - room);
        const kept = candidates.slice(0, room);
        // Render the page once for all its crops (only when a figure is kept).
        const rendered = kept.length === 0 ? null : await renderPage(parser, page.page, limits.figureScale);
        const scale = limits.figureScale;
        for (const { region, label } of kept) {
          checkpoint(signal, deadline, limits);
          if (rendered === null) break;
          const pad = FIGURE_PADDING;
          const x = Math.max(0, Math.floor((region.x0 - page.pageBox.x0 - pad) * scale));
          const y = Math.max(0, Math.floor((page.pageBox.y1 - region.y1 - pad) * scale));
          const width = Math.max(1, Math.min(Math.ceil(rendered.width) - x, Math.ceil((region.x1 - region.x0 + 2 * pad) * scale)));
          const height = Math.max(1, Math.min(Math.ceil(rendered.height) - y, Math.ceil((region.y1 - region.y0 + 2 * pad) * scale)));
          const png = await cropPng(rendered.png, x, y, width, height);
          const caption = label === null ? '' : captionFor(page.text, label) || label;
          const ocrText = ocr === undefined ? '' : await recognizeFigure(ocr, png, signal, `a figure on page ${page.page}`);
          figures.push({ page: page.page, png, width, height, caption, ocrText });
          const block: DocumentBlock = { kind: 'figure', text: figureBlockText(page.page, caption, ocrText), page: page.page };
          // Inline where it appears: after the paragraph holding its caption, else at the page end.
          const at = label === null ? -1 : pageBlocks.findIndex((candidate) => candidate.kind === 'paragraph' && candidate.text.startsWith(label));
          if (at === -1) pageBlocks.push(block);
          else pageBlocks.splice(at + 1, 0, block);
        }
      }
      blocks.push(...pageBlocks);
    }
    return { pageCount: total, blocks, figures, figuresDropped, ocrPages };
  } catch (error) {
    signal?.throwIfAborted();
    throw mapPdfError(error);
  } finally {
    await parser.destroy().catch(() => undefined);
  }
}
