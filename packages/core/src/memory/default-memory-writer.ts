import type { MemoryDraft, MemoryWriter, TurnOutcome, WriterTurn } from '../ports/memory-writer.js';
import { isInstructionLike } from '../boundary/instruction-like.js';
import { dateKeywords, resolveRelativeDates } from './relative-dates.js';

/** Longest memory a turn is cut into (at sentence boundaries); conversation turns are usually one. */
export const DEFAULT_MEMORY_MAX_CHARS = 1_200;

const SENTENCE_END = /(?<=[.!?…])\s+(?=\S)/u;
// Capitalised words that are not the first word of a sentence, and numbers with units or separators.
const ENTITY = /(?<![.!?]\s)(?<!^)\b([A-Z][\p{L}'’-]+(?:\s+[A-Z][\p{L}'’-]+)*)|\b(\d[\d.,:/-]*\d|\d)\b/gu;

/** Turns on each side whose words are indexed with a turn (full-text only; the memory stays the one turn). */
export const NEIGHBOUR_TURNS = 2;
/** At most this much of each neighbour's text is indexed with a turn, so long turns do not swamp short ones. */
export const NEIGHBOUR_MAX_CHARS = 1_000;

/**
 * The default `MemoryWriter`: no network, deterministic. Each turn becomes one memory (or a few,
 * cut at sentence boundaries when it is long) holding the turn's own words, so every memory is
 * verbatim text of its source. Full-text keywords add the speaker, the absolute date of the
 * observation, relative dates resolved against it ("yesterday" → 2023-05-07), entities, and the
 * conversation around the turn: the words of up to {@link NEIGHBOUR_TURNS} turns on each side in
 * the same batch, with the memory's own words repeated so they outweigh their neighbours'.
 * A reply such as "For walking or running?" is then found by a question about the new shoes the
 * turn before it mentions, while the cited unit stays that single turn.
 */
export function defaultMemoryWriter(options: { maxChars?: number } = {}): MemoryWriter {
  const maxChars = options.maxChars ?? DEFAULT_MEMORY_MAX_CHARS;
  return {
    specificationVersion: 'v1',
    id: 'verbatim-v2',
    async write({ turns, signal }) {
      // The port's contract: an aborted signal rejects with an AbortError, even for a writer that
      // never waits (the service may be stopping and must not commit this job's outcomes).
      signal?.throwIfAborted();
      return {
        outcomes: turns.map((turn, i): TurnOutcome => {
          const neighbours: string[] = [];
          for (let j = Math.max(0, i - NEIGHBOUR_TURNS); j <= Math.min(turns.length - 1, i + NEIGHBOUR_TURNS); j++) {
            if (j !== i) neighbours.push(turns[j]!.text.slice(0, NEIGHBOUR_MAX_CHARS));
          }
          return { turnIndex: turn.turnIndex, ok: true, memories: memoriesOf(turn, maxChars, neighbours.join(' ')) };
        }),
      };
    },
  };
}

function memoriesOf(turn: WriterTurn, maxChars: number, neighbours: string): MemoryDraft[] {
  const text = turn.text.trim();
  if (text === '') return [];
  const reference = new Date(turn.timestamp);
  const baseKeywords = [turn.speaker, dateKeywords(turn.timestamp), ...turn.tags];
  // Where each piece sits in the turn's own text: pieces are verbatim slices, except where a
  // cut re-joined sentences with one space the turn separated otherwise (no span then).
  let searchFrom = 0;
  return splitText(text, maxChars).map((piece) => {
    const start = turn.text.indexOf(piece, searchFrom);
    const span = start === -1 ? null : { start, end: start + piece.length };
    if (span) searchFrom = span.end;
    const resolved = Number.isNaN(reference.getTime()) ? [] : resolveRelativeDates(piece, reference);
    const keywords = [...baseKeywords, ...resolved.map((date) => dateKeywords(date.date, date.granularity)), ...entitiesOf(piece), piece, neighbours]
      .filter((word) => word !== '')
      .join(' ');
    return {
      text: piece,
      keywords,
      speaker: turn.speaker,
      occurredAt: resolved.length === 1 && resolved[0]!.granularity === 'day' ? `${resolved[0]!.date}T00:00:00.000Z` : turn.timestamp,
      source: turn.source,
      span,
      // Kept as evidence, flagged: ranked down when a query asks for instructions (issue 33).
      suspicious: isInstructionLike(piece),
    };
  });
}

/** Pieces of at most `maxChars`, cut after sentences where possible, else at whitespace, else hard. */
export function splitText(text: string, maxChars: number): string[] {
  if (text.length <= maxChars) return [text];
  const pieces: string[] = [];
  let current = '';
  for (const sentence of text.split(SENTENCE_END)) {
    for (const part of hardSplit(sentence, maxChars)) {
      if (current === '') current = part;
      else if (current.length + 1 + part.length <= maxChars) current = `${current} ${part}`;
      else {
        pieces.push(current);
        current = part;
      }
    }
  }
  if (current !== '') pieces.push(current);
  return pieces;
}

function hardSplit(sentence: string, maxChars: number): string[] {
  if (sentence.length <= maxChars) return [sentence];
  const parts: string[] = [];
  let rest = sentence;
  while (rest.length > maxChars) {
    const space = rest.lastIndexOf(' ', maxChars);
    const cut = space > maxChars / 2 ? space : maxChars;
    parts.push(rest.slice(0, cut).trimEnd());
    rest = rest.slice(cut).trimStart();
  }
  if (rest !== '') parts.push(rest);
  return parts;
}

function entitiesOf(text: string): string[] {
  const found = new Set<string>();
  ENTITY.lastIndex = 0;
  for (let match = ENTITY.exec(text); match !== null; match = ENTITY.exec(text)) found.add(match[0]);
  return [...found].slice(0, 30);
}
