import { MatchQuery, Operator, type Table } from '@lancedb/lancedb';
import {
  analyzeQuery,
  canonicalIso,
  compareMemoryHits,
  cosineSimilarity,
  type MemoryHit,
  type MemoryHitRecord,
  type MemorySearchRequest,
  type MemorySearchResult,
} from '@memory-agents/core/adapter';
import { agentList } from './list.js';
import { ranked, rankedItems } from './ranked.js';
import { rescoreLexical, termStatsOf, type LexicalCandidate } from './term-stats.js';
import type { AgentList } from './list-cache.js';
import { agentShare, hitRecordsById } from './reads.js';
import { HIT_COLUMNS, hitFromPayload, hitFromRow, sqlString, vectorView } from './rows.js';
import { agentFilter, guard, inList, type IndexState } from './state.js';

/** Smallest HNSW search breadth (`ef`); the search uses at least twice the hits it asks for. */
const ANN_MIN_EF = 100;
/**
 * From this share of the table's rows on, an agent's search runs unfiltered and keeps the agent's
 * rows (asking for limit / share × 1.3 rows), instead of pre-filtering.
 */
const POSTFILTER_MIN_SHARE = 0.5;
/** Rows an unfiltered query asks for to keep `count` of an agent holding `share` of the table. */
const unfilteredCount = (count: number, share: number) => Math.ceil((count / share) * 1.3) + 4;

/** Where a search reads its hits' records from: the `hit` column, or the record columns (version 1 tables). */
type HitReader = { columns: readonly string[]; read: (row: Record<string, unknown>) => MemoryHitRecord };

/** What both channels of one search share. */
type SearchScope = {
  state: IndexState;
  hits: HitReader;
  current: Table;
  agentId: string;
  /** The SQL filter of the search: the agent, validity (current or `asOf`), `threadIds`. */
  filter: string;
  /** The same filter on a raw row holding `agent_id`, `thread_id`, `valid_from` and `valid_to` (unfiltered queries). */
  keeps: (row: Record<string, unknown>) => boolean;
  /** The agent's share of the table, counted at most once per search and only if asked for. */
  share: () => Promise<number>;
};

/** `MemoryIndex.search`: both channels at once against the current table. */
export async function searchIndex(state: IndexState, request: MemorySearchRequest): Promise<MemorySearchResult> {
  return guard('search', async () => {
    const limit = Math.max(0, Math.floor(request.limit));
    const current = state.table;
    if (!current || limit === 0 || request.threadIds?.length === 0) return { lexical: [], semantic: [] };
    let share: Promise<number> | undefined;
    // The agent's list (when the cache may keep it): its full-text statistics, and whether any of
    // its records has expired (issue 42). With none expired the expiry clause is left out of the
    // SQL filter: on a column without an index it doubled the cost of a flat vector search (10k
    // rows: 38 against 18 ms).
    const list = await agentListOf(state, current, request.agentId);
    const now = request.now === undefined || (list !== null && !anyExpired(list, Date.parse(request.now))) ? undefined : request.now;
    const scope: SearchScope = {
      state,
      hits: state.hasHitColumn ? { columns: ['hit'], read: hitFromPayload } : { columns: HIT_COLUMNS, read: hitFromRow },
      current,
      agentId: request.agentId,
      ...searchFilter({ ...request, now }),
      share: () => (share ??= agentShare(state, current, request.agentId)),
    };
    const terms = analyzeQuery(request.text);
    const vector = request.vector;
    if (vector && state.fingerprint && vector.length !== state.fingerprint.dimensions) {
      throw new RangeError(`query vector has ${vector.length} dimensions, the index ${state.fingerprint.dimensions}`);
    }
    // One ranked query per channel, both channels at once, each reading its hits' records from the
    // `hit` column (one column read instead of fifteen; on a settled 100k table the full-text
    // query costs ~4 ms so against ~5.5 with the record columns and ~2.6 for ids alone). Reading
    // ids first and the records by id after costs a second query per channel.
    const lexical = terms.length === 0 ? Promise.resolve([]) : agentLexical(scope, list, terms, limit);
    const semantic = vector === null ? Promise.resolve([]) : semanticChannel(scope, vector, limit);
    const [lexicalHits, semanticHits] = await Promise.all([lexical, semantic]);
    if (now !== request.now && request.now !== undefined) {
      // No record had expired at the list's version; one written since with a past expiry is still dropped.
      const at = canonicalIso(request.now);
      const live = (hit: MemoryHit) => hit.record.expiresAt === null || canonicalIso(hit.record.expiresAt) > at;
      return { lexical: lexicalHits.filter(live), semantic: semanticHits.filter(live) };
    }
    return { lexical: lexicalHits, semantic: semanticHits };
  });
}

