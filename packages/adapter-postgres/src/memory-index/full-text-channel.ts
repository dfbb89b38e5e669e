import { analyzeQuery, type MemoryHit } from '@memory-agents/core/adapter';
import { filterSql, isCurrentOnly, unexpiredSql, type SearchFilter } from './filters.js';
import { hitColumns, hitFromRow, type HitRow, type IndexState } from './schema.js';

/** BM25 parameters, the same as the in-memory index. */
const K1 = 1.2;
const B = 0.75;

export type FullTextChannelOptions = {
  /**
   * Postings read per search, at most about this many: the rarest query terms' all, then the common
   * terms' best. `Infinity` reads every posting of every query term (exact, the cost grows with the agent).
   */
  candidates: number;
  /** With a common term read only in part, how many of the best partial scores are rescored exactly. */
  rescored: number;
};

/** BM25's contribution of one term, as SQL. */
const BM25 = (idf: string, tf: string, length: string, averageLength: string) =>
  `${idf} * ${tf} * ${K1 + 1} / (${tf} + ${K1} * (${1 - B} + ${B} * ${length} / ${averageLength}::float8))`;

/**
 * The lexical channel: Okapi BM25 (k1 1.2, b 0.75) over core's analyzed terms, with the corpus
 * statistics (N, average length, document frequencies) read from the per-agent tables the writes
 * keep, scored from the postings table (one row per record and distinct term, keyed by the record's
 * `rec` and the agent's `term_id`, read index-only) with a bounded candidate set, rarest terms first:
 *
 * - query terms are taken by ascending document frequency while their postings add up to at most
 *   `candidates`: every posting of these "essential" terms is read;
 * - the remaining budget is shared by the other (common) terms, each read best first (by its BM25
 *   term-frequency part, `impact`), so a record's contribution from a common term is counted when
 *   it is among that term's best postings.
 *
 * The result is exact BM25 when the query terms' postings add up to at most `candidates`. Otherwise
 * the best `rescored` partial scores are rescored on every query term from their own postings, and
 * only a record outside that set can miss a common term's contribution (bench/index-scale reports
 * recall against exact).
 */
