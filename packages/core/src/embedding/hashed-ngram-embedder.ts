import type { Embedder, EmbedRequest, EmbedResult } from '../ports/embedder.js';
import { cachedStem, isStopWord, tokenize } from './text-analysis.js';

/** Options of {@link hashedNgramEmbedder}. */
export type HashedNgramEmbedderOptions = {
  /**
   * Length of every vector. Part of the embedder `id`, so changing it makes the memory index
   * refuse the new vectors (`embedder_mismatch`).
   * @default 384
   */
  dimensions?: number;
};

/** Version of the feature recipe below; bump it whenever vectors would change for the same text. */
const RECIPE = 'hashed-ngrams-v1';

// Relative weights of the feature families. Word features carry most of the meaning; character
// n-grams (about two per letter) give partial credit for typos and forms the stemmer misses, so
// each one weighs little or they would drown the words.
const WEIGHT_UNIGRAM = 1;
const WEIGHT_BIGRAM = 0.6;
const WEIGHT_CHAR_NGRAM = 0.22;

// Seeds keep the feature families apart in hash space (a word and a trigram never collide by design).
const SEED_UNIGRAM = 0x2f1b3c4d;
const SEED_BIGRAM = 0x5bd1e995;
const SEED_TRIGRAM = 0x1b873593;
const SEED_FOURGRAM = 0x68e31da4;

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;
const PAD_START = 0x02; // virtual code units around a term for boundary n-grams ("<ru", "ng>")
const PAD_END = 0x03;

