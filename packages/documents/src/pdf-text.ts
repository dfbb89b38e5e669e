import type { DocumentBlock } from '@memory-agents/core/adapter';

const CAPTION_START = /^(Figure|Fig\.|Table)\s*\d+/;
const NUMBERED_HEADING = /^(\d+(?:\.\d+){0,3})\.?\s+[A-Z]/;
const ENDS_SENTENCE = /[.!?:;"'\u201d)\]]$/;

/** Joins wrapped lines: a hyphen at a line end before a lower-case letter is a broken word. */
export function joinLines(lines: string[]): string {
  let text = '';
  for (const raw of lines) {
    const line = raw.trim();
    if (line === '') continue;
    if (text === '') text = line;
    else if (/\p{L}-$/u.test(text) && /^\p{Ll}/u.test(line)) text = text.slice(0, -1) + line;
    else if (/\p{L}-$/u.test(text)) text += line;
    else text += ` ${line}`;
  }
  return text;
}

/**
 * Turns the text of one PDF page (lines as pdf-parse gives them) into blocks. A paragraph ends at
 * a blank line, or at a short line ending a sentence; a line starting with "Figure N"/"Table N"
 * starts a new paragraph (a caption); a short numbered line like "2. Overview" is a heading.
 */
export function pageTextToBlocks(text: string, page: number): DocumentBlock[] {
  const lines = text.replace(/\r\n?/g, '\n').replace(/\t/g, ' ').split('\n').map((line) => line.replace(/\s+/g, ' ').trim());
  const lengths = lines.filter((line) => line.length > 20).map((line) => line.length).sort((a, b) => a - b);
  const typical = lengths.length === 0 ? 60 : (lengths[Math.floor(lengths.length / 2)] ?? 60);
  const blocks: DocumentBlock[] = [];
  let current: string[] = [];
  let previousEnded = true;
  const flush = (): void => {
    const joined = joinLines(current);
    current = [];
    if (joined !== '') blocks.push({ kind: 'paragraph', text: joined, page });
  };
  for (const line of lines) {
    if (line === '') {
      flush();
      previousEnded = true;
      continue;
    }
    const heading = NUMBERED_HEADING.exec(line);
    const words = line.split(' ').length;
    if (heading !== null && previousEnded && line.length <= 70 && words <= 10 && !/[.,;]$/.test(line)) {
      flush();
      blocks.push({ kind: 'heading', text: line, page, level: Math.min(6, (heading[1] ?? '1').split('.').length) });
      previousEnded = true;
      continue;
    }
    if (CAPTION_START.test(line)) flush();
    current.push(line);
    previousEnded = line.length < typical * 0.75 && ENDS_SENTENCE.test(line);
    if (previousEnded) flush();
  }
  flush();
  return blocks;
}

/**
 * The caption that starts with `label` (e.g. "Figure 2.") in a page's lines: that line and the
 * lines after it up to the end of the first sentence, at most 300 characters. `''` when not found.
 */
export function captionFor(pageText: string, label: string): string {
  const lines = pageText.replace(/\t/g, ' ').split('\n').map((line) => line.replace(/\s+/g, ' ').trim());
  const wanted = label.replace(/\s+/g, ' ').trim();
  const start = lines.findIndex((line) => line.startsWith(wanted));
  if (start === -1) return '';
  const collected: string[] = [];
  for (let index = start; index < lines.length && index < start + 8; index++) {
    const line = lines[index] ?? '';
    if (line === '') break;
    collected.push(line);
    const joined = joinLines(collected);
    const end = /(?<!\b(?:vs|e\.g|i\.e|etc|Fig|al|cf|No|approx|resp))[.!?](?=\s+[A-Z(\[]|\s*$)/g;
    end.lastIndex = wanted.length + 1;
    const match = end.exec(joined);
    if (match !== null) return joined.slice(0, match.index + 1).slice(0, 300);
    if (joined.length >= 300) break;
  }
  return joinLines(collected).slice(0, 300);
}

/** The label ("Figure 2", "Fig. 3", "Table 1") at the start of a text item, or `null`. */
export function captionLabel(text: string): string | null {
  return CAPTION_START.exec(text.trim())?.[0] ?? null;
}

/** Paragraph blocks from OCR output (blank lines separate paragraphs). */
export function ocrTextToBlocks(text: string, page: number): DocumentBlock[] {
  return text
    .replace(/\r\n?/g, '\n')
    .split(/\n\s*\n/)
    .map((paragraph) => joinLines(paragraph.split('\n')))
    .filter((paragraph) => paragraph !== '')
    .map((paragraph) => ({ kind: 'paragraph', text: paragraph, page }));
}

/** Lines looked at, at the top and at the bottom of each page, for running headers and footers. */
const RUNNING_LINE_DEPTH = 2;

function runningKey(line: string): string {
  // Page numbers change from page to page; compare the line with its digits masked.
  return line.replace(/\s+/g, ' ').trim().replace(/\d+/g, '#').toLowerCase();
}

/**
 * Removes running headers and footers: lines among the first or last two of a page whose text
 * (digits masked, so "Page 3" matches "Page 4") recurs on at least half of the pages, when the
 * document has at least 3 pages with text. Returns the page texts in the same order.
 */
export function stripRunningLines(pages: readonly string[]): string[] {
  const split = pages.map((text) => text.split('\n'));
  const withText = split.filter((lines) => lines.some((line) => line.trim() !== '')).length;
  if (withText < 3) return [...pages];
  const edgeIndexes = (lines: string[]): number[] => {
    const filled = lines.map((line, index) => (line.trim() === '' ? -1 : index)).filter((index) => index !== -1);
    return [...new Set([...filled.slice(0, RUNNING_LINE_DEPTH), ...filled.slice(-RUNNING_LINE_DEPTH)])];
  };
  const counts = new Map<string, number>();
  for (const lines of split) {
    const keys = new Set(edgeIndexes(lines).map((index) => runningKey(lines[index] ?? '')));
    for (const key of keys) counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  const threshold = Math.max(3, Math.ceil(withText / 2));
  return split.map((lines) => {
    const doomed = new Set(edgeIndexes(lines).filter((index) => (counts.get(runningKey(lines[index] ?? '')) ?? 0) >= threshold));
    return lines.filter((_, index) => !doomed.has(index)).join('\n');
  });
}
