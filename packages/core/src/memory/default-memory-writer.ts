import type { MemoryHitRecord } from '../ports/memory-index.js';
import type { DraftRef, MemoryDraft, MemoryWriteRequest, MemoryWriter, Supersession, TurnOutcome, WriterTurn } from '../ports/memory-writer.js';
import { CHANGE_CUE, canSupersede, extractClaims, supersedesClaim, type FactClaim } from './fact-updates.js';
import { resolveAbsoluteDates } from './absolute-dates.js';
import { isInstructionLike } from '../boundary/instruction-like.js';
import { dateKeywords, type resolveRelativeDates } from './relative-dates.js';
import { localDateNames, resolveRelativeDatesAnyLanguage } from './relative-dates-languages.js';
import { detectLanguage } from '../embedding/text-analysis.js';
import { expiryOf } from './expiry-phrases.js';
import { expiryInLanguage } from './expiry-phrases-languages.js';

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
    async write(request) {
      const { turns, signal } = request;
      // The port's contract: an aborted signal rejects with an AbortError, even for a writer that
      // never waits (the service may be stopping and must not commit this job's outcomes).
      signal?.throwIfAborted();
      const outcomes = turns.map((turn, i): TurnOutcome & { ok: true } => {
        const neighbours: string[] = [];
        for (let j = Math.max(0, i - NEIGHBOUR_TURNS); j <= Math.min(turns.length - 1, i + NEIGHBOUR_TURNS); j++) {
          if (j !== i) neighbours.push(turns[j]!.text.slice(0, NEIGHBOUR_MAX_CHARS));
        }
        return { turnIndex: turn.turnIndex, ok: true, memories: memoriesOf(turn, maxChars, neighbours.join(' ')) };
      });
      const supersedes = await findSupersessions(request, outcomes);
      signal?.throwIfAborted();
      return supersedes.length > 0 ? { outcomes, supersedes } : { outcomes };
    },
  };
}

/** Existing memories looked at per memory that states a fact (`searchSimilar`'s limit). */
export const SUPERSESSION_CANDIDATES = 10;

type Stated = { ref: DraftRef; turn: WriterTurn; claims: FactClaim[] };

/**
 * The memories this batch's facts replace ({@link extractClaims}, {@link supersedesClaim}): for
 * each memory stating a fact, the earlier memories of the batch and the agent's similar memories
 * (`searchSimilar`, only for memories that state one, so plain turns cost no lookup) by the same
 * speaker (a fact about themself) or of the same thread (a fact about "the meeting"), said no
 * later than this turn. Document pieces neither replace nor are replaced.
 */
async function findSupersessions(request: MemoryWriteRequest, outcomes: (TurnOutcome & { ok: true })[]): Promise<Supersession[]> {
  const supersedes: Supersession[] = [];
  const taken = new Set<string>();
  const stated: Stated[] = [];
  // Claims of the stored memories looked at, once per write (the same few come back for many turns).
  const known = new Map<string, FactClaim[]>();
  const claimsOf = (record: MemoryHitRecord) => {
    let claims = known.get(record.id);
    if (!claims) known.set(record.id, (claims = extractClaims(record.text)));
    return claims;
  };
  for (const [position, outcome] of outcomes.entries()) {
    const turn = request.turns[position]!;
    if (turn.source.kind === 'document') continue;
    for (const [piece, memory] of outcome.memories.entries()) {
      const claims = extractClaims(memory.text);
      if (claims.length === 0) continue;
      // Only a claim that could replace another costs a lookup ("my son is a soccer player" cannot).
      if (!claims.some(canSupersede)) {
        stated.push({ ref: { turnIndex: turn.turnIndex, piece }, turn, claims });
        continue;
      }
      const ref = { turnIndex: turn.turnIndex, piece };
      for (const earlier of stated) {
        const key = `draft:${earlier.ref.turnIndex}:${earlier.ref.piece}`;
        if (taken.has(key) || !replaces(claims, turn, earlier.claims, earlier.turn.speaker, earlier.turn.source.threadId)) continue;
        taken.add(key);
        supersedes.push({ old: earlier.ref, by: ref });
      }
      const similar = await request.searchSimilar(memory.text, SUPERSESSION_CANDIDATES);
      for (const record of similar) {
        if (taken.has(record.id) || !isEarlierConversation(record, turn)) continue;
        if (!replaces(claims, turn, claimsOf(record), record.speaker, record.source.threadId)) continue;
        taken.add(record.id);
        supersedes.push({ old: { id: record.id }, by: ref });
      }
      stated.push({ ref, turn, claims });
    }
  }
  return supersedes;
}

