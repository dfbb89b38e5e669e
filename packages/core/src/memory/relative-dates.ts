/**
 * Resolves relative time expressions ("yesterday", "last week", "3 days ago", "last Friday") against
 * the time a turn was said, so memories carry absolute dates. Deterministic and offline.
 */

export type ResolvedDate = {
  /** The phrase as it appeared (lower-cased). */
  phrase: string;
  /** `YYYY-MM-DD` of the resolved day (the first day of a resolved week, month or year). */
  date: string;
  granularity: 'day' | 'week' | 'month' | 'year';
};

const DAY_MS = 86_400_000;
const WEEKDAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'];
const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const NUMBER_WORDS: Record<string, number> = {
  a: 1, an: 1, one: 1, two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7, eight: 8, nine: 9, ten: 10,
  eleven: 11, twelve: 12, couple: 2, few: 3, several: 3,
};

const ymd = (date: Date) => date.toISOString().slice(0, 10);
const addDays = (date: Date, days: number) => new Date(date.getTime() + days * DAY_MS);
function addMonths(date: Date, months: number): Date {
  return new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + months, 1));
}

const PATTERN = new RegExp(
  [
    '\\b(yesterday|today|tonight|tomorrow|last night|this morning|this evening)\\b',
    '\\b(last|next|this) (week|month|year|weekend)\\b',
    '\\b(last|next|this) (sunday|monday|tuesday|wednesday|thursday|friday|saturday)\\b',
    '\\b(\\d{1,3}|a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|a couple of|a few|several) (days?|weeks?|months?|years?) (ago|from now)\\b',
    '\\b(the day before yesterday|the day after tomorrow)\\b',
  ].join('|'),
  'gi',
);

/** Every relative expression of `text`, resolved against `reference` (UTC calendar days). */
export function resolveRelativeDates(text: string, reference: Date): ResolvedDate[] {
  const resolved: ResolvedDate[] = [];
  const day = new Date(Date.UTC(reference.getUTCFullYear(), reference.getUTCMonth(), reference.getUTCDate()));
  PATTERN.lastIndex = 0;
  for (let match = PATTERN.exec(text); match !== null; match = PATTERN.exec(text)) {
    const phrase = match[0].toLowerCase();
    const result = resolvePhrase(phrase, day);
    if (result) resolved.push({ phrase, ...result });
  }
  return resolved;
}

function resolvePhrase(phrase: string, day: Date): Omit<ResolvedDate, 'phrase'> | null {
  switch (phrase) {
    case 'yesterday':
    case 'last night':
      return { date: ymd(addDays(day, -1)), granularity: 'day' };
    case 'today':
    case 'tonight':
    case 'this morning':
    case 'this evening':
      return { date: ymd(day), granularity: 'day' };
    case 'tomorrow':
      return { date: ymd(addDays(day, 1)), granularity: 'day' };
    case 'the day before yesterday':
      return { date: ymd(addDays(day, -2)), granularity: 'day' };
    case 'the day after tomorrow':
      return { date: ymd(addDays(day, 2)), granularity: 'day' };
  }
  const [first, second, third] = phrase.split(' ').length > 3 ? splitQuantity(phrase) : phrase.split(' ');
  if (first === 'last' || first === 'next' || first === 'this') {
    const direction = first === 'last' ? -1 : first === 'next' ? 1 : 0;
    const weekday = WEEKDAYS.indexOf(second ?? '');
    if (weekday >= 0) {
      const current = day.getUTCDay();
      let delta = weekday - current;
      if (direction < 0) delta = delta >= 0 ? delta - 7 : delta;
      else if (direction > 0) delta = delta <= 0 ? delta + 7 : delta;
      return { date: ymd(addDays(day, delta)), granularity: 'day' };
    }
    if (second === 'week' || second === 'weekend') {
      const monday = addDays(day, -((day.getUTCDay() + 6) % 7));
      const start = addDays(monday, 7 * direction + (second === 'weekend' ? 5 : 0));
      return { date: ymd(start), granularity: 'week' };
    }
    if (second === 'month') return { date: ymd(addMonths(day, direction)), granularity: 'month' };
    if (second === 'year') return { date: `${day.getUTCFullYear() + direction}-01-01`, granularity: 'year' };
    return null;
  }
  const amount = /^\d+$/.test(first ?? '') ? Number(first) : NUMBER_WORDS[first ?? ''];
  if (amount === undefined || !second || !third) return null;
  const sign = third === 'ago' ? -1 : 1;
  const unit = second.replace(/s$/, '');
  if (unit === 'day') return { date: ymd(addDays(day, sign * amount)), granularity: 'day' };
  if (unit === 'week') return { date: ymd(addDays(day, sign * amount * 7)), granularity: 'week' };
  if (unit === 'month') return { date: ymd(addMonths(day, sign * amount)), granularity: 'month' };
  if (unit === 'year') return { date: `${day.getUTCFullYear() + sign * amount}-01-01`, granularity: 'year' };
  return null;
}

/** "a couple of days ago" → ["couple", "days", "ago"]. */
function splitQuantity(phrase: string): string[] {
  const words = phrase.split(' ');
  const tail = words.slice(-2);
  const quantity = words.slice(0, -2).filter((word) => word !== 'a' && word !== 'of').join(' ') || 'a';
  return [quantity, ...tail];
}

/**
 * Words under which a date should be findable by full-text search: ISO date, "8 May 2023",
 * "May 2023", the weekday, the year.
 */
export function dateKeywords(iso: string, granularity: ResolvedDate['granularity'] = 'day'): string {
  const date = new Date(`${iso.slice(0, 10)}T00:00:00.000Z`);
  if (Number.isNaN(date.getTime())) return '';
  const month = MONTHS[date.getUTCMonth()]!;
  const year = date.getUTCFullYear();
  if (granularity === 'year') return `${year}`;
  if (granularity === 'month') return `${month} ${year}`;
  const weekday = WEEKDAYS[date.getUTCDay()]!;
  return `${iso.slice(0, 10)} ${date.getUTCDate()} ${month} ${year} ${weekday}`;
}
