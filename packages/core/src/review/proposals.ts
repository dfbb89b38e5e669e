import { createHash } from 'node:crypto';
import { normaliseForDuplicates } from '../memory/duplicates.js';
import type { MemoryRecord } from '../ports/memory-index.js';
import type { AgentConfig, MemoryReview } from '../ports/store/index.js';
import type { HiddenCharacterOutput } from '../schemas/review.js';

/**
 * What learning holds for review (issue 43), written once for learning, the review routes and the
 * tests: which memories a `review_mode` holds, the fingerprint a decline refuses for good, and the
 * characters of a text a page would not show.
 */

export type ReviewMode = NonNullable<AgentConfig['review_mode']>;

/** The agent's review mode (`off` when its config names none). */
export function reviewModeOf(config: AgentConfig): ReviewMode {
  return config.review_mode ?? 'off';
}

const spaces = (text: string) => text.replace(/\s+/gu, ' ').trim();

/**
 * True when a memory's words are not the source's: its text, spaces aside, is no slice of the
 * turn or piece it was learned from (a model writer's paraphrase, a date the writer resolved, a
 * summary). What `review_mode: "inferred"` holds.
 */
export function isInferred(memoryText: string, sourceText: string): boolean {
  return !spaces(sourceText).includes(spaces(memoryText));
}

/** Which of a batch's memories the mode holds for review (`inferred` needs each one's source text). */
export function heldAs(mode: ReviewMode, memoryText: string, sourceText: string | undefined): MemoryReview['heldAs'] | null {
  if (mode === 'all') return 'all';
  if (mode === 'inferred' && (sourceText === undefined || isInferred(memoryText, sourceText))) return 'inferred';
  return null;
}

/** A hash of a memory's speaker and normalised text: what a decline refuses when learning proposes it again. */
export function reviewFingerprint(record: Pick<MemoryRecord, 'text' | 'speaker'>): string {
  return createHash('sha256').update(`${record.speaker ?? ''}\n${normaliseForDuplicates(record.text)}`).digest('base64url');
}

const NAMES: Record<number, string> = {
  0x00ad: 'soft hyphen',
  0x061c: 'arabic letter mark',
  0x180e: 'mongolian vowel separator',
  0x200b: 'zero width space',
  0x200c: 'zero width non-joiner',
  0x200d: 'zero width joiner',
  0x200e: 'left-to-right mark',
  0x200f: 'right-to-left mark',
  0x202a: 'left-to-right embedding',
  0x202b: 'right-to-left embedding',
  0x202c: 'pop directional formatting',
  0x202d: 'left-to-right override',
  0x202e: 'right-to-left override',
  0x2060: 'word joiner',
  0x2066: 'left-to-right isolate',
  0x2067: 'right-to-left isolate',
  0x2068: 'first strong isolate',
  0x2069: 'pop directional isolate',
  0xfeff: 'zero width no-break space',
};

/** Format characters (zero-width, bidi controls, tags: Unicode Cf) and control characters other than tab and line breaks. */
const HIDDEN = /[\p{Cf}\p{Cc}]/gu;

/** Where a text holds characters a page would not show, and what they are (index in UTF-16 code units, as spans are). */
export function hiddenCharacters(text: string): HiddenCharacterOutput[] {
  const found: HiddenCharacterOutput[] = [];
  for (const match of text.matchAll(HIDDEN)) {
    const point = match[0].codePointAt(0)!;
    if (point === 0x09 || point === 0x0a || point === 0x0d) continue;
    const name = NAMES[point] ?? (point >= 0xe0000 && point <= 0xe007f ? 'tag character' : point < 0x20 || (point >= 0x7f && point < 0xa0) ? 'control character' : 'format character');
    found.push({ index: match.index, code_point: `U+${point.toString(16).toUpperCase().padStart(4, '0')}`, name });
  }
  return found;
}
