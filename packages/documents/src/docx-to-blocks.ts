import { ServiceError, type Ocr } from '@memory-agents/core';
import { conversionCheckpoint as checkpoint, figureBlockText, readZipEntries, type DocumentBlock, type DocumentFigure, type ResolvedConvertLimits as ResolvedLimits } from '@memory-agents/core/adapter';
import { recognizeFigure } from './figure-ocr.js';
import { decodeEntities } from './html-parser.js';
import { htmlToBlocks } from './html-to-blocks.js';
import { captionFor, captionLabel } from './pdf-text.js';

/** Marks where mammoth placed image N in the text: private-use characters no document text uses. */
const MARK_OPEN = '\uE000';
const MARK_CLOSE = '\uE001';
const MARKER = /\uE000(\d+)\uE001/g;

/** The result of {@link convertDocx}. */
export type DocxConversion = { blocks: DocumentBlock[]; figures: DocumentFigure[]; figuresDropped: number };

type EmbeddedImage = { contentType: string; data: Uint8Array; alt: string };

/** Decodes an embedded image and returns it as PNG, or `null` when canvas cannot read it (EMF, WMF, ...). */
async function toPng(data: Uint8Array): Promise<{ png: Uint8Array; width: number; height: number } | null> {
  const { createCanvas, loadImage } = await import('@napi-rs/canvas');
  try {
    const image = await loadImage(Buffer.from(data));
    const canvas = createCanvas(image.width, image.height);
    const context = canvas.getContext('2d');
    context.fillStyle = '#ffffff';
    context.fillRect(0, 0, image.width, image.height);
    context.drawImage(image, 0, 0);
    return { png: new Uint8Array(await canvas.encode('png')), width: image.width, height: image.height };
  } catch {
    return null;
  }
}

/** A caption for the figure at `index`: a "Figure N"/"Table N" paragraph right after (or before) it, else its alt text. */
function captionNear(blocks: DocumentBlock[], index: number, alt: string): { caption: string; blockIndex: number | null } {
  for (const at of [index + 1, index - 1]) {
    const block = blocks[at];
    if (block?.kind !== 'paragraph') continue;
    const label = captionLabel(block.text);
    if (label !== null) return { caption: captionFor(block.text, label) || label, blockIndex: at };
  }
  return { caption: alt.replace(/\s+/g, ' ').trim(), blockIndex: null };
}

/**
 * Converts a DOCX with mammoth (`convertToHtml`, default style map: Heading N -> `<hN>`), then the
 * HTML to blocks. Tables become `a | b` rows; footnotes and endnotes (mammoth renders them as a
 * list at the end) are kept. Embedded images that canvas can decode and that are at least
 * `minFigureSize` pixels on each side become figures, placed where they appear, up to `maxFigures`.
 */
export async function convertDocx(
  bytes: Uint8Array,
  options: { limits: ResolvedLimits; ocr?: Ocr | undefined; signal?: AbortSignal | undefined; deadline?: number },
): Promise<DocxConversion> {
  const { limits, ocr, signal } = options;
  const deadline = options.deadline ?? Number.POSITIVE_INFINITY;
  const entries = readZipEntries(bytes);
  if (entries === null) throw new ServiceError('malformed_document', 'The Word document could not be read: its ZIP structure is damaged; export it again.');
  const inflated = entries.reduce((sum, entry) => sum + entry.uncompressedSize, 0);
  if (inflated > limits.maxUncompressedBytes) {
    throw new ServiceError('document_too_complex', `The Word document inflates to ${inflated} bytes; the converter unpacks at most ${limits.maxUncompressedBytes}. Split it or send a text version.`);
  }
  // Loaded on first use, like the PDF reader.
  const { default: mammoth } = await import('mammoth');
  const images: EmbeddedImage[] = [];
  let html: string;
  try {
    const result = await mammoth.convertToHtml(
      { buffer: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) },
      {
        convertImage: mammoth.images.imgElement(async (image) => {
          images.push({ contentType: image.contentType, data: new Uint8Array(await image.readAsBuffer()), alt: '' });
          return { src: `figure:${images.length - 1}` };
        }),
      },
    );
    html = result.value
      // Drop mammoth's "↑" back-links from each footnote/endnote to its reference.
      .replace(/<a href="#(?:footnote|endnote)-ref-[^"]*">[^<]*<\/a>/g, '')
      // Keep where each image was, as a marker in the text.
      .replace(/<img\s([^>]*?)\/?>/g, (_, attributes: string) => {
        const index = /\bsrc="figure:(\d+)"/.exec(attributes)?.[1];
        if (index === undefined) return '';
        const alt = /\balt="([^"]*)"/.exec(attributes)?.[1];
        const image = images[Number(index)];
        if (image !== undefined && alt !== undefined) image.alt = decodeEntities(alt);
        return `${MARK_OPEN}${index}${MARK_CLOSE}`;
      });
  } catch (error) {
    throw new ServiceError('malformed_document', 'The Word document could not be read; open it in Word and save it again.', { cause: error });
  }
  const withMarkers = htmlToBlocks(html, { mainContentOnly: false });

  // Split blocks at image markers: a paragraph becomes text / figure / text; a marker inside a
  // table or list puts the figure right after that block.
  const placed: Array<DocumentBlock | { figure: number }> = [];
  for (const block of withMarkers) {
    const found = [...block.text.matchAll(MARKER)].map((match) => Number(match[1]));
    if (found.length === 0) {
      placed.push(block);
      continue;
    }
    if (block.kind === 'paragraph') {
      block.text.split(MARKER).forEach((part, index) => {
        if (index % 2 === 1) placed.push({ figure: Number(part) });
        else if (part.trim() !== '') placed.push({ ...block, text: part.trim() });
      });
    } else {
      const text = block.text.replace(MARKER, '').replace(/[ \t]+\n/g, '\n').trim();
      if (text !== '') placed.push({ ...block, text });
      for (const figure of found) placed.push({ figure });
    }
  }

  const textBlocks = placed.map((entry) => ('figure' in entry ? null : entry));
  const blocks: DocumentBlock[] = [];
  const figures: DocumentFigure[] = [];
  let figuresDropped = 0;
  for (let index = 0; index < placed.length; index++) {
    const entry = placed[index];
    if (entry === undefined) continue;
    if (!('figure' in entry)) {
      blocks.push(entry);
      continue;
    }
    checkpoint(signal, deadline, limits);
    const image = images[entry.figure];
    if (image === undefined) continue;
    const decoded = await toPng(image.data);
    if (decoded === null || decoded.width < limits.minFigureSize || decoded.height < limits.minFigureSize) continue;
    if (figures.length >= limits.maxFigures) {
      figuresDropped++;
      continue;
    }
    const { caption } = captionNear(textBlocks.map((block) => block ?? { kind: 'figure', text: '', page: null }), index, image.alt);
    const ocrText = ocr === undefined ? '' : await recognizeFigure(ocr, decoded.png, signal, 'a figure');
    figures.push({ page: null, png: decoded.png, width: decoded.width, height: decoded.height, caption, ocrText });
    blocks.push({ kind: 'figure', text: figureBlockText(null, caption, ocrText), page: null });
  }
  return { blocks, figures, figuresDropped };
}