/**
 * Full text scored over the agent's own records (`term-stats.ts`): LanceDB's best candidates,
 * twice as many as asked and at least 20 more, rescored with the agent's statistics. An agent
 * with more records than the list cache keeps is scored as LanceDB scores (table-wide).
 */
async function agentLexical(scope: SearchScope, list: AgentList | null, terms: readonly string[], limit: number): Promise<MemoryHit[]> {
  if (list === null) return lexicalChannel(scope, terms, limit);
  const stats = { stats: await termStatsOf(scope.current, scope.agentId, list), count: list.entries.length };
  const read = scope.hits.read;
  const columns = [...new Set([...scope.hits.columns, 'id', 'terms'])];
  // The candidates as LanceDB ranks them, ties at their cut settled by id (as a table written at
  // once would rank them); their records are read only for the hits kept.
  const candidates = await rankedItems(limit * 4 + 20, (count) =>
    agentFullTextRows(scope, terms, count, columns, (row): LexicalCandidate & { score: number } => ({
      id: String(row.id),
      terms: String(row.terms ?? ''),
      read: () => read(row),
      score: Number(row._score),
    })),
  );
  return rescoreLexical(candidates, terms, stats.stats, stats.count, limit);
}

/** The agent's list at the table's version, or null when it holds more records than the cache keeps. */
async function agentListOf(state: IndexState, current: Table, agentId: string): Promise<AgentList | null> {
  const version = await current.version();
  const list = state.listCache.get(agentId, version);
  if (list) return list;
  if ((await current.countRows(agentFilter(agentId))) > state.listCache.maxRecords) return null;
  return agentList(state, current, agentId);
}

/** Whether any of the list's records has expired at `now` (epoch ms). */
function anyExpired(list: AgentList, now: number): boolean {
  for (const entry of list.entries) if (entry.expires !== null && !(entry.expires > now)) return true;
  return false;
}

/** Columns an unfiltered query reads besides the hit, to apply the search's filter to its rows. */
const FILTER_COLUMNS = ['agent_id', 'thread_id', 'valid_from', 'valid_to', 'expires_at'];

/**
 * A search's filter, as SQL and as a predicate on raw rows. Validity columns hold canonical ISO
 * strings (`toISOString`), so they compare as strings: current is `valid_to IS NULL` (a btree
 * lookup); `asOf` keeps `valid_from` null or <= asOf, and `valid_to` null or > asOf.
 */
export function searchFilter(request: Pick<MemorySearchRequest, 'agentId' | 'asOf' | 'threadIds' | 'now'>): Pick<SearchScope, 'filter' | 'keeps'> {
  const clauses = [agentFilter(request.agentId)];
  const asOf = request.asOf === undefined ? undefined : canonicalIso(request.asOf);
  if (asOf === undefined) clauses.push('valid_to IS NULL');
  else clauses.push(`(valid_from IS NULL OR valid_from <= ${sqlString(asOf)})`, `(valid_to IS NULL OR valid_to > ${sqlString(asOf)})`);
  const threads = request.threadIds === undefined ? null : new Set(request.threadIds);
  if (request.threadIds !== undefined) clauses.push(inList('thread_id', request.threadIds));
  // Expiry (issue 42): canonical ISO strings too, so `expires_at > now` compares as time.
  const now = request.now === undefined ? undefined : canonicalIso(request.now);
  if (now !== undefined) clauses.push(`(expires_at IS NULL OR expires_at > ${sqlString(now)})`);
  const keeps = (row: Record<string, unknown>): boolean => {
    if (row.agent_id !== request.agentId) return false;
    if (threads && !threads.has(String(row.thread_id))) return false;
    const expiresAt = (row.expires_at as string | null | undefined) ?? null;
    if (now !== undefined && expiresAt !== null && !(expiresAt > now)) return false;
    const validFrom = (row.valid_from as string | null) ?? null;
    const validTo = (row.valid_to as string | null) ?? null;
    if (asOf === undefined) return validTo === null;
    return (validFrom === null || validFrom <= asOf) && (validTo === null || validTo > asOf);
  };
  return { filter: clauses.join(' AND '), keeps };
}

/**
 * The full-text channel's first fetch, in hits asked for: duplicate texts tie on BM25, and on the
 * 100k bench table the 51st row tied with the 50th for 46% of questions, each then paying two more
 * queries (a deeper id list, then records by id); twice the hits in the first read settles nearly
 * all of those ties for ~1 ms more column reads.
 */
const LEXICAL_FIRST_FETCH = 2;

