import * as chrono from 'chrono-node';

/**
 * When a piece of a turn says, in so many words, that what it states ends (issue 42): "my trial
 * ends on 3 March", "the code is valid until Friday", "I'm in Lisbon until the end of the month",
 * "I'll be away for the next two weeks". Read against the turn's time, offline; the dates are
 * parsed by `chrono-node`, the cues below only say where a bounding date starts.
 *
 * Deliberately narrow: a memory that expires is gone from every answer, so a narrative ("we waited
 * until Friday", "I worked there for two years") must never be read as a bound. Only three forms
 * count, each stating a bound on something current or ahead:
 * 1. a thing that lapses (trial, subscription, code, pass, booking...) that ends, expires, runs out
 *    or is valid/open/available, followed by its date;
 * 2. "until"/"till"/"through" a date in a clause in the present or future ("I'm", "will", "is"...)
 *    with no past-tense marker;
 * 3. "for the next/coming/another N days|weeks|months" (a duration from when it was said).
 * The date must lie after the turn and within five years of it; of several bounds the latest wins
 * (a memory kept a little long is better than one lost early). A date without a time of day ends
 * at the end of that day (UTC). A piece longer than two sentences (or 300 characters) gets none:
 * its other sentences say more than the bounded one. Returns an ISO date-time, or null.
 */
export function expiryOf(text: string, reference: Date): string | null {
  const at = reference.getTime();
  // A bound ends the whole memory: only a short one (two sentences at most) is about that alone.
  if (Number.isNaN(at) || text.length > MAX_BOUNDED_CHARS || text.split(SENTENCE_END).length > 2) return null;
  let latest: number | null = null;
  const consider = (instant: number | null) => {
    if (instant === null || !(instant > at) || instant > at + MAX_AHEAD_MS) return;
    if (latest === null || instant > latest) latest = instant;
  };
  for (const clause of text.split(CLAUSE_END)) {
    for (const match of clause.matchAll(LAPSING)) consider(dateRightAfter(clause.slice(match.index + match[0].length), reference));
    if (PRESENT_OR_FUTURE.test(clause) && !PAST.test(clause)) {
      for (const match of clause.matchAll(UNTIL)) consider(dateRightAfter(clause.slice(match.index + match[0].length), reference));
    }
    for (const match of clause.matchAll(FOR_THE_NEXT)) consider(dateRightAfter(`in ${match[1]} ${match[2]}`, reference));
  }
  return latest === null ? null : new Date(latest).toISOString();
}

export const MAX_AHEAD_MS = 5 * 366 * 86_400_000;
export const MAX_BOUNDED_CHARS = 300;
export const SENTENCE_END = /(?<=[.!?])\s+(?=\S)/u;
const CLAUSE_END = /(?<=[.!?;])\s+|\s+(?:but|although|though|whereas)\s+/iu;

const LAPSING_THINGS =
  'trial|subscription|membership|offer|discount|code|coupon|voucher|pass|ticket|lease|contract|promotion|promo|sale|access|warranty|visa|permit|licen[cs]e|booking|reservation|deal|password|pin|badge|parking|insurance|policy|rental|sublet';
/** A thing that lapses, then (within a few words) the verb saying when. */
const LAPSING = new RegExp(
  `\\b(?:${LAPSING_THINGS})s?\\b[^.!?;]{0,40}?\\b(?:ends|ending|expires|expiring|runs out|lapses|will (?:end|expire|run out|lapse)|(?:is|are|stays|remains) (?:valid|good|open|available|active))\\s+(?:on\\s+|at\\s+|in\\s+|until\\s+|till\\s+|through\\s+|by\\s+)?`,
  'giu',
);
const UNTIL = /\b(?:until|till|through)\s+/giu;
const PRESENT_OR_FUTURE = /\b(?:i'm|i am|we're|we are|you're|you are|it's|it is|is|are|will|i'll|we'll|it'll|won't|can't|cannot|stays?|remains?)\b/iu;
const PAST = /\b(?:was|were|had|did|went|slept|spent|stayed|waited|lived|worked|used to|ago|past|last (?:night|week|month|year))\b/iu;
const COUNT = '\\d{1,3}|a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|a couple of|a few';
const FOR_THE_NEXT = new RegExp(`\\bfor\\s+(?:the\\s+)?(?:next|coming|another)\\s+(${COUNT})\\s+(hours?|days?|weeks?|months?)\\b`, 'giu');

/**
 * The instant of a date phrase starting `fragment` (chrono's `parser`, English by default, forward
 * from the turn), or null. `lead`: what may stand before the date (an article).
 */
export function dateRightAfter(fragment: string, reference: Date, parser: chrono.Chrono = chrono.casual, lead = /^(?:the\s+)?$/iu): number | null {
  const [found] = parser.parse(fragment.slice(0, 60), { instant: reference, timezone: 0 }, { forwardDate: true });
  if (!found || !lead.test(fragment.slice(0, found.index))) return null;
  // A time of day alone ("open until 10pm") is a daily hour, not an end.
  if (!found.start.isCertain('day') && !found.start.isCertain('weekday')) return null;
  const date = found.start.date();
  // "until Monday" said on a Monday is the next one.
  if (!found.start.isCertain('day') && date.toISOString().slice(0, 10) === reference.toISOString().slice(0, 10)) date.setUTCDate(date.getUTCDate() + 7);
  if (found.start.isCertain('hour')) return date.getTime();
  // A day without a time ends at the end of that day; a relative duration ("in two weeks") is exact.
  return found.text.startsWith('in ') ? date.getTime() : Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate() + 1);
}
