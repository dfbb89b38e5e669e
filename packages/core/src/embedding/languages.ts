/**
 * Non-English text analysis (issue 44): which language a text is in, and its terms in that
 * language. English text never comes here: {@link analyze} keeps today's English pipeline byte for
 * byte, so every term stored before this change is still what a query of the same text makes.
 *
 * - Detection: a vote of stop words (and a few letters only one language uses) over German,
 *   French, Spanish, Portuguese, Italian and Dutch against the English stop words. English wins
 *   ties, short and ambiguous text: a text is another language only when that language has at
 *   least two votes, more than English and one for every eight words ({@link voteLanguage}).
 * - Terms: NFKC, lower case with `ß` → `ss`, apostrophes split words (`l'homme` → `l`, `homme`;
 *   the elided article is a stop word), that language's stop words and one-letter tokens dropped,
 *   the Snowball stemmer of that language (`@orama/stemmers`), then accents folded (`é` → `e`), so
 *   `Hélène` and `Helene` meet. Tokens with digits are kept verbatim, as in English.
 */
import { stemmer as germanStemmer } from '@orama/stemmers/german';
import { stemmer as frenchStemmer } from '@orama/stemmers/french';
import { stemmer as spanishStemmer } from '@orama/stemmers/spanish';
import { stemmer as portugueseStemmer } from '@orama/stemmers/portuguese';
import { stemmer as italianStemmer } from '@orama/stemmers/italian';
import { stemmer as dutchStemmer } from '@orama/stemmers/dutch';
import { stopwords as germanStopWords } from '@orama/stopwords/german';
import { stopwords as frenchStopWords } from '@orama/stopwords/french';
import { stopwords as spanishStopWords } from '@orama/stopwords/spanish';
import { stopwords as portugueseStopWords } from '@orama/stopwords/portuguese';
import { stopwords as italianStopWords } from '@orama/stopwords/italian';
import { stopwords as dutchStopWords } from '@orama/stopwords/dutch';

/** The languages the analyzer tells apart; `en` is the default. */
export type TextLanguage = 'en' | 'de' | 'fr' | 'es' | 'pt' | 'it' | 'nl';

export const TEXT_LANGUAGES: readonly TextLanguage[] = ['en', 'de', 'fr', 'es', 'pt', 'it', 'nl'];

/** A language other than English. */
export type OtherLanguage = Exclude<TextLanguage, 'en'>;
type Other = OtherLanguage;

/** Question words the Snowball lists leave out: stop words in a question, and votes. */
const QUESTION_WORDS: Record<Other, readonly string[]> = {
  de: ['wo', 'woher', 'wohin', 'wer', 'wen', 'wem', 'wann', 'warum', 'wieso', 'weshalb', 'welche', 'welcher', 'welches', 'welchen', 'wieviel', 'wie', 'was'],
  fr: ['où', 'quand', 'comment', 'pourquoi', 'quoi', 'combien', 'lequel', 'laquelle', 'lesquels', 'lesquelles', 'est', 'ce'],
  es: ['dónde', 'cuándo', 'cómo', 'qué', 'quién', 'quiénes', 'cuál', 'cuáles', 'cuánto', 'cuántos', 'cuánta', 'cuántas', 'adónde'],
  pt: ['onde', 'quando', 'como', 'quem', 'qual', 'quais', 'quanto', 'quantos', 'quanta', 'quantas', 'porque', 'porquê', 'aonde'],
  it: ['dove', 'quando', 'come', 'chi', 'quale', 'quali', 'quanto', 'quanti', 'quanta', 'quante', 'perché', 'cosa'],
  nl: ['waar', 'wanneer', 'hoe', 'wie', 'wat', 'welke', 'welk', 'waarom', 'hoeveel', 'waarheen', 'waarvandaan'],
};

/**
 * Words of the Spanish list (the stopwords-iso list Orama ships, much longer than the Snowball one)
 * that carry content in a memory: work, time, days and places, numbers. Kept as terms.
 */