/**
 * The agent's best `count` full-text rows (passing the search's filter) read as `read` makes them:
 * for an agent holding most of the table, unfiltered with the agent's rows kept (pre-filtering
 * first intersects the agent's bitmap: ~12 ms against ~8 ms at 900k of 1M rows), the pre-filtered
 * query when too few of the best rows are the agent's.
 */
async function agentFullTextRows<T extends { score: number }>(
  scope: SearchScope,
  terms: readonly string[],
  count: number,
  columns: readonly string[],
  read: (row: Record<string, unknown>) => T,
): Promise<T[]> {
  const { current, filter, keeps } = scope;
  const match = () => current.query().fullTextSearch(new MatchQuery(terms.join(' '), 'terms', { operator: Operator.Or }));
  const agentShareOfRows = await scope.share();
  if (agentShareOfRows >= POSTFILTER_MIN_SHARE) {
    const asked = unfilteredCount(count, agentShareOfRows);
    const rows: Record<string, unknown>[] = await match()
      .select([...new Set([...columns, ...FILTER_COLUMNS]), '_score'])
      .limit(asked)
      .toArray();
    const own = rows.filter(keeps).map(read);
    if (own.length >= count || rows.length < asked) return own.sort((a, b) => b.score - a.score).slice(0, count);
  }
  return (await match().where(filter).select([...columns, '_score']).limit(count).toArray()).map(read);
}

/**
 * Full text as LanceDB scores it (table-wide BM25), ties at the cut settled by `ranked`: for an
 * agent whose records are more than the list cache keeps.
 */
function lexicalChannel(scope: SearchScope, terms: readonly string[], limit: number): Promise<MemoryHit[]> {
  const { current, agentId, hits } = scope;
  const agentRows = <T extends { score: number }>(count: number, columns: readonly string[], read: (row: Record<string, unknown>) => T) =>
    agentFullTextRows(scope, terms, count, columns, read);
  const readHit = (row: Record<string, unknown>) => {
    const record = hits.read(row);
    return { record, agentId: record.agentId, score: Number(row._score) };
  };
  const readId = (row: Record<string, unknown>) => ({ id: String(row.id), agentId: String(row.agent_id), score: Number(row._score) });
  return ranked(
    limit,
    async (count) => (await agentRows(count, hits.columns, readHit)).map(({ record, score }) => ({ record, score })),
    {
      ids: async (count) => (await agentRows(count, ['id', 'agent_id'], readId)).map(({ id, score }) => ({ id, score })),
      records: (ids) => hitRecordsById(scope.state, current, agentId, ids),
    },
    limit * LEXICAL_FIRST_FETCH,
  );
}

/**
 * Vectors. With the ANN index the order is approximate anyway (exact cosine re-sorts the hits, so
 * the row past the limit often outscores the last one without being a tie): one fetch. An agent
 * holding most of the table is searched unfiltered and its rows kept (a pre-filtered HNSW search
 * first builds the allow-list of every row of the agent: ~25 ms at 900k of 1M rows against
 * ~11 ms); if too few of the nearest rows are the agent's, the pre-filtered search answers. The
 * flat search is exact and settles ties at the cut like full text.
 */
function semanticChannel(scope: SearchScope, vector: Float32Array, limit: number): Promise<MemoryHit[]> {
  const { current, filter, hits } = scope;
  const nearest = async (count: number, mode: 'exact' | 'prefilter' | 'postfilter') => {
    let query = current.vectorSearch(vector).column('vector').distanceType('cosine').where(filter);
    // With an HNSW index: `ef` candidates per search (at least twice the hits asked for).
    if (mode !== 'exact') query = query.ef(Math.max(ANN_MIN_EF, count * 2));
    if (mode === 'postfilter') query = query.postfilter();
    // Exact cosine from the stored vectors, whatever scale the index reports distances in (HNSW_SQ
    // reports distances between quantized vectors, off by ~0.7 here; LanceDB's `refineFactor`
    // fixes that but measured slower than reading the vectors). The vectors stay out of the hits.
    const rows = await query.select([...hits.columns, 'vector', '_distance']).limit(count).toArray();
    return rows
      .map((row: Record<string, unknown>) => ({ record: hits.read(row), score: cosineSimilarity(vector, vectorView(row.vector)) }))
      .sort(compareMemoryHits);
  };
  const approximateSearch = async (): Promise<MemoryHit[]> => {
    const agentShareOfRows = await scope.share();
    if (agentShareOfRows >= POSTFILTER_MIN_SHARE) {
      const hits = await nearest(unfilteredCount(limit, agentShareOfRows), 'postfilter');
      if (hits.length >= limit) return hits.slice(0, limit);
    }
    return (await nearest(limit, 'prefilter')).slice(0, limit);
  };
  return scope.state.hasVectorIndex ? approximateSearch() : ranked(limit, (count) => nearest(count, 'exact'));
}
