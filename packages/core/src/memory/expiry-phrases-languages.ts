import * as chrono from 'chrono-node';
import type { TextLanguage } from '../embedding/text-analysis.js';
import { MAX_AHEAD_MS, MAX_BOUNDED_CHARS, dateRightAfter } from './expiry-phrases.js';

type Other = Exclude<TextLanguage, 'en'>;

/**
 * Expiry (issue 42) in German, French, Spanish, Portuguese, Italian and Dutch (issue 44): narrower
 * than English, since a memory that expires is gone from every answer. Two forms count:
 * 1. a verb of lapsing right before its date ("mein Abo endet am 3. April", "mon abonnement expire
 *    le 3 avril", "mi suscripción vence el 3 de abril", "a assinatura expira em 3 de abril",
 *    "l'abbonamento scade il 3 aprile", "mijn abonnement verloopt op 3 april");
 * 2. "until" a date (`bis`, `jusqu'à`, `hasta`, `até`, `fino a`, `tot`) in a clause that holds a
 *    present or future verb of being or staying and no past marker (a past tense, a past
 *    participle where one is cheap to see, "yesterday", "ago").
 * The date is read by chrono's parser of that language, after the turn and within five years; the
 * latest bound wins; a day without a time ends at the end of that day (UTC). More than two
 * sentences or 300 characters: none. Returns an ISO date-time, or null.
 */
export function expiryInLanguage(language: Other, text: string, reference: Date): string | null {
  const at = reference.getTime();
  if (Number.isNaN(at) || text.length > MAX_BOUNDED_CHARS || text.split(SENTENCE_END).length > 2) return null;
  const cues = CUES[language];
  let latest: number | null = null;
  const consider = (fragment: string) => {
    const instant = dateRightAfter(fragment, reference, cues.parser, cues.lead);
    if (instant === null || !(instant > at) || instant > at + MAX_AHEAD_MS) return;
    if (latest === null || instant > latest) latest = instant;
  };
  for (const clause of text.split(cues.clauseEnd)) {
    for (const match of clause.matchAll(cues.lapses)) consider(clause.slice(match.index + match[0].length));
    if (cues.presentOrFuture.test(clause) && !cues.past.test(clause)) {
      for (const match of clause.matchAll(cues.until)) consider(clause.slice(match.index + match[0].length));
    }
  }
  return latest === null ? null : new Date(latest).toISOString();
}

/** A sentence ends at `.`, `!` or `?` and a blank, but not at a German ordinal's dot (`3. April`). */
const SENTENCE_END = /(?<=[.!?])(?<!\d\.)\s+(?=\S)/u;
const CLAUSE_END = '(?<=[.!?;])(?<!\\d\\.)\\s+';

type Cues = { parser: chrono.Chrono; lead: RegExp; clauseEnd: RegExp; lapses: RegExp; until: RegExp; presentOrFuture: RegExp; past: RegExp };

/** A whole word of `alternatives` (JavaScript's `\b` does not know accented letters). */
const words = (alternatives: string, flags = 'iu') => new RegExp(`(?<![\\p{L}\\p{N}])(?:${alternatives})(?![\\p{L}\\p{N}])`, flags);
/** A cue followed by the blank (and the listed small words) before its date. */
const cue = (alternatives: string, then = '') => new RegExp(`(?<![\\p{L}\\p{N}])(?:${alternatives})\\s+${then ? `(?:(?:${then})\\s+)?` : ''}`, 'giu');

