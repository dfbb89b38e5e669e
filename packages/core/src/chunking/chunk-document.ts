import { ServiceError } from '../errors/index.js';
import type { DocumentBlock } from '../ports/document-converter.js';
import { definitionBoundaries } from './code-boundaries.js';
import { lengthCuts, lineStarts, packUnits, sentenceCuts } from './cut-points.js';
import { BLOCK_SEPARATOR, type BlockSpan, layoutBlocks } from './document-text.js';
import { CHUNK_STRATEGIES, type ChunkStrategy } from '../ports/store/index.js';

export type { ChunkStrategy };

/** Smallest allowed `maxChars` (spec: observe-file `max_chars`). */
export const MIN_MAX_CHARS = 200;
/** Largest allowed `maxChars`. */
export const MAX_MAX_CHARS = 4000;
/** Default `maxChars`. */
export const DEFAULT_MAX_CHARS = 2000;
/** Default `overlapChars` (spec: observe-file `overlap_chars`). */
export const DEFAULT_OVERLAP_CHARS = 200;
/** Default strategy. */
export const DEFAULT_CHUNK_STRATEGY: ChunkStrategy = 'auto';

/** Options of {@link chunkDocument}. */
export type ChunkOptions = {
  /**
   * `auto` is exactly `length` (bounded, lossless). `length`: uniform pieces cut at the best break
   * near the limit. `sentence`: whole sentences; a longer sentence is cut. `code`: definitions kept
   * whole where they fit. `structure`: follows headings; a piece never spans two sections unless one
   * is tiny (under a quarter of the budget).
   * @default 'auto'
   */
  strategy?: ChunkStrategy;
  /**
   * Hard ceiling on every piece's length INCLUDING the overlap, in UTF-16 code units (200..4000).
   * @default 2000
   */
  maxChars?: number;
  /**
   * Characters of the previous piece's new text repeated at the start of the next; must be
   * under `maxChars / 2`.
   * @default 200
   */
  overlapChars?: number;
};

/**
 * One piece (a future turn). `page`/`pageEnd` are the pages of its first and last character
 * (`null` for formats without pages).
 */
export type Piece = { text: string; page: number | null; pageEnd: number | null };

function invalid(message: string, status: 400 | 422): ServiceError {
  return new ServiceError('invalid_request', message, { status });
}

/**
 * Checks chunking options and fills in defaults. Out-of-range values -> `invalid_request` 422
 * (what the schema would say); `overlapChars >= maxChars / 2` -> `invalid_request` 400 (a rule
 * across two fields, spec: observe-file).
 */
export function resolveChunkOptions(options: ChunkOptions = {}): Required<ChunkOptions> {
  const strategy = options.strategy ?? DEFAULT_CHUNK_STRATEGY;
  const maxChars = options.maxChars ?? DEFAULT_MAX_CHARS;
  const overlapChars = options.overlapChars ?? DEFAULT_OVERLAP_CHARS;
  if (!(CHUNK_STRATEGIES as readonly string[]).includes(strategy)) throw invalid(`strategy must be one of ${CHUNK_STRATEGIES.join(', ')}.`, 422);
  if (!Number.isInteger(maxChars) || maxChars < MIN_MAX_CHARS || maxChars > MAX_MAX_CHARS) {
    throw invalid(`max_chars must be an integer from ${MIN_MAX_CHARS} to ${MAX_MAX_CHARS}.`, 422);
  }
  if (!Number.isInteger(overlapChars) || overlapChars < 0) throw invalid('overlap_chars must be an integer of 0 or more.', 422);
  if (overlapChars * 2 >= maxChars) {
    throw invalid(`overlap_chars (${overlapChars}) must be under half of max_chars (${maxChars}).`, 400);
  }
  return { strategy, maxChars, overlapChars };
}

function structureCuts(text: string, spans: readonly BlockSpan[], budget: number): number[] {
  const starts = spans.filter((span) => span.block.kind === 'heading').map((span) => span.start).filter((start) => start > 0);
  const sections: Array<[number, number]> = [];
  let previous = 0;
  for (const start of [...starts, text.length]) {
    if (start > previous) sections.push([previous, start]);
    previous = start;
  }
  const tiny = Math.floor(budget / 4);
  // Never cut right after a heading: it would leave the heading alone at the end of a piece.
  const afterHeadings = new Set(spans.filter((span) => span.block.kind === 'heading').map((span) => span.end + BLOCK_SEPARATOR.length));
  const ends: number[] = [];
  let pieceStart = 0;
  let pieceEnd = 0;
  for (const [from, to] of sections) {
    const size = to - from;
    const current = pieceEnd - pieceStart;
    if (current > 0 && (current < tiny || size < tiny) && pieceEnd - pieceStart + size <= budget) {
      pieceEnd = to;
      continue;
    }
    if (current > 0) ends.push(pieceEnd);
    if (size <= budget) {
      pieceStart = from;
      pieceEnd = to;
      continue;
    }
    // An oversize section is cut at its sentences and paragraphs; its pieces stay inside it.
    ends.push(...sentenceCuts(text, from, to, budget, afterHeadings));
    pieceStart = to;
    pieceEnd = to;
  }
  if (pieceEnd > pieceStart) ends.push(pieceEnd);
  return ends;
}

