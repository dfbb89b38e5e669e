/**
 * The one text analyzer of memory-agents: full-text indexes (BM25 in memory, the Postgres
 * `tsvector`, the LanceDB FTS column) and the default hashed embedder all see the same terms, so a
 * word matches the same way in every channel and every backend.
 *
 * Pipeline: lower-case → split on anything that is not a letter or digit (apostrophes inside a word
 * are dropped: `john's` → `johns`) → drop stop words and one-letter tokens → light English stemming.
 * Text that {@link detectLanguage} reads as German, French, Spanish, Portuguese, Italian or Dutch
 * goes through that language's pipeline instead (./languages.ts: Snowball stemmer, its stop words,
 * case and accent folding, elision split); English output is unchanged (issue 44).
 */
import { analyzeAs, voteLanguage, type TextLanguage } from './languages.js';

export { TEXT_LANGUAGES, type TextLanguage } from './languages.js';

/**
 * English function words that carry no retrieval signal. Deliberately short: words that can be
 * content in memories (`may`, `march`, `will` as a name, `us`, numbers) are kept.
 */
export const STOP_WORDS: ReadonlySet<string> = new Set([
  'a', 'about', 'above', 'after', 'again', 'against', 'all', 'am', 'an', 'and', 'any', 'are', 'as', 'at',
  'be', 'because', 'been', 'before', 'being', 'below', 'between', 'both', 'but', 'by',
  'can', 'could', 'did', 'do', 'does', 'doing', 'down', 'during', 'each', 'few', 'for', 'from', 'further',
  'had', 'has', 'have', 'having', 'he', 'her', 'here', 'hers', 'herself', 'him', 'himself', 'his', 'how',
  'i', 'if', 'in', 'into', 'is', 'it', 'its', 'itself', 'just', 'me', 'more', 'most', 'my', 'myself',
  'no', 'nor', 'not', 'now', 'of', 'off', 'on', 'once', 'only', 'or', 'other', 'our', 'ours', 'ourselves',
  'out', 'over', 'own', 'same', 'she', 'should', 'so', 'some', 'such', 'than', 'that', 'the', 'their',
  'theirs', 'them', 'themselves', 'then', 'there', 'these', 'they', 'this', 'those', 'through', 'to', 'too',
  'under', 'until', 'up', 'very', 'was', 'we', 'were', 'what', 'when', 'where', 'which', 'while', 'who',
  'whom', 'why', 'with', 'would', 'you', 'your', 'yours', 'yourself', 'yourselves',
  'im', 'ive', 'id', 'ill', 'youre', 'youve', 'hes', 'shes', 'its', 'were', 'theyre', 'dont', 'doesnt',
  'didnt', 'isnt', 'arent', 'wasnt', 'werent', 'cant', 'wont', 'also', 'really', 'yeah', 'oh',
]);