const CUES: Record<Other, Cues> = {
  de: {
    parser: chrono.de.casual,
    lead: /^(?:(?:am|zum|den|dem)\s+)?$/iu,
    clauseEnd: new RegExp(`${CLAUSE_END}|,?\\s+(?:aber|obwohl|während|jedoch)\\s+`, 'iu'),
    lapses: cue('endet|enden|läuft\\s+ab|verfällt|verfallen|erlischt', 'am|zum|mit|dem'),
    until: cue('bis', 'zum|zur|am|einschließlich|nächsten|nächste'),
    presentOrFuture: words('bin|bist|ist|sind|seid|bleibe|bleibst|bleibt|bleiben|werde|wirst|wird|werden|gilt|gelten|habe|hat|haben'),
    past: words('war|warst|waren|wart|hatte|hattest|hatten|wurde|wurden|gestern|vorgestern|damals|früher|letzte|letzten|letztes|ge\\p{L}+(?:t|en)'),
  },
  fr: {
    parser: chrono.fr.casual,
    lead: /^(?:(?:le|la|au)\s+)?$/iu,
    clauseEnd: new RegExp(`${CLAUSE_END}|,?\\s+(?:mais|bien que|alors que|quoique)\\s+`, 'iu'),
    lapses: cue('expire|expirent|expirera|prend fin|prendra fin|se termine|se terminera|finit|finira', 'le|la|au|en'),
    until: /(?<![\p{L}\p{N}])jusqu['’](?:au|à|a|en)\s+(?:(?:le|la)\s+)?/giu,
    presentOrFuture: words('suis|es|est|sommes|êtes|sont|serai|seras|sera|serons|seront|reste|restes|restons|restent|resterai|restera|vais|va|vont|valable|valables|valide'),
    past: words('étais|était|étions|étaient|été|avais|avait|avions|avaient|hier|avant-hier|dernier|dernière|il y a|\\p{L}{2,}(?:é|ée|és|ées)'),
  },
  es: {
    parser: chrono.es.casual,
    lead: /^(?:(?:el|la)\s+)?$/iu,
    clauseEnd: new RegExp(`${CLAUSE_END}|,?\\s+(?:pero|aunque|mientras que)\\s+`, 'iu'),
    lapses: cue('vence|vencerá|caduca|caducará|expira|expirará|termina|terminará|acaba|acabará', 'el|la|en'),
    until: cue('hasta', 'el|la'),
    presentOrFuture: words('estoy|estás|está|estamos|están|soy|eres|es|somos|son|estaré|estará|estaremos|estarán|será|serán|quedo|queda|quedamos|quedan|voy|va|vamos|van|vale|válido|válida'),
    past: words('estaba|estaban|estuve|estuvo|estuvimos|era|eran|fui|fue|fuimos|fueron|había|habían|ayer|anteayer|pasado|pasada|hace|\\p{L}{2,}(?:ado|ada|ido|ida|é|ó)'),
  },
  pt: {
    parser: chrono.pt.casual,
    lead: /^(?:(?:o|a|ao|à|dia)\s+)?$/iu,
    clauseEnd: new RegExp(`${CLAUSE_END}|,?\\s+(?:mas|embora|enquanto)\\s+`, 'iu'),
    lapses: cue('vence|vencerá|expira|expirará|termina|terminará|acaba|acabará', 'em|no|na|a|o|dia'),
    until: cue('até', 'o|a|ao|à|dia'),
    presentOrFuture: words('estou|estás|está|estamos|estão|sou|és|é|somos|são|estarei|estará|estaremos|estarão|será|serão|fico|fica|ficamos|ficam|vou|vai|vamos|vão|vale|válido|válida'),
    past: words('estava|estavam|estive|esteve|estivemos|era|eram|fui|foi|fomos|foram|tinha|tinham|ontem|anteontem|passado|passada|atrás|\\p{L}{2,}(?:ado|ada|ido|ida)'),
  },
  it: {
    parser: chrono.it.casual,
    lead: /^(?:(?:il|lo|la|l['’])\s*)?$/iu,
    clauseEnd: new RegExp(`${CLAUSE_END}|,?\\s+(?:ma|sebbene|mentre|anche se)\\s+`, 'iu'),
    lapses: cue('scade|scadrà|scadono|termina|terminerà|finisce|finirà', 'il|lo|la|a|al|alla|l'),
    until: /(?<![\p{L}\p{N}])(?:fino|sino)\s+(?:a|al|alla|all['’])\s*/giu,
    presentOrFuture: words('sono|sei|è|siamo|siete|sarò|sarà|saremo|saranno|resto|resti|resta|restiamo|restano|rimango|rimane|rimaniamo|rimangono|vado|va|andiamo|vanno|valido|valida'),
    past: words('ero|era|eravamo|erano|fui|fu|stato|stata|stati|state|avevo|aveva|avevamo|avevano|ieri|scorso|scorsa|fa|\\p{L}{2,}(?:ato|ata|ati|ate|uto|uta|ito|ita)'),
  },
  nl: {
    parser: chrono.nl.casual,
    lead: /^(?:(?:op|de|het)\s+)?$/iu,
    clauseEnd: new RegExp(`${CLAUSE_END}|,?\\s+(?:maar|hoewel|terwijl)\\s+`, 'iu'),
    lapses: cue('verloopt|verlopen|vervalt|vervallen|eindigt|eindigen|loopt\\s+af', 'op|de|het'),
    until: cue('tot', 'en met|op|de|het'),
    presentOrFuture: words('ben|bent|is|zijn|blijf|blijft|blijven|zal|zult|zullen|ga|gaat|gaan|geldig'),
    past: words('was|waren|had|hadden|werd|werden|gisteren|eergisteren|vorige|vorig|geleden|ge\\p{L}+(?:d|t|en)'),
  },
};