function replaces(claims: FactClaim[], turn: WriterTurn, old: FactClaim[], oldSpeaker: string | null, oldThread: string): boolean {
  return claims.some((claim) =>
    old.some((before) => {
      if (!supersedesClaim(claim, before)) return false;
      return claim.subject === 'self' ? oldSpeaker === turn.speaker : oldThread === turn.source.threadId;
    }),
  );
}

/** A conversation memory said no later than `turn`, and not one of `turn`'s own (a resumed turn). */
function isEarlierConversation(record: MemoryHitRecord, turn: WriterTurn): boolean {
  if (record.source.kind === 'document') return false;
  if (record.source.observationId === turn.source.observationId && record.source.turnIndex === turn.source.turnIndex) return false;
  const said = Date.parse(record.occurredAt ?? record.createdAt);
  const now = Date.parse(turn.timestamp);
  return Number.isNaN(said) || Number.isNaN(now) || said <= now;
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
    const language = detectLanguage(piece);
    const resolved = Number.isNaN(reference.getTime()) ? [] : resolveRelativeDatesAnyLanguage(piece, reference, language);
    const validFrom = Number.isNaN(reference.getTime()) ? null : changedSince(piece, reference, resolved);
    // A conversation turn that bounds what it says ("the code is valid until Friday") expires then (issue 42).
    // German, French, Spanish, Portuguese, Italian and Dutch have their own, narrower cues (issue 44).
    const expiresAt = turn.source.kind === 'document' ? null : language === 'en' ? expiryOf(piece, reference) : expiryInLanguage(language, piece, reference);
    // Another language (issue 44): the month and weekday names of the turn's and resolved dates in it too.
    const localNames = language === 'en' ? [] : [localDateNames(language, turn.timestamp, 'day'), ...resolved.map((date) => localDateNames(language, date.date, date.granularity))];
    const keywords = [...baseKeywords, ...resolved.map((date) => dateKeywords(date.date, date.granularity)), ...localNames, ...entitiesOf(piece), piece, neighbours]
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
      ...(validFrom ? { validFrom } : {}),
      ...(expiresAt ? { expiresAt } : {}),
    };
  });
}

/**
 * When a piece that states a change ("moved", "switched", "since", "no longer": {@link CHANGE_CUE})
 * names one date, relative or absolute, no later than the day it was said ("I moved to Berlin on
 * March 3rd", said in April), the fact is valid from that day (a month: its first day)
 * rather than from when it was said. A date ahead ("my new appointment is on May 2nd") is when
 * something will happen, not when the statement became true; two dates or none: null (the memory
 * is valid from when it was said).
 */
/** What comes just before a date that is where a change goes, not when it happened ("to late November"). */
const TARGET_DATE_BEFORE = /\b(?:to|until|till|into)\s+(?:(?:the|late|early|mid|end of|start of|beginning of)\s+)*$/;

function changedSince(piece: string, reference: Date, relative: ReturnType<typeof resolveRelativeDates>): string | null {
  const lower = piece.toLowerCase();
  if (!CHANGE_CUE.test(lower)) return null;
  // "pushed the trip to late November", "moved the call until Friday": that date is the new value,
  // not when the change happened.
  const isTarget = (phrase: string) => {
    const at = lower.indexOf(phrase);
    return at > 0 && TARGET_DATE_BEFORE.test(lower.slice(Math.max(0, at - 24), at));
  };
  const dates = [...relative.filter((date) => date.granularity !== 'year'), ...resolveAbsoluteDates(piece, reference)].filter((date) => !isTarget(date.phrase));
  if (dates.length !== 1) return null;
  const day = `${dates[0]!.date}T00:00:00.000Z`;
  return Date.parse(day) <= reference.getTime() ? day : null;
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
