import { analyze, type MemoryHit } from '@memory-agents/core';
import { columns, fromRow, type IndexState, type RecordRow } from './schema.js';

/** BM25 parameters, the same as the in-memory index. */
const K1 = 1.2;
const B = 0.75;

export type FullTextChannelOptions = {
  /**
   * Records scored per search, at most about this many: the rarest query terms' records first.
   * `Infinity` scores every record sharing a term (exact, the cost grows with the agent).
   */
  candidates: number;
};

/**
 * The lexical channel: Okapi BM25 (k1 1.2, b 0.75) over core's analyzed terms, with the corpus
 * statistics (N, average length, document frequencies) read from the per-agent tables the writes
 * keep, and a bounded candidate set (MaxScore-style, rarest terms first):
 *
 * - query terms are taken by ascending document frequency while their records add up to at most
 *   `candidates`: every record holding one of these "essential" terms is scored, on all terms;
 * - records holding only the other (common) terms can score at most the sum of those terms' upper
 *   bounds (idf × (k1 + 1)); they are added, up to the remaining budget, in table order.
 *
 * The result is exact when the k-th essential score beats that bound or when the common terms'
 * records fit in the budget (always, for an agent under `candidates` records); otherwise the tail
 * may miss records that hold only common terms (bench/index-scale reports recall against exact).
 */
export function fullTextChannel(state: IndexState, options: FullTextChannelOptions) {
  const { client } = state;
  const { records, agents, terms: termTable } = state.tables;

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

      let essentialCount = 1;
      let essentialRows = present[0]!.df;
      while (essentialCount < present.length && essentialRows + present[essentialCount]!.df <= options.candidates) {
        essentialRows += present[essentialCount]!.df;
        essentialCount++;
      }
      const essential = present.slice(0, essentialCount).map((term) => term.term);
      const common = present.slice(essentialCount).map((term) => term.term);
      const commonBudget = common.length === 0 ? 0 : Number.isFinite(options.candidates) ? Math.max(limit * 4, options.candidates - essentialRows) : null;

      const { rows } = await client.query<RecordRow & { score: number }>(
        `WITH query_terms AS (SELECT * FROM unnest($2::text[], $3::float8[]) AS q(term, idf)),
         candidates AS (
           SELECT id, terms, term_count FROM ${records} WHERE agent_id = $1 AND terms && $4::text[]
           UNION ALL
           (SELECT id, terms, term_count FROM ${records} WHERE agent_id = $1 AND terms && $5::text[] AND NOT terms && $4::text[] LIMIT $6)),
         -- One row per (candidate, matching query term); array_positions counts the term in C
         -- instead of unnesting every candidate's terms.
         frequencies AS (
           SELECT * FROM (
             SELECT c.id, q.idf, c.term_count, coalesce(cardinality(array_positions(c.terms, q.term)), 0)::float8 AS tf
             FROM candidates c CROSS JOIN query_terms q) AS counted
           WHERE tf > 0),
         scores AS (
           SELECT id, sum(idf * tf * ${K1 + 1} / (tf + ${K1} * (${1 - B} + ${B} * term_count / $7::float8))) AS score
           FROM frequencies GROUP BY id
           ORDER BY score DESC, id COLLATE "C" LIMIT $8)
         SELECT ${columns('r.')}, scores.score
         FROM scores JOIN ${records} r ON r.id = scores.id
         ORDER BY scores.score DESC, r.id COLLATE "C"`,
        [agentId, present.map((term) => term.term), present.map((term) => term.idf), essential, common, commonBudget, averageLength, limit],
      );
      return rows.map((row) => ({ record: fromRow(row), score: Number(row.score) }));
    },
  };
}

export type FullTextChannel = ReturnType<typeof fullTextChannel>;
