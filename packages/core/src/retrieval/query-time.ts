import { resolveRelativeDatesAnyLanguage, statedDateRangesOf } from '../memory/relative-dates-languages.js';
import { detectLanguage } from '../embedding/text-analysis.js';

/** A span of time a query talks about: `[start, end)` in epoch milliseconds. */
export type TimeRange = { start: number; end: number };

const DAY_MS = 86_400_000;
const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const MONTH = '(january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sept?|oct|nov|dec)\\.?';
const YEAR = '((?:19|20)\\d{2})';
const DAY = '(\\d{1,2})(?:st|nd|rd|th)?';

const monthIndex = (name: string) => MONTHS.indexOf(name.toLowerCase().slice(0, 3));
const utcDay = (year: number, month: number, day: number) => Date.UTC(year, month, day);

/** Patterns in order of precedence; the text a pattern matched is blanked so a coarser one does not match it again. */
const PATTERNS: { regex: RegExp; range: (match: RegExpExecArray) => TimeRange | null }[] = [
  {
    // 2023-05-08, 2023/05/08
    regex: new RegExp(`\\b${YEAR}[-/](\\d{1,2})[-/](\\d{1,2})\\b`, 'gi'),
    range: (m) => dayRange(Number(m[1]), Number(m[2]) - 1, Number(m[3])),
  },
  {
    // 8 May 2023, 8th of May, 2023
    regex: new RegExp(`\\b${DAY}\\s+(?:of\\s+)?${MONTH},?\\s+${YEAR}\\b`, 'gi'),
    range: (m) => dayRange(Number(m[3]), monthIndex(m[2]!), Number(m[1])),
  },
  {
    // May 8, 2023, May 8th 2023
    regex: new RegExp(`\\b${MONTH}\\s+${DAY},?\\s+${YEAR}\\b`, 'gi'),
    range: (m) => dayRange(Number(m[3]), monthIndex(m[1]!), Number(m[2])),
  },
  {
    // May 2023, May of 2023
    regex: new RegExp(`\\b${MONTH}\\s+(?:of\\s+)?${YEAR}\\b`, 'gi'),
    range: (m) => {
      const year = Number(m[2]);
      const month = monthIndex(m[1]!);
      return month < 0 ? null : { start: utcDay(year, month, 1), end: utcDay(year, month + 1, 1) };
    },
  },
  {
    // in 2023
    regex: new RegExp(`\\b${YEAR}\\b`, 'g'),
    range: (m) => ({ start: utcDay(Number(m[1]), 0, 1), end: utcDay(Number(m[1]) + 1, 0, 1) }),
  },
];

/** A day, widened by one day each side: people say "on the 8th" of things that happened the evening before. */
function dayRange(year: number, month: number, day: number): TimeRange | null {
  if (month < 0 || month > 11 || day < 1 || day > 31) return null;
  const start = utcDay(year, month, day);
  return { start: start - DAY_MS, end: start + 2 * DAY_MS };
}

