import { electronicFormatIBAN, isValidIBAN } from 'ibantools';
import { findPhoneNumbersInText, type CountryCode } from 'libphonenumber-js';

/**
 * Redaction of personal data before anything is stored or embedded (issue 44): what an agent's
 * `extraction_policy.redact` names is replaced in each turn's text by a marker
 * (`[redacted:email]`) before the turn is stored, so the turn store, the memories, their keywords
 * and their vectors never hold it. Detection is offline and conservative, each kind with the check
 * its format carries, so ordinary numbers (dates, prices, order numbers) stay:
 * - `card_number`: 13 to 19 digits (spaces or dashes between groups) with a card network's leading
 *   digits (2-6) and a valid Luhn check digit;
 * - `iban`: an IBAN whose country length and mod-97 check digits are valid (`ibantools`);
 * - `phone`: a number `libphonenumber-js` finds and validates in the text: written in international
 *   form (`+49 30 …`), or in the national form of `phone_region` when the policy names one;
 * - `email`: an address of the usual form `local@domain.tld`;
 * - names the operator adds with the service option `redaction.patterns` (a national id format,
 *   an internal account number): each a regular expression of the operator's own, never the API
 *   caller's (an agent config only names them).
 */
export const BUILT_IN_REDACTIONS = ['card_number', 'email', 'iban', 'phone'] as const;
export type BuiltInRedaction = (typeof BUILT_IN_REDACTIONS)[number];

/** The service option: the operator's own kinds, by name (`national_id_de: /\b[0-9]{9}[A-Z]\b/`). */
export type RedactionOptions = { patterns?: Readonly<Record<string, RegExp>> };

/** What an agent's policy asks to redact, resolved against the service's kinds. */
export type RedactionPolicy = { kinds: readonly string[]; phoneRegion: string | null };

/** How many of each kind one text had. */
export type RedactionCounts = Record<string, number>;

/** The marker a redacted span becomes. */
export const redactionMarker = (kind: string) => `[redacted:${kind}]`;
const MARKER = /\[redacted:([a-z0-9_]+)\]/g;

/** A name the operator may give a kind of their own: lower-case words joined by `_`. */
export const REDACTION_NAME = /^[a-z][a-z0-9_]{0,39}$/;

/** The operator's patterns checked once, at service start: a clear sentence for a bad one. */
export function checkRedactionOptions(options: RedactionOptions | undefined): ReadonlyMap<string, RegExp> {
  const patterns = new Map<string, RegExp>();
  for (const [name, pattern] of Object.entries(options?.patterns ?? {})) {
    if (!REDACTION_NAME.test(name)) throw new TypeError(`redaction.patterns.${name}: a name is lower-case letters, digits and _, starting with a letter (at most 40)`);
    if ((BUILT_IN_REDACTIONS as readonly string[]).includes(name)) throw new TypeError(`redaction.patterns.${name}: ${name} is a built-in kind; give your pattern another name`);
    if (!(pattern instanceof RegExp)) throw new TypeError(`redaction.patterns.${name} must be a RegExp`);
    // Every match is replaced: a global copy, whatever flags it was given.
    patterns.set(name, new RegExp(pattern.source, pattern.flags.includes('g') ? pattern.flags : `${pattern.flags}g`));
  }
  return patterns;
}

type Span = { start: number; end: number; kind: string };

const EMAIL = /[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,24}/g;
/** 13-19 digits, single spaces or dashes allowed between them, not inside a longer run of digits. */
const CARD = /(?<![\d-])\d(?:[ -]?\d){12,18}(?![\d-])/g;
/** Two letters, two check digits, then 11-30 letters or digits, in groups of four or not. */
const IBAN = /\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}\b/g;

/** Four digits, with spaces, dots, dashes or brackets between them: the least a phone number holds. */
const FOUR_DIGITS = /\d(?:[\s().\/-]{0,3}\d){3}/;

function luhn(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let digit = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return sum % 10 === 0;
}

function matches(text: string, pattern: RegExp, kind: string, accept: (found: string) => boolean = () => true): Span[] {
  const spans: Span[] = [];
  for (const match of text.matchAll(pattern)) {
    if (match[0] !== '' && accept(match[0])) spans.push({ start: match.index, end: match.index + match[0].length, kind });
  }
  return spans;
}

function spansOf(text: string, kind: string, policy: RedactionPolicy, patterns: ReadonlyMap<string, RegExp>): Span[] {
  switch (kind) {
    case 'email':
      return matches(text, EMAIL, kind);
    case 'card_number':
      return matches(text, CARD, kind, (found) => {
        const digits = found.replace(/[ -]/g, '');
        return digits.length >= 13 && digits.length <= 19 && /^[2-6]/.test(digits) && luhn(digits);
      });
    case 'iban':
      return matches(text, IBAN, kind, (found) => isValidIBAN(electronicFormatIBAN(found) ?? ''));
    case 'phone': {
      // No phone number has fewer than four digits in a row (separators aside): most texts skip the parser.
      if (!FOUR_DIGITS.test(text)) return [];
      const found = policy.phoneRegion
        ? findPhoneNumbersInText(text, { defaultCountry: policy.phoneRegion as CountryCode })
        : findPhoneNumbersInText(text);
      return found.map((phone) => ({ start: phone.startsAt, end: phone.endsAt, kind }));
    }
    default: {
      const pattern = patterns.get(kind);
      return pattern ? matches(text, pattern, kind) : [];
    }
  }
}

/**
 * `text` with every span of the policy's kinds replaced by its marker, and how many of each were
 * replaced. Where two kinds overlap (a card number that is also a phone number) the earlier,
 * then longer, span wins. A text with nothing to redact comes back as it is.
 */
export function redact(text: string, policy: RedactionPolicy, patterns: ReadonlyMap<string, RegExp> = new Map()): { text: string; counts: RedactionCounts } {
  const spans = policy.kinds.flatMap((kind) => spansOf(text, kind, policy, patterns)).sort((a, b) => a.start - b.start || b.end - a.end);
  const counts: RedactionCounts = {};
  if (spans.length === 0) return { text, counts };
  let out = '';
  let at = 0;
  for (const span of spans) {
    if (span.start < at) continue;
    out += text.slice(at, span.start) + redactionMarker(span.kind);
    at = span.end;
    counts[span.kind] = (counts[span.kind] ?? 0) + 1;
  }
  return { text: out + text.slice(at), counts };
}

/** The redactions a stored text shows (its markers), by kind: what a receipt reports. */
export function redactionsIn(text: string): RedactionCounts {
  const counts: RedactionCounts = {};
  for (const match of text.matchAll(MARKER)) counts[match[1]!] = (counts[match[1]!] ?? 0) + 1;
  return counts;
}