export function fullTextChannel(state: IndexState, options: FullTextChannelOptions) {
  const { client } = state;
  const { records, agents, terms: termTable, postings } = state.tables;

  return {
    async search(agentId: string, text: string, limit: number, filter: SearchFilter): Promise<MemoryHit[]> {
      const queryTerms = analyzeQuery(text);
      if (queryTerms.length === 0) return [];
      const { rows: statistics } = await client.query<{
        row_count: string | number;
        term_total: string | number;
        term: string | null;
        term_id: string | null;
        df: number | null;
      }>(
        `SELECT a.row_count, a.term_total, t.term, t.term_id, t.df FROM ${agents} a
         LEFT JOIN ${termTable} t ON t.agent_id = a.agent_id AND t.term = ANY($2::text[]) AND t.df > 0
         WHERE a.agent_id = $1`,
        [agentId, queryTerms],
      );
      const n = Number(statistics[0]?.row_count ?? 0);
      if (n === 0) return [];
      const averageLength = Math.max(Number(statistics[0]!.term_total) / n, 1e-9);
      const present = statistics
        .filter((row) => row.term !== null && Number(row.df) > 0)
        .map((row) => {
          const df = Number(row.df);
          return { term: row.term!, termId: String(row.term_id), df, idf: Math.log(1 + (n - df + 0.5) / (df + 0.5)) };
        })
        .sort((a, b) => a.df - b.df || (a.term < b.term ? -1 : 1));
      if (present.length === 0) return [];

      // Rarest terms first: every posting of the terms whose records fit in the budget; the
      // remaining budget is shared by the common terms, each read best first (impact order).
      let essentialCount = 1;
      let essentialRows = present[0]!.df;
      while (essentialCount < present.length && essentialRows + present[essentialCount]!.df <= options.candidates) {
        essentialRows += present[essentialCount]!.df;
        essentialCount++;
      }
      const commonCount = present.length - essentialCount;
      const commonTake = commonCount === 0 || !Number.isFinite(options.candidates) ? null : Math.max(limit * 4, Math.floor((options.candidates - essentialRows) / commonCount));
      const take = present.map((term, i) => (i < essentialCount || commonTake === null || term.df <= commonTake ? null : commonTake));

      // With a common term cut short, the best partial scores are rescored on every query term
      // from their own postings ((rec, term_id) index): a record's common-term contribution counts
      // even when it was not among that term's best postings. The cut at `limit` keeps its ties
      // (WITH TIES) so that ties are settled by record id, as everywhere, once the records are read.
      const truncated = take.some((value) => value !== null);
      // $5: the hits kept to rescore (truncated) or the limit; $6 the limit (truncated only).
      const limitParam = truncated ? '$6' : '$5';
      const params: unknown[] = [
        present.map((term) => term.termId),
        present.map((term) => term.idf),
        take,
        averageLength,
        ...(truncated ? [Math.max(limit, options.rescored), limit] : [limit]),
      ];
      // The search's filter, applied to postings before each term's best are taken. Current
      // records only (every search's default): the agent's superseded records, usually few, are
      // read once through a partial index and left out. Other filters look each posting's record up.
      params.push(agentId);
      const agentParam = `$${params.length}`;
      // Expired records (issue 42), usually few, are left out the same way through their partial index.
      const expired = filter.now === null || !isCurrentOnly(filter) ? '' : ` UNION ALL SELECT rec FROM ${records} WHERE agent_id = ${agentParam} AND expires_at IS NOT NULL AND NOT ${unexpiredSql('', params, filter.now)}`;
      const kept = isCurrentOnly(filter)
        ? `AND rec NOT IN (SELECT rec FROM ${records} WHERE agent_id = ${agentParam} AND valid_to IS NOT NULL${expired})`
        : `AND EXISTS (SELECT 1 FROM ${records} f WHERE f.rec = ${postings}.rec AND f.agent_id = ${agentParam} AND ${filterSql(state.tables, filter, 'f.', params)})`;
      const { rows } = await client.query<HitRow & { score: number }>(
        `WITH query_terms AS (SELECT * FROM unnest($1::bigint[], $2::float8[], $3::int[]) AS q(term_id, idf, take)),
         -- Index-only reads of (term_id, impact DESC) INCLUDE (rec, tf, term_count).
         matches AS (
           SELECT p.rec, q.idf, p.tf, p.term_count FROM query_terms q
           CROSS JOIN LATERAL (SELECT rec, tf, term_count FROM ${postings} WHERE term_id = q.term_id ${kept} ORDER BY impact DESC LIMIT q.take) p),
         scores AS (${
           truncated
             ? `SELECT c.rec, sum(${BM25('q.idf', 'p.tf', 'p.term_count', '$4')}) AS score
                FROM (SELECT rec, sum(${BM25('idf', 'tf', 'term_count', '$4')}) AS score FROM matches GROUP BY rec ORDER BY score DESC, rec LIMIT $5) c
                -- Each candidate's own postings through (rec, term_id) (OFFSET 0 keeps the subquery
                -- apart): joined as a set, the planner read every query term's postings and compared
                -- them to each candidate (1,000 x 12,743 at 100k: 1 s).
                CROSS JOIN LATERAL (SELECT term_id, tf, term_count FROM ${postings} WHERE rec = c.rec AND term_id = ANY($1::bigint[]) OFFSET 0) p
                JOIN query_terms q ON q.term_id = p.term_id
                GROUP BY c.rec ORDER BY score DESC FETCH FIRST $6 ROWS WITH TIES`
             : `SELECT rec, sum(${BM25('idf', 'tf', 'term_count', '$4')}) AS score FROM matches GROUP BY rec ORDER BY score DESC FETCH FIRST $5 ROWS WITH TIES`
         })
         SELECT ${hitColumns('r.')}, scores.score
         FROM scores JOIN ${records} r ON r.rec = scores.rec
         ORDER BY scores.score DESC, r.id COLLATE "C" LIMIT ${limitParam}`,
        params,
      );
      return rows.map((row) => ({ record: hitFromRow(row), score: Number(row.score) }));
    },
  };
}

export type FullTextChannel = ReturnType<typeof fullTextChannel>;