const SPANISH_CONTENT = new Set([
  'actualmente', 'acuerdo', 'ayer', 'hoy', 'horas', 'dia', 'dias', 'día', 'días', 'tiempo', 'tarde', 'temprano', 'pronto',
  'trabaja', 'trabajais', 'trabajamos', 'trabajan', 'trabajar', 'trabajas', 'trabajo', 'pais', 'paìs', 'lugar', 'lado',
  'fin', 'final', 'valor', 'verdad', 'verdadera', 'verdadero', 'momento', 'ejemplo', 'general', 'manera', 'modo', 'parte',
  'cinco', 'seis', 'siete', 'ocho', 'cuatro', 'tres', 'dos', 'primer', 'primera', 'primero', 'primeros', 'segunda',
  'segundo', 'tercera', 'nueva', 'nuevas', 'nuevo', 'nuevos', 'gran', 'grandes', 'mayor', 'mejor', 'peor', 'buen', 'buena',
  'buenas', 'bueno', 'buenos', 'mal', 'largo', 'breve', 'cerca', 'lejos', 'arriba', 'encima', 'enfrente', 'atras', 'detras',
  'detrás', 'pasada', 'pasado', 'proximo', 'próximo', 'próximos', 'última', 'últimas', 'último', 'últimos', 'ultimo',
  'anterior', 'siguiente', 'total', 'usa', 'uso', 'cosas', 'conocer', 'habla', 'hablan', 'lleva', 'llevar', 'llegó',
]);

const STOP_WORDS: Record<Other, ReadonlySet<string>> = {
  de: new Set([...germanStopWords, ...QUESTION_WORDS.de]),
  fr: new Set([...frenchStopWords, ...QUESTION_WORDS.fr]),
  es: new Set([...spanishStopWords.filter((word) => !SPANISH_CONTENT.has(word)), ...QUESTION_WORDS.es]),
  pt: new Set([...portugueseStopWords, ...QUESTION_WORDS.pt]),
  it: new Set([...italianStopWords, ...QUESTION_WORDS.it]),
  nl: new Set([...dutchStopWords, ...QUESTION_WORDS.nl]),
};

const STEMMERS: Record<Other, (word: string) => string> = {
  de: germanStemmer,
  fr: frenchStemmer,
  es: spanishStemmer,
  pt: portugueseStemmer,
  it: italianStemmer,
  nl: dutchStemmer,
};

/** Letters (and marks) that only that language of the six writes: one more vote when present. */
const OWN_LETTERS: Record<Other, RegExp | null> = {
  de: /[äöüß]/iu,
  fr: /[çœèêëîïûù]/iu,
  es: /[ñ¿¡]/iu,
  pt: /[ãõ]/iu,
  it: /[òì]/iu,
  nl: null,
};

/**
 * Frequent words of each language that its stop list leaves out: votes only, never dropped from
 * the terms.
 */
const MORE_VOTES: Record<Other, readonly string[]> = {
  de: ['seit', 'auch', 'noch', 'schon', 'sehr', 'immer', 'gerne', 'heute', 'morgen', 'gestern', 'jetzt', 'bitte', 'danke'],
  fr: ['depuis', 'chez', 'très', 'aussi', 'toujours', 'déjà', 'encore', 'beaucoup', 'ça', 'aujourd', 'hier', 'demain', 'merci', 'oui'],
  es: ['desde', 'también', 'hoy', 'ayer', 'mañana', 'gracias', 'muy', 'sí', 'aquí'],
  pt: ['desde', 'também', 'muito', 'ainda', 'já', 'sempre', 'hoje', 'ontem', 'amanhã', 'obrigado', 'obrigada', 'sim', 'você'],
  it: ['anche', 'molto', 'ancora', 'già', 'sempre', 'oggi', 'ieri', 'domani', 'grazie'],
  nl: ['sinds', 'ook', 'nog', 'heel', 'erg', 'altijd', 'graag', 'vandaag', 'gisteren', 'morgen', 'bedankt', 'niet', 'naar'],
};

/** One-letter words that vote (other single letters, as Orama's Spanish list has them all, do not). */
const ONE_LETTER_VOTES = new Set(['à', 'y', 'e', 'o', 'é', 'a']);

/** Word → the languages (bit per {@link OTHERS} index) whose stop words or votes hold it. */
const VOTES = new Map<string, number>();
const OTHERS = TEXT_LANGUAGES.filter((language): language is Other => language !== 'en');
OTHERS.forEach((language, bit) => {
  for (const word of [...STOP_WORDS[language], ...MORE_VOTES[language]]) {
    if (word.length === 1 && !ONE_LETTER_VOTES.has(word)) continue;
    VOTES.set(word, (VOTES.get(word) ?? 0) | (1 << bit));
  }
});

const ENGLISH_BIT = 1 << 6;
const OTHER_BITS = ENGLISH_BIT - 1;
const VOTERS = new WeakMap<ReadonlySet<string>, Map<string, number>>();