/** murmur3 finalizer: spreads FNV's weak low bits over the whole word. */
function mix(hash: number): number {
  let h = hash;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** FNV-1a over `term` padded with boundary markers, code units `start` to `end` (exclusive, padded coordinates). */
function hashPadded(term: string, start: number, end: number, seed: number): number {
  let h = FNV_OFFSET ^ seed;
  const last = term.length + 1;
  for (let i = start; i < end; i++) {
    const code = i === 0 ? PAD_START : i === last ? PAD_END : term.charCodeAt(i - 1);
    h = Math.imul(h ^ code, FNV_PRIME);
  }
  return h >>> 0;
}

/**
 * Reusable scratch space for one embedding at a time (embedding is synchronous, so one per embedder
 * instance is safe). Features are collected as `hash * 4 + family` in a Float64Array so one numeric
 * sort groups repeats of the same feature for sublinear term frequency.
 */
type Scratch = { keys: Float64Array; accumulator: Float64Array };

const FAMILY_WEIGHTS = [WEIGHT_UNIGRAM, WEIGHT_BIGRAM, WEIGHT_CHAR_NGRAM, WEIGHT_CHAR_NGRAM] as const;

/** A term's hash and its features that do not depend on its neighbours (unigram, char 3- and 4-grams). */
type TermFeatures = { hash: number; keys: Float64Array };

/**
 * Features of recent terms: conversation vocabulary repeats, and hashing a term's character n-grams
 * is most of an embedding's cost. Same values as computing them afresh; cleared when full.
 */
const TERM_FEATURES = new Map<string, TermFeatures>();
const TERM_FEATURES_CACHE_SIZE = 50_000;

function termFeatures(term: string): TermFeatures {
  const cached = TERM_FEATURES.get(term);
  if (cached) return cached;
  const padded = term.length + 2;
  const hash = hashPadded(term, 1, padded - 1, 0);
  const keys = new Float64Array(1 + Math.max(0, padded - 2) + Math.max(0, padded - 3));
  let count = 0;
  keys[count++] = mix(hash ^ SEED_UNIGRAM) * 4 + 0;
  for (let i = 0; i + 3 <= padded; i++) keys[count++] = mix(hashPadded(term, i, i + 3, SEED_TRIGRAM)) * 4 + 2;
  for (let i = 0; i + 4 <= padded; i++) keys[count++] = mix(hashPadded(term, i, i + 4, SEED_FOURGRAM)) * 4 + 3;
  const features = { hash, keys: count === keys.length ? keys : keys.subarray(0, count) };
  if (TERM_FEATURES.size >= TERM_FEATURES_CACHE_SIZE) TERM_FEATURES.clear();
  TERM_FEATURES.set(term, features);
  return features;
}

function embedOne(text: string, dimensions: number, scratch: Scratch): Float32Array {
  const tokens = tokenize(text);
  let terms: string[] = [];
  for (const token of tokens) if (!isStopWord(token)) terms.push(cachedStem(token));
  // A text of only stop words ("who are you?") still deserves a non-zero vector.
  if (terms.length === 0) terms = tokens.map(cachedStem);

  let featureCount = 0;
  let upperBound = 2 * terms.length;
  for (const term of terms) upperBound += 2 * term.length + 1;
  if (scratch.keys.length < upperBound) scratch.keys = new Float64Array(Math.max(upperBound, scratch.keys.length * 2));
  const keys = scratch.keys;

  let previous = -1;
  for (const term of terms) {
    const features = termFeatures(term);
    const termHash = features.hash;
    keys[featureCount++] = features.keys[0]!;
    if (previous !== -1) keys[featureCount++] = mix(Math.imul(previous, 0x9e3779b1) ^ termHash ^ SEED_BIGRAM) * 4 + 1;
    previous = termHash;
    for (let i = 1; i < features.keys.length; i++) keys[featureCount++] = features.keys[i]!;
  }

  const accumulator = scratch.accumulator;
  accumulator.fill(0);
  const sorted = keys.subarray(0, featureCount).sort();
  let index = 0;
  while (index < featureCount) {
    const key = sorted[index]!;
    let count = 1;
    while (index + count < featureCount && sorted[index + count] === key) count++;
    index += count;
    const family = key % 4;
    const hash = (key - family) / 4;
    // Sublinear tf: a word said five times is not five times as relevant.
    const weight = FAMILY_WEIGHTS[family as 0 | 1 | 2 | 3] * (1 + Math.log(count));
    const bucket = (hash & 0x7fffffff) % dimensions;
    // Signed hashing: collisions cancel out on average instead of inflating similarity.
    accumulator[bucket]! += hash & 0x80000000 ? -weight : weight;
  }

  let norm = 0;
  for (let i = 0; i < dimensions; i++) norm += accumulator[i]! * accumulator[i]!;
  const vector = new Float32Array(dimensions);
  if (norm === 0) return vector;
  const scale = 1 / Math.sqrt(norm);
  for (let i = 0; i < dimensions; i++) vector[i] = accumulator[i]! * scale;
  return vector;
}

/**
 * The default offline embedder: deterministic feature hashing of lower-cased, stemmed word unigrams
 * and bigrams plus character 3- and 4-grams of each word, with signed hashing, sublinear term
 * frequency and L2 normalisation. Similar texts get a high cosine ("running shoes" ~ "run shoe");
 * it knows no synonyms. No network, no model files, tens of thousands of short texts per second.
 *
 * Stop words are dropped (unless the text has nothing else), and words go through the same
 * {@link analyze} pipeline as the full-text indexes.
 *
 * @example
 * const embedder = hashedNgramEmbedder();           // id 'hashed-ngrams-v1:384'
 * const { vectors } = await embedder.embed({ texts: ['running shoes', 'run shoe'] });
 */
export function hashedNgramEmbedder(options: HashedNgramEmbedderOptions = {}): Embedder & { embedSync(text: string): Float32Array } {
  const dimensions = options.dimensions ?? 384;
  if (!Number.isInteger(dimensions) || dimensions < 1 || dimensions > 65_536) {
    throw new RangeError(`hashedNgramEmbedder: dimensions must be an integer in 1..65536, got ${String(dimensions)}`);
  }
  const scratch: Scratch = { keys: new Float64Array(256), accumulator: new Float64Array(dimensions) };
  const embedSync = (text: string): Float32Array => embedOne(text, dimensions, scratch);
  return {
    specificationVersion: 'v1',
    id: `${RECIPE}:${dimensions}`,
    dimensions,
    embedSync,
    async embed(request: EmbedRequest): Promise<EmbedResult> {
      request.signal?.throwIfAborted();
      const vectors: Float32Array[] = new Array<Float32Array>(request.texts.length);
      for (let i = 0; i < request.texts.length; i++) {
        // Very large batches: check for abort now and then, never return a partial result.
        if ((i & 1023) === 1023) request.signal?.throwIfAborted();
        vectors[i] = embedSync(request.texts[i]!);
      }
      return { vectors };
    },
  };
}