// Letters and digits of any script; an apostrophe between letters stays part of the word.
const WORD = /[\p{L}\p{N}]+(?:['’][\p{L}\p{N}]+)*/gu;
const APOSTROPHES = /['’]/g;

/**
 * Lower-cased word tokens of `text` in order, apostrophes removed. No stop-word removal, no stemming.
 *
 * @example tokenize("John's running-shoes!") // ['johns', 'running', 'shoes']
 */
export function tokenize(text: string): string[] {
  const tokens: string[] = [];
  const lower = text.toLowerCase();
  WORD.lastIndex = 0;
  for (let match = WORD.exec(lower); match !== null; match = WORD.exec(lower)) {
    const word = match[0];
    tokens.push(word.includes("'") || word.includes('’') ? word.replace(APOSTROPHES, '') : word);
  }
  return tokens;
}

const VOWEL = /[aeiouy]/;
const DIGIT = /[0-9]/;

function hasVowel(stem: string): boolean {
  return VOWEL.test(stem);
}

function isConsonant(code: number): boolean {
  // a e i o u
  return code !== 97 && code !== 101 && code !== 105 && code !== 111 && code !== 117;
}

/** After removing `-ing` / `-ed`: `runn` → `run`, `hopp` → `hop`, but `fall` and `miss` stay. */
function undouble(stem: string): string {
  const length = stem.length;
  if (length < 3) return stem;
  const last = stem.charCodeAt(length - 1);
  if (last === stem.charCodeAt(length - 2) && isConsonant(last)) {
    const char = stem[length - 1];
    if (char !== 'l' && char !== 's' && char !== 'z') return stem.slice(0, -1);
  }
  return stem;
}

/**
 * Light English stemmer (a small subset of Porter step 1 and 2): plural and verb endings and a few
 * derivational suffixes. It only has to map related forms to the same key consistently; the keys are
 * not meant to be words. Tokens with digits and short tokens are returned unchanged.
 *
 * @example stem('running') // 'run';  stem('shoes') // 'shoe';  stem('stories') // 'stori' → same as stem('story')
 */
export function stem(word: string): string {
  const length = word.length;
  if (length <= 3) return word;
  // Tokens containing digits (dates, amounts, codes) are kept verbatim.
  if (DIGIT.test(word)) return word;
  let result = word;

  // Plurals and 3rd person.
  if (result.endsWith('sses')) result = result.slice(0, -2);
  else if (result.endsWith('ies')) result = result.length > 4 ? result.slice(0, -3) + 'i' : result.slice(0, -1);
  else if (result.endsWith('s') && !result.endsWith('ss') && !result.endsWith('us') && !result.endsWith('is')) {
    result = result.slice(0, -1);
  }

  // Past tense and gerund.
  if (result.endsWith('eed')) {
    if (result.length > 4) result = result.slice(0, -1);
  } else if (result.endsWith('ing') && result.length > 5 && hasVowel(result.slice(0, -3))) {
    result = undouble(result.slice(0, -3));
  } else if (result.endsWith('ed') && result.length > 4 && hasVowel(result.slice(0, -2))) {
    result = undouble(result.slice(0, -2));
  }

  // A final `y` after a consonant behaves like `i` (`story`, `stories`).
  if (result.length > 3 && result.endsWith('y') && isConsonant(result.charCodeAt(result.length - 2))) {
    result = result.slice(0, -1) + 'i';
  }

  // A few derivational suffixes (only on longer words, so short words are never mangled).
  if (result.length > 6) {
    if (result.endsWith('ational')) result = result.slice(0, -7) + 'ate';
    else if (result.endsWith('fulness')) result = result.slice(0, -4);
    else if (result.endsWith('ness')) result = result.slice(0, -4);
    else if (result.endsWith('ment') && result.length > 7) result = result.slice(0, -4);
    else if (result.endsWith('ation')) result = result.slice(0, -5) + 'ate';
    else if (result.endsWith('ously')) result = result.slice(0, -5) + 'ous';
    else if (result.endsWith('ly')) result = result.slice(0, -2);
  }
  // `-e` is dropped last so `make`/`making`, `hope`/`hoped`, `shoe`/`shoes` meet.
  if (result.length > 3 && result.endsWith('e') && !result.endsWith('ee')) result = result.slice(0, -1);
  return result;
}

/** True for stop words and one-letter non-digit tokens. */
export function isStopWord(token: string): boolean {
  if (token.length === 1) {
    const code = token.charCodeAt(0);
    return !(code >= 48 && code <= 57);
  }
  return STOP_WORDS.has(token);
}

/**
 * Index and query terms of `text`: tokens without stop words, stemmed, in order (duplicates kept so
 * callers can count term frequency).
 *
 * @example analyze('The runners were running in new shoes') // ['runner', 'run', 'new', 'sho']  (keys, not words: 'caroline' → 'carolin')
 */
export function analyze(text: string): string[] {
  const tokens = tokenize(text);
  const language = voteLanguage(tokens, text, STOP_WORDS);
  return language === 'en' ? analyzeEnglish(tokens) : analyzeAs(language, text);
}

/**
 * The language {@link analyze} reads `text` in: German, French, Spanish, Portuguese, Italian or
 * Dutch when that language's stop words (and letters) outvote English by at least two; else English.
 *
 * @example detectLanguage('Paul habite à Lyon depuis mars') // 'fr';  detectLanguage('Wo?') // 'en'
 */
export function detectLanguage(text: string): TextLanguage {
  return voteLanguage(tokenize(text), text, STOP_WORDS);
}

/**
 * Distinct query terms of `text` for a full-text search. English: {@link analyze}'s terms, as
 * before. Another language: its terms and, after them, the English pipeline's, so memories stored
 * before issue 44 (analyzed as English whatever their language) are still found.
 *
 * @example analyzeQuery('Où habite Paul ?') // ['habit', 'paul', 'où'] (French, then what the English pipeline adds)
 */
export function analyzeQuery(text: string): string[] {
  // A query is short: one vote for another language and none for English is enough (its English
  // terms are searched too, so reading an English query so costs no match).
  const tokens = tokenize(text);
  const language = voteLanguage(tokens, text, STOP_WORDS, 1);
  const english = analyzeEnglish(tokens);
  return [...new Set(language === 'en' ? english : [...analyzeAs(language, text), ...english])];
}

function analyzeEnglish(tokens: readonly string[]): string[] {
  const terms: string[] = [];
  for (const token of tokens) {
    if (isStopWord(token)) continue;
    terms.push(cachedStem(token));
  }
  return terms;
}

/**
 * Stems of recent tokens. Learning analyzes every memory's text and keywords (for the full-text
 * column) and every question; conversation vocabulary repeats, so most tokens are stemmed once.
 * Cleared when full, which bounds it to a few MB.
 */
const STEMS = new Map<string, string>();
const STEM_CACHE_SIZE = 50_000;

/** {@link stem} through a bounded cache (same result; for hot loops inside core). */
export function cachedStem(token: string): string {
  let stemmed = STEMS.get(token);
  if (stemmed === undefined) {
    stemmed = stem(token);
    if (STEMS.size >= STEM_CACHE_SIZE) STEMS.clear();
    STEMS.set(token, stemmed);
  }
  return stemmed;
}
