/**
 * Absolute dates written in a turn ("on March 3rd", "3 March 2024", "2024-03-03", "in May"),
 * resolved to calendar days against the time the turn was said: a date without a year is the
 * occurrence nearest to that time (said in December, "January 5th" is next January's). Month names
 * count only capitalised ("May 3", not "may"), numeric day/month orders other than ISO are left
 * alone (3/4 is March 4th or April 3rd depending on the writer). Deterministic and offline.
 */
import type { ResolvedDate } from './relative-dates.js';

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
// Full names, and three-letter abbreviations (with an optional dot; "Sept" too), capitalised.
const MONTH = String.raw`(Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\.?`;
const DAY = String.raw`(\d{1,2})(?:st|nd|rd|th)?`;
const YEAR = String.raw`(?:,?\s+(\d{4}))?`;

const PATTERN = new RegExp(
  [
    String.raw`\b(\d{4})-(\d{2})-(\d{2})\b`,
    String.raw`\b${MONTH}\s+${DAY}\b${YEAR}`,
    String.raw`\b${DAY}\s+(?:of\s+)?${MONTH}(?![\p{L}])${YEAR}`,
    // "in March", "since March 2024" (not "since March 3rd": the day form above reads that).
    String.raw`\b(?:in|since|from|until|by|early|mid|late|end of|beginning of)\s+${MONTH}(?![\p{L}\d])(?!\s+\d{1,2}(?:st|nd|rd|th)?\b)(?:\s+(\d{4}))?`,
    String.raw`\b${MONTH}\s+(\d{4})\b`,
  ].join('|'),
  'gu',
);

const pad = (value: number) => String(value).padStart(2, '0');

function monthIndex(name: string): number {
  return MONTHS.findIndex((month) => month.startsWith(name.slice(0, 3)));
}

/** Every absolute date of `text`, resolved against `reference` (UTC calendar days). */
export function resolveAbsoluteDates(text: string, reference: Date): ResolvedDate[] {
  const found: ResolvedDate[] = [];
  PATTERN.lastIndex = 0;
  for (let match = PATTERN.exec(text); match !== null; match = PATTERN.exec(text)) {
    const [phrase, isoYear, isoMonth, isoDay, m1, d1, y1, d2, m2, y2, m3, y3, m4, y4] = match;
    let resolved: Omit<ResolvedDate, 'phrase'> | null = null;
    if (isoYear) resolved = day(Number(isoYear), Number(isoMonth) - 1, Number(isoDay));
    else if (m1) resolved = day(y1 ? Number(y1) : null, monthIndex(m1), Number(d1), reference);
    else if (m2) resolved = day(y2 ? Number(y2) : null, monthIndex(m2), Number(d2), reference);
    else if (m3) resolved = month(y3 ? Number(y3) : null, monthIndex(m3), reference);
    else if (m4) resolved = month(Number(y4), monthIndex(m4), reference);
    if (resolved) found.push({ phrase: phrase!.toLowerCase(), ...resolved });
  }
  return found;
}

function day(year: number | null, monthOfYear: number, dayOfMonth: number, reference?: Date): Omit<ResolvedDate, 'phrase'> | null {
  if (monthOfYear < 0 || monthOfYear > 11 || dayOfMonth < 1 || dayOfMonth > 31) return null;
  const resolvedYear = year ?? nearestYear(reference!, (y) => Date.UTC(y, monthOfYear, dayOfMonth));
  const date = new Date(Date.UTC(resolvedYear, monthOfYear, dayOfMonth));
  // "February 30th" is no day.
  if (date.getUTCMonth() !== monthOfYear) return null;
  return { date: `${resolvedYear}-${pad(monthOfYear + 1)}-${pad(dayOfMonth)}`, granularity: 'day' };
}

function month(year: number | null, monthOfYear: number, reference: Date): Omit<ResolvedDate, 'phrase'> | null {
  if (monthOfYear < 0) return null;
  const resolvedYear = year ?? nearestYear(reference, (y) => Date.UTC(y, monthOfYear, 15));
  return { date: `${resolvedYear}-${pad(monthOfYear + 1)}-01`, granularity: 'month' };
}

/** The year (the reference's, the one before or after) that puts the date nearest to `reference`. */
function nearestYear(reference: Date, at: (year: number) => number): number {
  const year = reference.getUTCFullYear();
  const time = reference.getTime();
  return [year - 1, year, year + 1].reduce((best, candidate) => (Math.abs(at(candidate) - time) < Math.abs(at(best) - time) ? candidate : best), year);
}
