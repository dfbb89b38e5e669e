import { analyze, stem, tokenize } from '../embedding/text-analysis.js';
import type { Embedder } from '../ports/embedder.js';
import { asksForInstructions } from '../boundary/instruction-like.js';
import type { MemoryHit, MemoryHitRecord, MemoryIndex, MemorySearchRequest } from '../ports/memory-index.js';
import { isWithin, queryTimeRanges, searchableQuery } from './query-time.js';
import { inSpan } from '../service/telemetry.js';
import { wordNet } from './wordnet.js';
import { dedupeByText, pack } from './context.js';
import { rerank } from './rerank.js';
import { historyOf, packHistory, preferNewer } from './current-truth.js';
import {
  CANDIDATES_PER_CHANNEL,
  MEANING_WEIGHTS,
  RETRIEVAL_WEIGHTS,
  type RetrievalContributions,
  type RetrievalOptions,
  type RetrievalResult,
  type RetrievedItem,
} from './weights.js';

export {
  CANDIDATES_PER_CHANNEL,
  DEFAULT_MAX_CONTEXT_CHARS,
  MEANING_WEIGHTS,
  RETRIEVAL_WEIGHTS,
  checkRetrievalOptions,
  type RetrievalContributions,
  type RetrievalOptions,
  type RetrievalResult,
  type RetrievalSignal,
  type RetrievedItem,
} from './weights.js';
export { formatContextItem, sourceLabel } from './context.js';
export { preferNewer } from './current-truth.js';

/** The speaker of observations that name none (spec: `speaker` defaults to `user`). */
const DEFAULT_SPEAKER = 'user';
/** A question in the past tense: what was true or said then, not what is true now. */
const ASKS_ABOUT_THE_PAST = /\b(?:did|didn't|was|wasn't|were|weren't|had|used to|ago|last (?:week|month|year|time)|back then|before)\b/i;
/** Memories of an episode whose scores make up its evidence. */
const EPISODE_TOP = 3;

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
  /**
   * Expiry (issue 42): the service clock's now (ISO date-time); memories with `expiresAt <= it` are
   * left out by the index, on every channel and in history. null: expired memories too (audit).
   * @default the system clock's now (never expired memories by accident)
   */
  unexpiredAt?: string | null;
  /**
   * Memory decay (issue 42): the rank multiplier in (0, 1] of each candidate (absent: 1), applied to
   * its positive fused score before ranking. Text and vectors never change. @default no decay
   */
  decay?: (records: readonly MemoryHitRecord[]) => Promise<ReadonlyMap<string, number>>;
};

/** The narrowing of a request the index applies to every channel. */
type SearchScope = Pick<MemorySearchRequest, 'asOf' | 'threadIds' | 'now'>;

function scopeOf(request: RetrieveRequest): SearchScope {
  return {
    ...(request.asOf === undefined ? {} : { asOf: request.asOf }),
    ...(request.threadIds === undefined ? {} : { threadIds: request.threadIds }),
    ...(request.unexpiredAt === null ? {} : { now: request.unexpiredAt ?? new Date().toISOString() }),
  };
}

