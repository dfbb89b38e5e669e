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
  // NFKC changes nothing in ASCII text (most turns): skipped there.
  let normal = (ASCII.test(text) ? text : text.normalize('NFKC')).toLowerCase();
  if (APOSTROPHE.test(normal)) {
    normal = normal.replace(/[’‘ʼ]/g, "'");
    for (const [pattern, replacement] of CONTRACTIONS) normal = normal.replace(pattern, replacement);
  }
  return normal.replace(/[^\p{L}\p{N}]+/gu, ' ').trim();
}

const ASCII = /^[\x00-\x7f]*$/;
const APOSTROPHE = /['’‘ʼ]/;

/** The last key computed per record object (learning computes it, then the index's write path). */
const computed = new WeakMap<object, { text: string; speaker: string | null; key: string | null }>();

/**
 * The duplicate key of a memory (issue 33, near-duplicates merged when learned): a hash of its
 * speaker and {@link normaliseForDuplicates normalised} text, or null for a memory that is never
 * merged: a document piece, or fewer than {@link DUPLICATE_MIN_WORDS} words (a short reply is
 * found through its neighbours' words, which a merge would lose). Indexes that support
 * `findDuplicates` store it with each record at upsert.
 */
export function duplicateKey(record: Pick<MemoryRecord | MemoryHitRecord, 'text' | 'speaker' | 'source'>): string | null {
  if (record.source.kind !== 'turn') return null;
  const known = computed.get(record);
  if (known && known.text === record.text && known.speaker === record.speaker) return known.key;
  const normal = normaliseForDuplicates(record.text);
  const key = normal.split(' ').length < DUPLICATE_MIN_WORDS ? null : createHash('sha256').update(`${record.speaker ?? ''}\n${normal}`).digest('base64url');
  computed.set(record, { text: record.text, speaker: record.speaker, key });
  return key;
}