/** "Today is 2023/12/21 (Thu)." — a query that states its own date; relative times resolve against it. */
const STATED_TODAY = /\b(?:today is|today's date is|the date is|current date:?)\s+([^.;\n)]*\)?)/i;

const COUNT_WORDS: Record<string, number> = {
  a: 1, one: 1, two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7, eight: 8, nine: 9, ten: 10, eleven: 11, twelve: 12,
  couple: 2, 'couple of': 2, few: 3, several: 4,
};
const UNIT_DAYS = { day: 1, week: 7, month: 31, year: 366 } as const;
/** "in the past two weeks", "over the last few months", "within the past 10 days", "the past year". */
const TRAILING_SPAN = /\b(?:in|during|over|within|for)?\s*the\s+(?:past|last|previous)\s+(?:(\d{1,3}|a|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|couple(?: of)?|few|several)\s+)?(day|week|month|year)s?\b/gi;

/** The spans ending at `reference` that `text` names, and the text with them blanked. */
function trailingSpans(text: string, reference: Date): { ranges: TimeRange[]; rest: string } {
  const ranges: TimeRange[] = [];
  const end = Date.UTC(reference.getUTCFullYear(), reference.getUTCMonth(), reference.getUTCDate()) + 2 * DAY_MS;
  const rest = text.replace(TRAILING_SPAN, (phrase: string, count: string | undefined, unit: keyof typeof UNIT_DAYS) => {
    const n = count === undefined ? 1 : /^\d/.test(count) ? Number(count) : (COUNT_WORDS[count.toLowerCase()] ?? 1);
    ranges.push({ start: end - (n * UNIT_DAYS[unit.toLowerCase() as keyof typeof UNIT_DAYS] + 3) * DAY_MS, end });
    return ' '.repeat(phrase.length);
  });
  return { ranges, rest };
}

/**
 * The spans of time a query names: absolute dates ("on 8 May, 2023", "in August 2023", "in 2024")
 * relative ones ("last week", "three days ago") and spans up to it ("in the past two weeks", "over
 * the last few months") resolved against the date the query states
 * ("Today is 2023/05/08.") or else `now` (epoch ms). The stated date itself is no span.
 */
export function queryTimeRanges(query: string, now: number): TimeRange[] {
  const { text, reference } = statedDate(query, now);
  // A question in another language: the dates it states, read by chrono's parser of it (issue 44).
  const language = detectLanguage(text);
  const stated = language === 'en' ? { ranges: [], rest: text } : statedDateRangesOf(language, text);
  const { ranges, rest: withoutDates } = absoluteRanges(stated.rest);
  ranges.unshift(...stated.ranges);
  if (!Number.isNaN(reference.getTime())) {
    const spans = trailingSpans(withoutDates, reference);
    ranges.push(...spans.ranges);
    for (const resolved of resolveRelativeDatesAnyLanguage(spans.rest, reference)) {
      const start = Date.parse(`${resolved.date}T00:00:00.000Z`);
      const days = { day: 1, week: 7, month: 31, year: 366 }[resolved.granularity];
      ranges.push({ start: start - DAY_MS, end: start + (days + 1) * DAY_MS });
    }
  }
  return ranges;
}

/**
 * What of a query to search for as words: without the date it states about itself and without the
 * spans up to it ("in the past two weeks", "over the last few months"), which
 * {@link queryTimeRanges} reads as time instead; their words ("past", "two", "weeks") would
 * otherwise match every memory that mentions some other fortnight. Absolute dates stay (memories
 * carry their dates as words too: "May 2023"), and so do relative points ("last week", "four weeks
 * ago"): people repeat those phrases, and the words find the turn that said them. Falls back to the
 * query when nothing else is left.
 */
export function searchableQuery(query: string, now: number): string {
  const { text, reference } = statedDate(query, now);
  if (Number.isNaN(reference.getTime())) return text || query;
  const searchable = trailingSpans(text, reference).rest.replace(/\s+/g, ' ').trim();
  return /\p{L}|\p{N}/u.test(searchable) ? searchable : text || query;
}

/**
 * Splits off the date a query states about itself ("… (Today is 2023/12/21 (Thu).)"): `text` is the
 * query without it (what to search for), `reference` the stated day (noon UTC) or else `now`.
 */
export function statedDate(query: string, now: number): { text: string; reference: Date } {
  const stated = STATED_TODAY.exec(query);
  if (!stated) return { text: query, reference: new Date(now) };
  const [range] = absoluteRanges(stated[1]!).ranges;
  const text = query.replace(stated[0], ' ').replace(/\(\s*[.]?\s*\)/g, ' ').trim();
  return { text, reference: range ? new Date(range.start + DAY_MS + DAY_MS / 2) : new Date(now) };
}

function absoluteRanges(query: string): { ranges: TimeRange[]; rest: string } {
  const ranges: TimeRange[] = [];
  let rest = query;
  for (const { regex, range } of PATTERNS) {
    regex.lastIndex = 0;
    rest = rest.replace(regex, (...args: unknown[]) => {
      const match = args.slice(0, -2) as unknown as RegExpExecArray;
      const found = range(match);
      if (found) ranges.push(found);
      return ' '.repeat(String(args[0]).length);
    });
  }
  return { ranges, rest };
}

/** Whether an ISO date-time falls inside any of the ranges. */
export function isWithin(iso: string | null, ranges: readonly TimeRange[]): boolean {
  if (iso === null || ranges.length === 0) return false;
  const time = Date.parse(iso);
  return ranges.some((range) => time >= range.start && time < range.end);
}