function codeCuts(text: string, spans: readonly BlockSpan[], budget: number): number[] {
  const { definitions, blankLines } = definitionBoundaries(text, 0, text.length);
  // Block starts count as definition-level boundaries too (several code blocks in one document);
  // blank lines inside a block do not (they may sit inside a function).
  const separators = spans.map((span) => span.start);
  const byLines = (from: number, to: number): number[] =>
    packUnits(from, to, lineStarts(text, from, to), budget, (start, end) => lengthCuts(text, start, end, budget));
  const byBlankLines = (from: number, to: number): number[] =>
    packUnits(from, to, blankLines.filter((point) => point > from && point < to), budget, byLines);
  return packUnits(0, text.length, [...definitions, ...separators], budget, byBlankLines);
}

function cutsFor(strategy: ChunkStrategy, text: string, spans: readonly BlockSpan[], budget: number): number[] {
  switch (strategy) {
    case 'sentence':
      return sentenceCuts(text, 0, text.length, budget);
    case 'code':
      return codeCuts(text, spans, budget);
    case 'structure':
      return structureCuts(text, spans, budget);
    default:
      return lengthCuts(text, 0, text.length, budget);
  }
}

function pageAt(spans: readonly BlockSpan[], offset: number): number | null {
  // The block containing `offset`, or the next block when it falls on a separator.
  let low = 0;
  let high = spans.length - 1;
  let found = spans.length - 1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    const span = spans[middle];
    if (span === undefined) break;
    if (span.end > offset) {
      found = middle;
      high = middle - 1;
    } else low = middle + 1;
  }
  return spans[found]?.page ?? null;
}

/**
 * Cuts a converted document into pieces (future turns).
 *
 * Contract:
 * - Every piece is at most `maxChars` long, overlap included; no piece is empty.
 * - Each strategy first partitions {@link documentText} into consecutive segments (the "new text"
 *   of each piece) of at most `maxChars - overlapChars`. With `length`/`auto` and no overlap the
 *   pieces concatenate back to exactly `documentText(blocks)`.
 * - With overlap, piece i (i > 0) is the last `overlapChars` characters of piece i-1's new text
 *   (all of it when shorter; one fewer when the first would be half a surrogate pair) followed by
 *   its own new text. So every piece is a contiguous slice of `documentText(blocks)` (unless a
 *   whitespace-only segment was dropped between two pieces).
 * - `sentence`/`code`/`structure` drop segments that are only whitespace.
 * - `page`/`pageEnd` are the pages of the first and last character of the piece.
 * - Deterministic; linear-ish in the text length.
 *
 * @example
 * const pieces = chunkDocument(doc.blocks, { strategy: 'structure', maxChars: 1500, overlapChars: 0 });
 */
export function chunkDocument(blocks: readonly DocumentBlock[], options: ChunkOptions = {}): Piece[] {
  const { strategy, maxChars, overlapChars } = resolveChunkOptions(options);
  const { text, spans } = layoutBlocks(blocks);
  if (text.length === 0) return [];
  const budget = maxChars - overlapChars;
  const ends = cutsFor(strategy, text, spans, budget);
  const dropBlank = strategy === 'sentence' || strategy === 'code' || strategy === 'structure';
  const pieces: Piece[] = [];
  let start = 0;
  let previous: { start: number; end: number } | null = null;
  for (const end of ends) {
    if (end <= start) continue;
    const segmentStart = start;
    start = end;
    const segment = text.slice(segmentStart, end);
    if (dropBlank && segment.trim() === '') continue;
    let from = segmentStart;
    let tail = '';
    if (overlapChars > 0 && previous !== null) {
      let tailStart = Math.max(previous.start, previous.end - overlapChars);
      if (tailStart > previous.start && isLowSurrogate(text.charCodeAt(tailStart))) tailStart++;
      tail = text.slice(tailStart, previous.end);
      from = tailStart;
    }
    pieces.push({ text: tail + segment, page: pageAt(spans, from), pageEnd: pageAt(spans, end - 1) });
    previous = { start: segmentStart, end };
  }
  return pieces;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}
