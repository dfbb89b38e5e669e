/**
 * Current truth in retrieval (issue 32): what the best packed fact replaced, packed after the
 * current items as history, and the newer of two near-duplicate hits ranked first.
 */
import { analyze } from '../embedding/text-analysis.js';
import { CHANGE_CUE, extractClaims, sameAttribute, type FactClaim } from '../memory/fact-updates.js';
import type { MemoryHitRecord, MemoryIndex } from '../ports/memory-index.js';
import { formatContextItem } from './context.js';
import type { RetrievedItem } from './weights.js';

/** Packed items whose history is looked up: the first that states a fact among these. */
const HISTORY_LOOKUP_TOP = 3;
/** Superseded memories packed per current fact. */
const HISTORY_PER_FACT = 2;

/**
 * What the best packed fact replaced (issue 32): the first of the best {@link HISTORY_LOOKUP_TOP}
 * packed items that states a fact ({@link extractClaims}) and has a start of validity is looked up
 * as of just before it became true, with the same query (one more index search, reusing the query
 * vector, and only for such an item); the hits it superseded are its history.
 */
export async function historyOf(
  index: MemoryIndex,
  agentId: string,
  text: string,
  vector: Float32Array | null,
  packed: RetrievedItem[],
  limit: number,
  // The person's narrowing holds for history too: never a superseded memory of another's thread.
  threadIds: readonly string[] | undefined,
  // Expiry holds for history too (issue 42): an expired memory is never shown as what was true before.
  now?: string,
): Promise<{ record: MemoryHitRecord; replacedBy: number }[]> {
  const position = packed.slice(0, HISTORY_LOOKUP_TOP).findIndex((item) => item.record.validFrom !== null && extractClaims(item.record.text).length > 0);
  if (position === -1) return [];
  const current = packed[position]!.record;
  const before = new Date(Date.parse(current.validFrom!) - 1);
  if (Number.isNaN(before.getTime())) return [];
  const { lexical, semantic } = await index.search({ agentId, text, vector, limit, asOf: before.toISOString(), ...(threadIds === undefined ? {} : { threadIds }), ...(now === undefined ? {} : { now }) });
  const seen = new Set(packed.map((item) => item.record.id));
  const history: { record: MemoryHitRecord; replacedBy: number }[] = [];
  for (const hit of [...lexical, ...semantic]) {
    if (hit.record.supersededBy !== current.id || seen.has(hit.record.id) || history.length >= HISTORY_PER_FACT) continue;
    seen.add(hit.record.id);
    history.push({ record: hit.record, replacedBy: position + 1 });
  }
  return history;
}

/** Appends history items to the packed context while they fit (current items are never dropped for them). */
export function packHistory(packed: RetrievedItem[], memoryContext: string, history: { record: MemoryHitRecord; replacedBy: number }[], maxChars: number) {
  let context = memoryContext;
  const out = [...packed];
  for (const { record, replacedBy } of history) {
    const line = formatContextItem(out.length + 1, record, replacedBy);
    if (context.length + 1 + line.length > maxChars) break;
    context = `${context}\n${line}`;
    out.push({ record, score: 0, replacedBy });
  }
  return { packed: out, memoryContext: context };
}

/** Hits at the top of the ranking compared for {@link preferNewer}. */
export const NEWER_TIE_BREAK_TOP = 10;
/** A newer near-duplicate moves ahead of an older one when its score is at least this share of it. */
const NEWER_TIE_BREAK_SHARE = 0.5;
/** Content-term overlap (shared terms / terms of the shorter memory) above which two memories of one speaker say nearly the same. */
const NEAR_DUPLICATE_OVERLAP = 0.6;
/**
 * With a sentence model: two memories of one speaker answer the query by meaning alike when each
 * one's cosine to the query is at least this share of the best cosine among the candidates.
 */
export const SAME_ANSWER_SHARE = 0.7;
/**
 * With a sentence model: a newer memory of the same speaker that says something changed
 * ({@link STATED_CHANGE}) replaces an older one that answers the query, when each one's cosine to
 * the query is at least this share of the best. Lower than {@link SAME_ANSWER_SHARE} because the
 * words of a change ("Everyone calls the kitten Pepper these days") often sit further from the
 * question than the first statement did ("What is our kitten's name?"). Fitted on the
 * development fixtures (docs/benchmarks.md, "Current truth by meaning"): 0.4.
 */
export const STATED_CHANGE_SHARE = 0.4;
/**
 * A statement that something changed: the writer's change cues (now, switched, pushed, no longer,
 * ...) and the everyday words for "at present, unlike before" (these days, lately, nowadays,
 * from now on, at the moment).
 */
export const STATED_CHANGE = new RegExp(`${CHANGE_CUE.source}|\\b(?:these days|lately|nowadays|currently|from now on|at the moment|at present)\\b`, 'i');

