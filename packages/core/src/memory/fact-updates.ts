/**
 * Offline detection of facts that replace older ones (issue 32), as general rules of English:
 * a speaker restating the same attribute of the same subject with a new value.
 *
 * A sentence yields {@link FactClaim}s: an attribute key ("residence", "employer", "uses", or the
 * noun phrase of "my/our/the <noun phrase> is <value>"), the subject it is about (the speaker for
 * "I"/"my"/"we"/"our", the conversation for "the ..."), the value, whether the sentence marks a
 * change ("now", "new", "moved", "switched", "raised", "no longer", ...) and whether it is negated.
 * Questions and hypotheticals ("if", "would", "thinking about", "planning to") claim nothing.
 *
 * A new claim supersedes an old one when both are about the same subject and key and:
 * - the values differ, and the key is one of the known attributes, or the new sentence marks a
 *   change, or both values are of the same checkable kind (numbers, amounts, times, dates, names);
 * - or the new claim is negated ("I no longer work at Acme") and the values agree.
 * Everything else keeps both memories (retrieval then prefers the newer of near-duplicates).
 */

export type FactClaim = {
  /** `residence`, `employer`, `uses`, or `np:<noun phrase>`. */
  key: string;
  /** `self` (what the speaker says about themself) or `shared` (the/that ...: the conversation's). */
  subject: 'self' | 'shared';
  /** Normalised value: lower-case words, articles and fillers left out. */
  value: string;
  /** The sentence marks a change of value. */
  changed: boolean;
  /** The sentence says the value stopped being true. */
  negated: boolean;
};

const KNOWN_KEYS = new Set(['residence', 'employer']);

/** Words that mark a statement as a change of a value (tested on lower-case text). */
export const CHANGE_CUE = /\b(?:now|new|newly|moved|moving|relocated|switched|changed|change|raised|increased|lowered|reduced|dropped|went up|went down|rescheduled|postponed|pushed|bumped|updated|instead|anymore|any more|no longer|not .{0,30}anymore|since)\b/;
/** Sentences that state no fact (hypotheses, wishes, plans, questions about it). */
const NOT_A_STATEMENT = /\b(?:if|would|could|might|maybe|perhaps|wish|hope|thinking about|think about|considering|planning|plan to|want to|wanted to|going to|gonna|should|whether|dream|someday|one day)\b/;

// A value: up to five words (with digits, $, :, / and decimal points), cut at clause boundaries.
const TOKEN = String.raw`[$€£]?[\p{L}\p{N}](?:[\p{L}\p{N}'’$€£%:/.@_+-]|,(?=\d))*`;
const VALUE = String.raw`(${TOKEN}(?:\s+(?!(?:and|but|because|since|so|which|where|when|while|with|after|before|until|as|for|to|from|in|now|anymore|though|although|too|also|again|and|last|yesterday|today|tonight|tomorrow|this|next|ago|recently|earlier|later|soon|instead|full-time|part-time)\b)${TOKEN}){0,4})`;
const ADVERB = String.raw`(?:(?:now|still|currently|just|recently|finally|actually|officially|already|also)\s+)*`;
// A noun phrase after my/our/the: one to three words, optionally "of/for the ..." (the price of the basic plan).
const WORD = String.raw`(?!(?:is|are|was|were|will|has|have|had|got|been|be|being|gets|get|went|goes|of|for)\b)[\p{L}-]+`;
const NP = String.raw`((?:${WORD}\s+){0,2}${WORD}(?:\s+(?:of|for)\s+(?:the\s+|my\s+|our\s+|your\s+)?(?:${WORD}\s+){0,2}${WORD})?)`;
const BE = String.raw`(?:is|are|was|were|will be|has been|have been|'s|’s|'re)`;
const CHANGE_VERB = String.raw`(?:moved|changed|rescheduled|pushed|raised|increased|lowered|reduced|dropped|updated|bumped|switched|postponed|shifted|set|going up|went up|went down|gone up|gone down)`;

// What a thing is used as or for ("as my browser", "for email"): what "I use X" / "I switched to Y" is about.
const PURPOSE = String.raw`(?:\s+(?:as|for)\s+(?:my|our|the|a|an)?\s*(?:main\s+|new\s+|default\s+|daily\s+)?([\p{L}-]+))?`;

