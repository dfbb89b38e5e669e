import { analyze, type MemoryHit } from '@memory-agents/core';
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
 * keep, scored from the postings table (one row per record and distinct term, read index-only) with
 * a bounded candidate set, rarest terms first:
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
    async search(agentId: string, text: string, limit: number): Promise<MemoryHit[]> {
      const queryTerms = [...new Set(analyze(text))];
      if (queryTerms.length === 0) return [];
      const { rows: statistics } = await client.query<{ row_count: string | number; term_total: string | number; term: string | null; df: number | null }>(
        `SELECT a.row_count, a.term_total, t.term, t.df FROM ${agents} a
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
          return { term: row.term!, df, idf: Math.log(1 + (n - df + 0.5) / (df + 0.5)) };
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
      // from their own postings ((id, term) index): a record's common-term contribution counts
      // even when it was not among that term's best postings.
      const truncated = take.some((value) => value !== null);
      const { rows } = await client.query<HitRow & { score: number }>(
        `WITH query_terms AS (SELECT * FROM unnest($2::text[], $3::float8[], $4::int[]) AS q(term, idf, take)),
         -- Index-only reads of (agent_id, term, impact DESC) INCLUDE (id, tf, term_count).
         matches AS (
           SELECT p.id, q.idf, p.tf, p.term_count FROM query_terms q
           CROSS JOIN LATERAL (SELECT id, tf, term_count FROM ${postings} WHERE agent_id = $1 AND term = q.term ORDER BY impact DESC LIMIT q.take) p),
         partial AS (
           SELECT id, sum(${BM25('idf', 'tf', 'term_count', '$5')}) AS score
           FROM matches GROUP BY id
           ORDER BY score DESC, id COLLATE "C" LIMIT $6),
         scores AS (${
           truncated
             ? `SELECT c.id, sum(${BM25('q.idf', 'p.tf', 'p.term_count', '$5')}) AS score
                FROM partial c JOIN ${postings} p ON p.id = c.id AND p.term = ANY($2::text[]) JOIN query_terms q ON q.term = p.term
                GROUP BY c.id ORDER BY score DESC, c.id COLLATE "C" LIMIT $7`
             : 'SELECT id, score FROM partial LIMIT $7'
         })
         SELECT ${hitColumns('r.')}, scores.score
         FROM scores JOIN ${records} r ON r.id = scores.id
         ORDER BY scores.score DESC, r.id COLLATE "C"`,
        [agentId, present.map((term) => term.term), present.map((term) => term.idf), take, averageLength, truncated ? Math.max(limit, options.rescored) : limit, limit],
      );
      return rows.map((row) => ({ record: hitFromRow(row), score: Number(row.score) }));
    },
  };
}

export type FullTextChannel = ReturnType<typeof fullTextChannel>;