/** {@link VOTES} with the English stop words as one more bit: one lookup a word. */
function votersWith(englishStopWords: ReadonlySet<string>): Map<string, number> {
  let voters = VOTERS.get(englishStopWords);
  if (!voters) {
    voters = new Map(VOTES);
    for (const word of englishStopWords) voters.set(word, (voters.get(word) ?? 0) | ENGLISH_BIT);
    VOTERS.set(englishStopWords, voters);
  }
  return voters;
}

const ANY_OWN_LETTER = /[äöüßçœèêëîïûùñ¿¡ãõòì]/iu;
/** Words that vote. */
const VOTE_WINDOW = 64;

/**
 * The language of a text from its word `tokens` (lower case, apostrophes dropped, as `tokenize`
 * makes them; the first {@link VOTE_WINDOW}) and the text itself: a vote of its words (each votes for every language whose
 * stop words or frequent words hold it; a letter only one language uses adds one) against the
 * English stop words (`englishStopWords`). Another language must have at least `minimum` votes,
 * more than English and one for every eight words; ties and anything less stay English, so short,
 * mixed and code-like text stays English.
 */
export function voteLanguage(tokens: readonly string[], text: string, englishStopWords: ReadonlySet<string>, minimum = 2): TextLanguage {
  const voters = votersWith(englishStopWords);
  let english = 0;
  let voted = 0;
  const votes = [0, 0, 0, 0, 0, 0];
  // The first words decide: a memory's indexed text is its own words first, then its keywords
  // (dates, names, the neighbouring turns), and the vote then costs the same for any length.
  const words = Math.min(tokens.length, VOTE_WINDOW);
  for (let i = 0; i < words; i++) {
    const bits = voters.get(tokens[i]!);
    if (bits === undefined) continue;
    if (bits & ENGLISH_BIT) english++;
    if ((bits & OTHER_BITS) === 0) continue;
    voted++;
    for (let bit = 0; bit < 6; bit++) if (bits & (1 << bit)) votes[bit]!++;
  }
  // No language can outvote English (a letter adds one at most): the common case, decided at once.
  if (voted + 1 <= english || voted + 1 < minimum) return 'en';
  const ownLetters = ANY_OWN_LETTER.test(text);
  let best: TextLanguage = 'en';
  let bestVotes = minimum - 1;
  OTHERS.forEach((language, bit) => {
    const letters = OWN_LETTERS[language];
    const count = votes[bit]! + (ownLetters && letters !== null && letters.test(text) ? 1 : 0);
    if (count > bestVotes) {
      best = language;
      bestVotes = count;
    }
  });
  // Prose has a stop word every two or three words; code, lists and addresses far fewer.
  return bestVotes > english && bestVotes * 8 >= words ? best : 'en';
}

const APOSTROPHE_OR_NOT_WORD = /[^\p{L}\p{M}\p{N}]+/u;
const DIGIT = /\p{N}/u;
const MARKS = /\p{M}+/gu;

/** Per-language bounded caches of token → term (cleared when full, as the English one). */
const TERMS = new Map<Other, Map<string, string>>(OTHERS.map((language) => [language, new Map()]));
const TERM_CACHE_SIZE = 20_000;

/** NFKC, lower case, `ß` → `ss` (Unicode case folding for the six languages). */
export function foldCase(text: string): string {
  return text.normalize('NFKC').toLowerCase().replace(/ß/gu, 'ss');
}

/** The term of one token of `language`: its Snowball stem, accents folded. */
function termOf(language: Other, token: string): string {
  const cache = TERMS.get(language)!;
  let term = cache.get(token);
  if (term === undefined) {
    const stemmed = DIGIT.test(token) ? token : STEMMERS[language](token);
    term = stemmed.normalize('NFD').replace(MARKS, '').normalize('NFC');
    if (cache.size >= TERM_CACHE_SIZE) cache.clear();
    cache.set(token, term);
  }
  return term;
}

/**
 * Index and query terms of `text` read as `language` (not English): tokens without that language's
 * stop words, stemmed, accents folded, in order with duplicates (for term frequency).
 *
 * @example analyzeAs('fr', "L'homme habite à Lyon") // ['homm', 'habit', 'lyon']
 */
export function analyzeAs(language: OtherLanguage, text: string): string[] {
  const stops = STOP_WORDS[language];
  const terms: string[] = [];
  for (const token of foldCase(text).split(APOSTROPHE_OR_NOT_WORD)) {
    if (token.length === 0) continue;
    if (token.length === 1 && !DIGIT.test(token)) continue;
    if (stops.has(token)) continue;
    terms.push(termOf(language, token));
  }
  return terms;
}