/** `uses:<purpose>`; without a purpose the claim says what is used, not for what, and replaces nothing. */
function usesKey(match: RegExpExecArray): string {
  return match[2] ? `uses:${match[2]}` : 'uses';
}

type Rule = {
  key: (match: RegExpExecArray) => string | null;
  subject: 'self' | 'shared' | 'possessive';
  /** A cheap test a sentence must pass before `pattern` runs (most sentences state nothing). */
  cue: { test(sentence: string): boolean };
  pattern: RegExp;
  value: number;
  changed?: boolean;
};

/**
 * "my/our/the" with a form of "to be" after it: \b(?:my|our|the)\b.*\b(?:is|are|...)\s without
 * the backtracking of `.*` (a sentence holds many "the"s; a "to be" after the first is after one).
 */
const POSSESSIVE_START = /\b(?:my|our|the)\b/;
const BE_WORD = /\b(?:is|are|was|were|will be|has been|have been|'s|'re)\s/;
const POSSESSIVE_BE = {
  test(sentence: string): boolean {
    const start = POSSESSIVE_START.exec(sentence);
    // From the last letter of the word, so \b reads as it does in the whole sentence.
    return start !== null && BE_WORD.test(sentence.slice(start.index + start[0].length - 1));
  },
};

const CHANGE_CUE_WORDS = /\b(?:moved|changed|rescheduled|pushed|raised|increased|lowered|reduced|dropped|updated|bumped|switched|postponed|shifted|set|going|went|gone)\b/;

const RULES: Rule[] = [
  {
    key: () => 'residence',
    subject: 'self',
    cue: /\b(?:live|living|lived|reside|residing|based|moved|relocated|settled)\b/,
    pattern: new RegExp(String.raw`\b(?:i|we)\s+(?:am\s+|are\s+|have\s+|'ve\s+|’ve\s+)?${ADVERB}(?:live|living|lived|reside|residing|based|moved|relocated|settled)\s+(?:back\s+|over\s+|out\s+)?(?:in|to)\s+${VALUE}`, 'u'),
    value: 1,
  },
  {
    key: () => 'employer',
    subject: 'self',
    cue: /\b(?:work|working|worked|job|hired|employed)\b/,
    pattern: new RegExp(String.raw`\b(?:i|we)\s+(?:am\s+|have\s+|'ve\s+|’ve\s+)?${ADVERB}(?:work|working|worked|started working|started a new job|started a job|got a job|got a new job|took a job|took a new job|was hired|got hired|am employed|employed)\s+(?:at|for|with|by)\s+${VALUE}`, 'u'),
    value: 1,
  },
  {
    key: () => 'employer',
    subject: 'self',
    cue: /\b(?:joined|started at)\b/,
    pattern: new RegExp(String.raw`\b(?:i|we)\s+(?:have\s+|'ve\s+|’ve\s+)?${ADVERB}(?:joined|started at)\s+${VALUE}`, 'u'),
    value: 1,
    changed: true,
  },
  {
    key: () => 'employer',
    subject: 'self',
    cue: /\bmy\s+(?:new\s+)?(?:job|employer|workplace|company)\b/,
    pattern: new RegExp(String.raw`\bmy\s+(?:new\s+)?(?:job|employer|workplace|company)\s+(?:is\s+)?(?:at|with|is)\s+${VALUE}`, 'u'),
    value: 1,
  },
  {
    key: usesKey,
    subject: 'self',
    cue: /\b(?:switched|changed|converted|migrated)\b/,
    pattern: new RegExp(String.raw`\b(?:i|we)\s+(?:have\s+|'ve\s+|’ve\s+|am\s+)?${ADVERB}(?:switched|changed|converted|migrated)\s+(?:over\s+)?(?:from\s+[^,.;]+?\s+)?to\s+${VALUE}${PURPOSE}`, 'u'),
    value: 1,
    changed: true,
  },
  {
    key: usesKey,
    subject: 'self',
    cue: /\b(?:use|using)\b/,
    pattern: new RegExp(String.raw`\b(?:i|we)\s+(?:am\s+|are\s+)?${ADVERB}(?:use|using)\s+${VALUE}${PURPOSE}`, 'u'),
    value: 1,
  },
  // "The meeting was moved to Thursday", "my rent went up to $1,400", "the price has been raised from $10 to $12".
  {
    key: (match) => `np:${match[2]}`,
    subject: 'possessive',
    cue: CHANGE_CUE_WORDS,
    pattern: new RegExp(String.raw`\b(my|our|the|that)\s+(?:new\s+)?${NP}\s+(?:${BE}\s+|got\s+|has\s+|have\s+)?(?:been\s+)?${ADVERB}${CHANGE_VERB}\s+(?:back\s+|up\s+|down\s+)?(?:from\s+[^,;]+?\s+)?to\s+${VALUE}`, 'u'),
    value: 3,
    changed: true,
  },
  // "They moved the meeting to Thursday", "I changed my number to 555-0199".
  {
    key: (match) => `np:${match[2]}`,
    subject: 'possessive',
    cue: CHANGE_CUE_WORDS,
    pattern: new RegExp(String.raw`\b${CHANGE_VERB}\s+(my|our|the|that)\s+${NP}\s+(?:from\s+[^,;]+?\s+)?to\s+${VALUE}`, 'u'),
    value: 3,
    changed: true,
  },
  // "My phone number is 555-0100", "the meeting is on Tuesday at 3pm", "our rent is now $1,400".
  {
    key: (match) => `np:${match[2]}`,
    subject: 'possessive',
    cue: POSSESSIVE_BE,
    pattern: new RegExp(String.raw`\b(my|our|the)\s+(?:new\s+|current\s+)?${NP}\s+${BE}\s+${ADVERB}(?!${CHANGE_VERB}\b)(?:(?:on|at|in|set for|scheduled for|going to be|changed to|moved to|up to|down to)\s+)?${VALUE}`, 'u'),
    value: 3,
  },
];

