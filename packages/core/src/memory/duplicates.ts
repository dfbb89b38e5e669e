import { createHash } from 'node:crypto';
import type { MemoryHitRecord, MemoryRecord } from '../ports/memory-index.js';

/** Fewest words a memory needs to be merged: "Thanks!" or "Yes, sure." stay separate memories. */
export const DUPLICATE_MIN_WORDS = 4;

const CONTRACTIONS: [RegExp, string][] = [
  [/\bcan't\b/g, 'cannot'],
  [/\bwon't\b/g, 'will not'],
  [/n't\b/g, ' not'],
  [/'re\b/g, ' are'],
  [/'m\b/g, ' am'],
  [/'ll\b/g, ' will'],
  [/'ve\b/g, ' have'],
];

/**
 * A memory text as duplicates compare it: Unicode-normalised (NFKC), lower case, typographic
 * apostrophes made plain, unambiguous contractions expanded ("don't" -> "do not"; "'s" and "'d"
 * are left: they have two readings), every run of punctuation and whitespace one space.
 */
export function normaliseForDuplicates(text: string): string {
  let normal = text.normalize('NFKC').toLowerCase().replace(/[’‘ʼ]/g, "'");
  for (const [pattern, replacement] of CONTRACTIONS) normal = normal.replace(pattern, replacement);
  return normal.replace(/[^\p{L}\p{N}]+/gu, ' ').trim();
}

/**
 * The duplicate key of a memory (issue 33, near-duplicates merged when learned): a hash of its
 * speaker and {@link normaliseForDuplicates normalised} text, or null for a memory that is never
 * merged: a document piece, or fewer than {@link DUPLICATE_MIN_WORDS} words (a short reply is
 * found through its neighbours' words, which a merge would lose). Indexes that support
 * `findDuplicates` store it with each record at upsert.
 */
export function duplicateKey(record: Pick<MemoryRecord | MemoryHitRecord, 'text' | 'speaker' | 'source'>): string | null {
  if (record.source.kind !== 'turn') return null;
  const normal = normaliseForDuplicates(record.text);
  if (normal.split(' ').length < DUPLICATE_MIN_WORDS) return null;
  return createHash('sha256').update(`${record.speaker ?? ''}\n${normal}`).digest('base64url');
}