async function search(index: MemoryIndex, embedder: Embedder, agentId: string, text: string, limit: number, scope: SearchScope) {
  const [vector] = (await embedder.embed({ texts: [text] })).vectors;
  // Both channels (full text and vector) in one index call; the span counts each one's hits.
  const result = await inSpan('memory_agents.retrieval.search', { 'memory_agents.retrieval.limit': limit }, async (span) => {
    const result = await index.search({ agentId, text, vector: vector ?? null, limit, ...scope });
    span.setAttribute('memory_agents.retrieval.lexical_hits', result.lexical.length);
    span.setAttribute('memory_agents.retrieval.semantic_hits', result.semantic.length);
    return result;
  });
  return { vector: vector ?? null, ...result };
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
 *    a penalty for suspicious memories when the query asks for instructions or rules, and the
 *    episode (observation) the memory belongs to, so memories of a conversation that
 *    matches as a whole move up together (a soft form of ranking sessions, then turns).
 * 4. Deduplication by text, then packing.
 */
export async function retrieve(index: MemoryIndex, embedder: Embedder, request: RetrieveRequest): Promise<RetrievalResult> {
  const limit = request.limit ?? CANDIDATES_PER_CHANNEL;
  const scope = scopeOf(request);
  // A sentence model's vectors carry meaning: its channel weighs as much as full text (issue 39).
  const weights = { ...RETRIEVAL_WEIGHTS, ...(embedder.meaning ? MEANING_WEIGHTS : {}), ...request.options?.weights };
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
    // A sentence model's cosines crowd into a narrow band (0.2-0.6): spread from the weakest candidate
    // to the best, or every candidate would get most of the channel's weight.
    const floor = signal === 'semantic' && embedder.meaning && hits.length > 1 ? Math.min(...hits.map((hit) => hit.score)) : 0;
    for (const hit of hits) {
      const entry = fused.get(hit.record.id) ?? { record: hit.record, score: 0, ...(request.explain ? { contributions: noContributions() } : {}) };
      const amount = best > floor ? (weight * Math.max(0, hit.score - floor)) / (best - floor) : weight;
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
    if (expansion !== '') {
      const hits = await inSpan('memory_agents.retrieval.hyponyms', { 'memory_agents.retrieval.limit': limit }, async (span) => {
        const { lexical: found } = await index.search({ agentId: request.agentId, text: expansion, vector: null, limit, ...scope });
        span.setAttribute('memory_agents.retrieval.lexical_hits', found.length);
        return found;
      });
      add(hits, weights.hyponyms, 'hyponyms');
    }
  }

  const isFirstPerson = queryTokens.some((token) => token === 'i' || token === 'my' || token === 'me' || token === 'mine');
  const ranges = queryTimeRanges(request.query, now);
  const isAboutInstructions = asksForInstructions(request.query);
  for (const item of fused.values()) {
    const speaker = item.record.speaker;
    if (isAboutInstructions && item.record.suspicious) {
      item.score -= weights.suspicious;
      credit(item, 'suspicious', -weights.suspicious);
    }
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

  if (request.decay && fused.size > 0) {
    const multipliers = await request.decay([...fused.values()].map((item) => item.record));
    for (const item of fused.values()) {
      const multiplier = multipliers.get(item.record.id) ?? 1;
      if (multiplier >= 1 || item.score <= 0) continue;
      const amount = item.score * multiplier - item.score;
      item.score += amount;
      credit(item, 'decay', amount);
    }
  }

  // Only a question about the present ("Who is my boss?") prefers the newer answer by meaning; one
  // in the past tense ("What did Caroline research?") asks about what was said then.
  const meaning = embedder.meaning === true && semantic.length > 0 && !ASKS_ABOUT_THE_PAST.test(request.query) ? new Map(semantic.map((hit) => [hit.record.id, hit.score])) : null;
  const fusedOrder = dedupeByText([...fused.values()].sort((a, b) => b.score - a.score || (a.record.id < b.record.id ? -1 : 1)));
  const reranked = request.options?.rerank ? await inSpan('memory_agents.retrieval.rerank', {}, () => rerank(index, request.agentId, fusedOrder, request.options!.rerank!)) : fusedOrder;
  const ranked = preferNewer(reranked, meaning);
  const { packed, memoryContext } = pack(ranked, request.maxContextChars);
  if (request.asOf !== undefined || packed.length === 0) return { ranked, packed, memoryContext };
  const history = await historyOf(index, request.agentId, searched, vector, packed, limit, scope.threadIds, scope.now);
  return { ranked, ...packHistory(packed, memoryContext, history, request.maxContextChars) };
}

function noContributions(): RetrievalContributions {
  return { lexical: 0, semantic: 0, speaker: 0, self: 0, time: 0, episode: 0, hyponyms: 0, suspicious: 0, decay: 0 };
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