/** Articles, fillers and noun-phrase words that carry no value. */
const VALUE_STOP = new Set(['a', 'an', 'the', 'now', 'still', 'currently', 'just', 'really', 'very', 'actually', 'new', 'here', 'there', 'my', 'our']);
/** Noun phrases too vague to be an attribute ("the thing is", "the problem was"). */
const VAGUE_NP = new Set(['thing', 'things', 'problem', 'point', 'issue', 'reason', 'idea', 'truth', 'fact', 'question', 'answer', 'best', 'worst', 'same', 'one', 'ones', 'other', 'rest', 'way', 'plan', 'goal', 'hope', 'story', 'good news', 'bad news', 'news', 'only thing', 'first', 'last', 'whole', 'day', 'weather', 'time']);

/** The claims of one piece of text, sentence by sentence. */
export function extractClaims(text: string): FactClaim[] {
  const claims: FactClaim[] = [];
  for (const raw of text.split(/(?<=[.!?;])\s+|\n+/u)) {
    if (raw.trim().endsWith('?')) continue;
    const sentence = normalise(raw);
    if (sentence === '') continue;
    // Cheap word tests first: most sentences state no attribute, and the full tests run only after a pattern matched.
    const negated = (sentence.includes('no') || sentence.includes("n't") || sentence.includes('never')) && NEGATION.test(sentence);
    // "I no longer work at Acme" reads as "I work at Acme", negated.
    const positive = negated ? sentence.replace(/\b(?:no longer|don't|do not|doesn't|does not|not)\s+/g, '').replace(/\b(?:anymore|any more)\b/g, '') : sentence;
    let statement: boolean | undefined;
    let changed: boolean | undefined;
    const seen = new Set<string>();
    for (const rule of RULES) {
      if (!rule.cue.test(positive)) continue;
      const match = rule.pattern.exec(positive);
      if (!match) continue;
      statement ??= !NOT_A_STATEMENT.test(sentence);
      if (!statement) break;
      const key = rule.key(match);
      if (key === null) continue;
      const noun = key.startsWith('np:') ? key.slice(3) : null;
      if (noun !== null && (VAGUE_NP.has(noun) || /^(?:[\p{L}-]+\s+)*(?:one|thing|way|part|reason)$/u.test(noun))) continue;
      const value = cleanValue(match[rule.value] ?? '');
      if (value === '' || seen.has(key)) continue;
      seen.add(key);
      changed ??= CHANGE_CUE.test(sentence);
      const subject = rule.subject === 'possessive' ? (match[1] === 'my' || match[1] === 'our' ? 'self' : 'shared') : rule.subject;
      claims.push({ key, subject, value, changed: changed || rule.changed === true, negated });
    }
  }
  return claims;
}

