import * as chrono from 'chrono-node';
import { detectLanguage, type TextLanguage } from '../embedding/text-analysis.js';
import { resolveRelativeDates, type ResolvedDate } from './relative-dates.js';

/**
 * Relative dates in German, French, Spanish, Portuguese, Italian and Dutch (issue 44), read by
 * chrono-node's parser of that language against the time the turn was said: "gestern", "hier",
 * "ayer", "ontem", "ieri", "gisteren", "letzte Woche", "il y a 3 jours", "vorige maand",
 * "vendredi prochain"... Only what is relative counts, as in English: a date the text states
 * ("am 3. März", "le 12/03/2026") is already in its words. What each parser knows differs:
 * chrono's Spanish and Portuguese read "ayer"/"ontem" and "mañana"/"amanhã" but not "la semana
 * pasada" or "hace 3 días".
 */
const PARSERS: Record<Exclude<TextLanguage, 'en'>, chrono.Chrono> = {
  de: chrono.de.casual,
  fr: chrono.fr.casual,
  es: chrono.es.casual,
  pt: chrono.pt.casual,
  it: chrono.it.casual,
  nl: chrono.nl.casual,
};

const WEEK_WORD = /\b(?:woche|wochen|semaine|semaines|semana|semanas|settimana|settimane|week|weken)\b/iu;
const DIGIT = /\d/u;

const ymd = (instant: number) => new Date(instant).toISOString().slice(0, 10);

/** Every relative date of `text` in `language` (not English), resolved against `reference` (UTC days). */
export function resolveRelativeDatesOf(language: Exclude<TextLanguage, 'en'>, text: string, reference: Date): ResolvedDate[] {
  const resolved: ResolvedDate[] = [];
  for (const found of PARSERS[language].parse(text, { instant: reference, timezone: 0 })) {
    const start = found.start;
    const phrase = found.text.toLowerCase();
    const date = start.date();
    const day = Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate());
    // A weekday said with a word around it ("nächsten Freitag", "vendredi dernier"); a bare
    // weekday name is too loose, as in English.
    if (start.isCertain('weekday') && !start.isCertain('day')) {
      if (phrase.includes(' ')) resolved.push({ phrase, date: ymd(day), granularity: 'day' });
      continue;
    }
    // Relative forms come back with their year implied by the reference (chrono marks it certain);
    // a stated date leaves the year open or names it with digits.
    if (!start.isCertain('year') || (DIGIT.test(phrase) && !found.tags().has('result/relativeDate'))) continue;
    if (!start.isCertain('month')) resolved.push({ phrase, date: `${date.getUTCFullYear()}-01-01`, granularity: 'year' });
    else if (!start.isCertain('day')) resolved.push({ phrase, date: ymd(Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1)), granularity: 'month' });
    else if (WEEK_WORD.test(phrase)) {
      const monday = day - ((new Date(day).getUTCDay() + 6) % 7) * 86_400_000;
      resolved.push({ phrase, date: ymd(monday), granularity: 'week' });
    } else resolved.push({ phrase, date: ymd(day), granularity: 'day' });
  }
  return resolved;
}

const LOCALES: Record<Exclude<TextLanguage, 'en'>, string> = { de: 'de-DE', fr: 'fr-FR', es: 'es-ES', pt: 'pt-PT', it: 'it-IT', nl: 'nl-NL' };
const NAMES = new Map<string, Intl.DateTimeFormat>();

/**
 * The month and weekday of `iso` in `language` ("März Dienstag"), so a question in that language
 * finds a memory by its date's names as an English one does by "March" and "tuesday". The month
 * alone for a month, nothing for a year.
 */
export function localDateNames(language: Exclude<TextLanguage, 'en'>, iso: string, granularity: ResolvedDate['granularity']): string {
  if (granularity === 'year') return '';
  const date = new Date(`${iso.slice(0, 10)}T00:00:00.000Z`);
  if (Number.isNaN(date.getTime())) return '';
  const format = (options: Intl.DateTimeFormatOptions) => {
    const key = `${language}:${JSON.stringify(options)}`;
    let formatter = NAMES.get(key);
    if (!formatter) NAMES.set(key, (formatter = new Intl.DateTimeFormat(LOCALES[language], { ...options, timeZone: 'UTC' })));
    return formatter.format(date);
  };
  const month = format({ month: 'long' });
  return granularity === 'month' ? month : `${month} ${format({ weekday: 'long' })}`;
}

/**
 * {@link resolveRelativeDates} for a text in any of the analyzer's languages: English text as
 * before, German, French, Spanish, Portuguese, Italian and Dutch through chrono's parser of that
 * language ({@link detectLanguage}).
 */
export function resolveRelativeDatesAnyLanguage(text: string, reference: Date, language: TextLanguage = detectLanguage(text)): ResolvedDate[] {
  return language === 'en' ? resolveRelativeDates(text, reference) : resolveRelativeDatesOf(language, text, reference);
}

/**
 * The dates a text in `language` states with its year ("am 3. März 2023", "en mai 2023", "el 8 de
 * mayo de 2023"): `[start, end)` in epoch ms (a day widened by one day each side, as the English
 * query patterns do; a month; a year), and the text with them blanked. For a question's time cue.
 */
export function statedDateRangesOf(language: Exclude<TextLanguage, 'en'>, text: string): { ranges: { start: number; end: number }[]; rest: string } {
  const ranges: { start: number; end: number }[] = [];
  let rest = text;
  for (const found of PARSERS[language].parse(text, { instant: new Date(0), timezone: 0 })) {
    const start = found.start;
    if (!start.isCertain('year') || found.tags().has('result/relativeDate') || !/\d{4}/u.test(found.text)) continue;
    const year = start.get('year')!;
    const month = (start.get('month') ?? 1) - 1;
    if (start.isCertain('day') && start.isCertain('month')) {
      const day = Date.UTC(year, month, start.get('day')!);
      ranges.push({ start: day - 86_400_000, end: day + 2 * 86_400_000 });
    } else if (start.isCertain('month')) ranges.push({ start: Date.UTC(year, month, 1), end: Date.UTC(year, month + 1, 1) });
    else ranges.push({ start: Date.UTC(year, 0, 1), end: Date.UTC(year + 1, 0, 1) });
    rest = rest.slice(0, found.index) + ' '.repeat(found.text.length) + rest.slice(found.index + found.text.length);
  }
  return { ranges, rest };
}
