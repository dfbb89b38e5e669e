/**
 * Cut-point search shared by the chunking strategies. Every function returns the END offsets of
 * consecutive segments covering `[from, to)` exactly (the last one is `to`); each segment is
 * non-empty and at most `budget` UTF-16 units long, and no cut falls inside a surrogate pair.
 */

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/** Moves a cut left by one when it would separate a surrogate pair. */
export function safeCut(text: string, at: number, floor: number): number {
  if (at > floor + 1 && at < text.length && isHighSurrogate(text.charCodeAt(at - 1))) return at - 1;
  return at;
}

const CLOSERS = new Set(['"', "'", ')', ']', '\u201d', '\u2019']);

function isSpace(code: number): boolean {
  return code === 0x20 || code === 0x0a || code === 0x09 || code === 0x0d || code === 0x0c || code === 0xa0;
}

/**
 * The offset just after the best break in `(floor, limit]`: the last blank line, else the last
 * sentence end, else the last whitespace; `-1` when the window has no whitespace. One backward scan.
 */
function bestBreak(text: string, floor: number, limit: number): number {
  let space = -1;
  let sentence = -1;
  for (let index = limit - 1; index >= floor; index--) {
    const code = text.charCodeAt(index);
    if (!isSpace(code)) continue;
    if (code === 0x0a && index > floor && text.charCodeAt(index - 1) === 0x0a) return index + 1;
    if (space === -1) space = index + 1;
    if (sentence === -1) {
      let before = index - 1;
      while (before >= floor && CLOSERS.has(text[before] ?? '')) before--;
      const mark = text[before];
      if (mark === '.' || mark === '!' || mark === '?') sentence = index + 1;
    }
  }
  return sentence !== -1 ? sentence : space;
}

/**
 * Uniform cuts: windows of `budget`, each ended at the best break in its last fifth (a blank line,
 * else a sentence end, else any whitespace), or exactly at `budget` when there is none.
 */
export function lengthCuts(text: string, from: number, to: number, budget: number): number[] {
  const ends: number[] = [];
  let position = from;
  while (to - position > budget) {
    const limit = position + budget;
    const floor = position + Math.floor(budget * 0.8);
    let cut = bestBreak(text, floor, limit);
    if (cut <= position || cut > limit) cut = limit;
    cut = safeCut(text, cut, position);
    ends.push(cut);
    position = cut;
  }
  ends.push(to);
  return ends;
}

/**
 * Greedy packing of units: `boundaries` are the offsets where units may be cut (between `from`
 * and `to`). Consecutive units join while the segment fits `budget`; a unit larger than `budget`
 * is cut by `splitOversize`, and its last part stays open so following units can join it.
 */
export function packUnits(
  from: number,
  to: number,
  boundaries: readonly number[],
  budget: number,
  splitOversize: (from: number, to: number) => number[],
): number[] {
  const ends: number[] = [];
  let start = from;
  let last = from;
  const points = [...new Set(boundaries)].filter((point) => point > from && point < to).sort((a, b) => a - b);
  points.push(to);
  for (const boundary of points) {
    if (boundary - start <= budget) {
      last = boundary;
      continue;
    }
    if (last > start) {
      ends.push(last);
      start = last;
    }
    if (boundary - start <= budget) {
      last = boundary;
      continue;
    }
    const inner = splitOversize(start, boundary);
    ends.push(...inner.slice(0, -1));
    start = inner.length >= 2 ? (inner[inner.length - 2] ?? start) : start;
    last = boundary;
  }
  if (last > start) ends.push(last);
  return ends;
}

/** Offsets just after each sentence end (punctuation plus following spaces) and each blank line. */
export function sentenceBoundaries(text: string, from: number, to: number): number[] {
  const boundaries: number[] = [];
  // Latin punctuation needs whitespace after it (so "3.14" and "e.g.x" stay whole); CJK full-width
  // punctuation ends a sentence by itself.
  const pattern = /[.!?\u2026]+["'\u201d\u2019)\]]*\s+|[\u3002\uff01\uff1f]+["'\u201d\u2019\u300d\u300f)\]]*\s*|\n[ \t]*\n\s*/g;
  pattern.lastIndex = from;
  for (let match = pattern.exec(text); match !== null && match.index < to; match = pattern.exec(text)) {
    boundaries.push(Math.min(to, match.index + match[0].length));
    if (match[0].length === 0) pattern.lastIndex++;
  }
  return boundaries;
}

/**
 * Sentence packing of `[from, to)`; sentences longer than `budget` are cut by length. Offsets in
 * `avoid` are not used as cuts (e.g. right after a heading, so a heading never ends a piece).
 */
export function sentenceCuts(text: string, from: number, to: number, budget: number, avoid?: ReadonlySet<number>): number[] {
  const boundaries = sentenceBoundaries(text, from, to).filter((point) => avoid?.has(point) !== true);
  return packUnits(from, to, boundaries, budget, (start, end) => lengthCuts(text, start, end, budget));
}

/** Offsets of line starts in `[from, to)`, excluding `from`. */
export function lineStarts(text: string, from: number, to: number): number[] {
  const starts: number[] = [];
  let at = text.indexOf('\n', from);
  while (at !== -1 && at + 1 < to) {
    starts.push(at + 1);
    at = text.indexOf('\n', at + 1);
  }
  return starts;
}