const NEGATION = /\b(?:no longer|not any more|not anymore|don't|do not|doesn't|does not|am not|'m not|aren't|isn't|never)\b/;

/** Whether `next` (said later) replaces `previous` (see the module comment). */
export function supersedesClaim(next: FactClaim, previous: FactClaim): boolean {
  if (next.key !== previous.key || next.subject !== previous.subject || previous.negated) return false;
  const same = sameValue(next.value, previous.value);
  // "I no longer work at the bakery" ends "I work at the bakery on Main Street": the head word agrees.
  if (next.negated) return same || next.value.split(' ')[0] === previous.value.split(' ')[0];
  if (same) return false;
  // "I use X" without what for: another thing used, not a replacement.
  if (next.key === 'uses') return false;
  if (KNOWN_KEYS.has(next.key) || next.key.startsWith('uses:') || next.changed) return true;
  const kind = valueKind(next.value);
  return kind !== 'words' && kind === valueKind(previous.value);
}

/** Whether `claim` could replace any earlier claim ({@link supersedesClaim} with some other value). */
export function canSupersede(claim: FactClaim): boolean {
  if (claim.negated) return true;
  if (claim.key === 'uses') return false;
  return KNOWN_KEYS.has(claim.key) || claim.key.startsWith('uses:') || claim.changed || valueKind(claim.value) !== 'words';
}

/** The text of a later memory replaces the text of an earlier one about the same subject. */
export function supersedesText(next: string, previous: string): boolean {
  const old = extractClaims(previous);
  if (old.length === 0) return false;
  return extractClaims(next).some((claim) => old.some((before) => supersedesClaim(claim, before)));
}

function normalise(sentence: string): string {
  let text = sentence.toLowerCase();
  if (text.includes('’') || text.includes('‘')) text = text.replace(/[’‘]/g, "'");
  // The contractions below all hold an apostrophe (most sentences have none).
  if (!text.includes("'")) return text.replace(/\s+/g, ' ').trim();
  return text
    .replace(/\bi'm\b/g, 'i am')
    .replace(/\bwe're\b/g, 'we are')
    .replace(/\bi've\b/g, 'i have')
    .replace(/\bwe've\b/g, 'we have')
    .replace(/\b(\w+)'s (been|moved|changed|going)\b/g, '$1 has $2')
    .replace(/\s+/g, ' ')
    .trim();
}

function cleanValue(value: string): string {
  return value
    .replace(/[.,;:!]+$/u, '')
    .split(/\s+/)
    .filter((word) => word !== '' && !VALUE_STOP.has(word))
    .join(' ');
}

/** Equal, or one contains the other word for word ("acme" and "acme corp"). */
function sameValue(a: string, b: string): boolean {
  if (a === b) return true;
  const wordsA = ` ${a} `;
  const wordsB = ` ${b} `;
  return wordsA.includes(wordsB) || wordsB.includes(wordsA);
}

/** What kind of value it is: values of one checkable kind can be compared without a change word. */
function valueKind(value: string): 'number' | 'time' | 'date' | 'words' {
  if (/^(?:on\s+)?(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|january|february|march|april|may|june|july|august|september|october|november|december)\b/.test(value)) return 'date';
  if (/\b\d{1,2}(?::\d{2})?\s*(?:am|pm)\b|\b\d{1,2}:\d{2}\b/.test(value)) return 'time';
  if (/^[$€£]?\d[\d,./ -]*(?:%|k|dollars|euros|pounds|per|a|an|each)?\b/.test(value)) return 'number';
  return 'words';
}

/**
 * Whether two claim lists speak about the same attribute of the same subject (with any values):
 * the signal retrieval uses to prefer the newer of two near-duplicate memories.
 */
export function sameAttribute(a: readonly FactClaim[], b: readonly FactClaim[]): boolean {
  return a.some((claim) => b.some((other) => other.key === claim.key && other.subject === claim.subject));
}
