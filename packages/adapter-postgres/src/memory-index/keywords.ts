import { analyze, indexedText, type MemoryKeywordsRequest } from '@memory-agents/core/adapter';
import type { SqlClient } from '../sql-client.js';
import { impact, type IndexTables } from './schema.js';
import { StatisticsDelta, bumpVersions, deletePostings } from './write-path.js';

/**
 * `MemoryIndex.rewriteKeywords` in one transaction (issue 41): the records' `keywords`, `terms` and
 * `term_count` change, their postings are written anew and BM25's statistics (document frequencies,
 * the agent's total length) move with them, as an upsert would move them. The old values are dead
 * tuples the store/ops layer vacuums (`erasures.reclaim`). Resolves the agent's new version.
 */
export async function rewriteKeywords(tx: SqlClient, tables: IndexTables, { agentId, records }: MemoryKeywordsRequest): Promise<Map<string, string>> {
  const wanted = new Map(records.map((record) => [record.id, record.keywords]));
  if (wanted.size === 0) return new Map();
  const versions = await bumpVersions(tx, tables, [agentId]);
  const { rows } = await tx.query<{ id: string; rec: string; text: string; terms: string[] }>(
    `SELECT id, rec, text, terms FROM ${tables.records} WHERE agent_id = $1 AND id = ANY($2::text[])`,
    [agentId, [...wanted.keys()]],
  );
  if (rows.length === 0) return versions;
  const delta = new StatisticsDelta();
  const analyzed = rows.map((row) => analyze(indexedText({ text: row.text, keywords: wanted.get(row.id)! })));
  rows.forEach((row, i) => {
    delta.add(agentId, row.terms, -1);
    delta.add(agentId, analyzed[i]!, 1);
  });
  await deletePostings(tx, tables, rows.map((row) => row.rec));
  const termIds = (await delta.applyTerms(tx, tables)).get(agentId) ?? new Map<string, string>();
  await tx.query(
    `UPDATE ${tables.records} r SET keywords = u.keywords, terms = string_to_array(u.terms, ' '), term_count = u.term_count
     FROM unnest($1::text[], $2::text[], $3::text[], $4::int[]) AS u(id, keywords, terms, term_count) WHERE r.id = u.id`,
    [rows.map((row) => row.id), rows.map((row) => wanted.get(row.id)!), analyzed.map((terms) => terms.join(' ')), analyzed.map((terms) => terms.length)],
  );
  const postingRec: string[] = [];
  const postingTerm: string[] = [];
  const postingTf: number[] = [];
  const postingLength: number[] = [];
  rows.forEach((row, i) => {
    const frequencies = new Map<string, number>();
    for (const term of analyzed[i]!) if (term !== '') frequencies.set(term, (frequencies.get(term) ?? 0) + 1);
    for (const [term, tf] of frequencies) {
      const id = termIds.get(term);
      if (id === undefined) throw new Error(`postgresMemoryIndex: no term id for ${JSON.stringify(term)} of agent ${agentId}`);
      postingRec.push(String(row.rec));
      postingTerm.push(id);
      postingTf.push(tf);
      postingLength.push(analyzed[i]!.length);
    }
  });
  await tx.query(
    `INSERT INTO ${tables.postings} (term_id, rec, impact, tf, term_count)
     SELECT p.term_id, p.rec, ${impact('p.tf', 'p.term_count', 'a.average')}, p.tf, p.term_count
     FROM unnest($1::bigint[], $2::bigint[], $3::int[], $4::int[]) AS p(rec, term_id, tf, term_count)
     LEFT JOIN ${tables.agents} ag ON ag.agent_id = $5
     CROSS JOIN LATERAL (SELECT CASE WHEN ag.row_count > 0 THEN greatest(ag.term_total::float8 / ag.row_count, 1) END AS average) a`,
    [postingRec, postingTerm, postingTf, postingLength, agentId],
  );
  await delta.applyAgents(tx, tables);
  return versions;
}