/**
 * Retrieval prefers the newer of two near-duplicate hits about the same subject (issue 32): among
 * the best {@link NEWER_TIE_BREAK_TOP}, a memory said later that states the same attribute of the
 * same subject ("I live in Paris" / "I moved to Berlin": same speaker; "the meeting is ...": same
 * thread), or whose words mostly overlap (same speaker), or (with `meaning`, the vector channel's
 * cosines of a sentence model, by record id) that answers the query by meaning about as well as the
 * older one ({@link SAME_ANSWER_SHARE}, same speaker), moves just ahead of the older one when it
 * scored at least half as well. A general tie-break for what the writer was not sure enough to
 * supersede; ties of equal time keep the score order.
 */
export function preferNewer(items: RetrievedItem[], meaning: ReadonlyMap<string, number> | null = null): RetrievedItem[] {
  const top = items.slice(0, NEWER_TIE_BREAK_TOP);
  if (top.length < 2) return items;
  // Claims and terms only for the pairs that get that far (a newer item scoring close enough).
  const facts = new Map<RetrievedItem, { claims: FactClaim[]; terms: Set<string> }>();
  const factsOf = (item: RetrievedItem) => {
    let found = facts.get(item);
    if (!found) facts.set(item, (found = { claims: extractClaims(item.record.text), terms: new Set(analyze(item.record.text)) }));
    return found;
  };
  const times = new Map(top.map((item) => [item, timeOf(item.record)]));
  // By meaning (a sentence model's cosines to the query): both memories answer the query about as
  // well, so the later one is the better guess at what is true now ("my boss is Tom" after "I report
  // to Priya" for "Who is my boss?"), whatever words each uses.
  const best = meaning ? Math.max(0, ...meaning.values()) : 0;
  const answersAlike = (a: RetrievedItem, b: RetrievedItem) =>
    best > 0 && a.record.speaker !== null && a.record.speaker === b.record.speaker && (meaning!.get(a.record.id) ?? 0) >= SAME_ANSWER_SHARE * best && (meaning!.get(b.record.id) ?? 0) >= SAME_ANSWER_SHARE * best;
  const nearDuplicate = (a: RetrievedItem, b: RetrievedItem) => {
    if (answersAlike(a, b)) return true;
    const fa = factsOf(a);
    const fb = factsOf(b);
    const sameSpeaker = a.record.speaker === b.record.speaker;
    if (sameAttribute(fa.claims, fb.claims)) {
      const self = fa.claims.some((claim) => claim.subject === 'self' && fb.claims.some((other) => other.key === claim.key && other.subject === 'self'));
      return self ? sameSpeaker : a.record.source.threadId === b.record.source.threadId;
    }
    if (!sameSpeaker || fa.terms.size === 0 || fb.terms.size === 0) return false;
    let shared = 0;
    for (const term of fa.terms) if (fb.terms.has(term)) shared += 1;
    return shared / Math.min(fa.terms.size, fb.terms.size) >= NEAR_DUPLICATE_OVERLAP;
  };
  // A stated change (with a sentence model): the newer memory says something changed and both
  // answer the query by meaning, if less alike than SAME_ANSWER_SHARE asks; it replaces the older
  // one whatever their fused scores (the change's words are often further from the question).
  // A new value of the same thing counts as a stated change too: both give a number (a date, a
  // price, a count), none the same, and they share a word ("the proposal is due on June 2" / "the
  // proposal deadline is June 16").
  const newValue = (a: RetrievedItem, b: RetrievedItem) => {
    const [na, nb] = [numbersOf(a.record.text), numbersOf(b.record.text)];
    if (na.size === 0 || nb.size === 0 || [...nb].some((value) => na.has(value))) return false;
    const terms = factsOf(a).terms;
    return [...factsOf(b).terms].some((term) => terms.has(term));
  };
  const statedChange = (a: RetrievedItem, b: RetrievedItem) =>
    best > 0 &&
    a.record.speaker !== null &&
    a.record.speaker === b.record.speaker &&
    (meaning!.get(a.record.id) ?? 0) >= STATED_CHANGE_SHARE * best &&
    (meaning!.get(b.record.id) ?? 0) >= STATED_CHANGE_SHARE * best &&
    (STATED_CHANGE.test(b.record.text) || newValue(a, b));
  for (let i = 0; i < top.length; i++) {
    const older = top[i]!;
    const olderTime = times.get(older)!;
    for (let j = i + 1; j < top.length; j++) {
      const newer = top[j]!;
      if (!(times.get(newer)! > olderTime)) continue;
      if (!statedChange(older, newer) && (newer.score < NEWER_TIE_BREAK_SHARE * older.score || !nearDuplicate(older, newer))) continue;
      top.splice(j, 1);
      top.splice(i, 0, newer);
      break;
    }
  }
  return [...top, ...items.slice(NEWER_TIE_BREAK_TOP)];
}

/** The numbers a text gives ("June 16" -> 16, "42 euros" -> 42, "20 mg" -> 20), as written. */
function numbersOf(text: string): Set<string> {
  return new Set(text.match(/\d+(?:[.,]\d+)?/g) ?? []);
}

/** When a memory's fact became true (epoch ms): its validity start, else its date, else when it was learned. */
function timeOf(record: MemoryHitRecord): number {
  const time = Date.parse(record.validFrom ?? record.occurredAt ?? record.createdAt);
  return Number.isNaN(time) ? 0 : time;
}
