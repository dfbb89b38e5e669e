import type { Table } from '@lancedb/lancedb';
import type { MemoryHit, MemoryHitRecord } from '@memory-agents/core/adapter';
import { agentFilter } from './rows.js';

/** BM25 parameters, the same as the in-memory and PostgreSQL indexes. */
const K1 = 1.2;
const B = 0.75;

/**
 * One agent's full-text statistics, as the in-memory and PostgreSQL indexes keep them: how many
 * analyzed terms its records hold in all, and in how many of its records each term occurs. Kept
 * with the agent's list (`AgentList.terms` in list-cache.ts, same table version), brought along by this instance's
 * appends and dropped by anything that replaces or removes a row (rebuilt on the next search).
 */
export type TermStats = { totalLength: number; documentFrequency: Map<string, number> };

/** Counts one record's space-joined analyzed terms in. */
export function countTerms(stats: TermStats, terms: string): void {
  const words = terms === '' ? [] : terms.split(' ');
  stats.totalLength += words.length;
  for (const term of new Set(words)) stats.documentFrequency.set(term, (stats.documentFrequency.get(term) ?? 0) + 1);
}

/** FNV-1a of a record's terms: a rewrite that keeps them (a validity change) keeps the statistics. */
export function termsHash(terms: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < terms.length; i++) hash = Math.imul(hash ^ terms.charCodeAt(i), 0x01000193);
  return hash >>> 0;
}

/**
 * The agent's statistics for the list's version: kept ones, else one scan of the agent's `terms`
 * column. They are kept only when no commit came during the scan (a write's rows would otherwise
 * be counted twice, once by the scan and once when the write brings the list along).
 */
export async function termStatsOf(
  current: Table,
  agentId: string,
  list: { version: number; entries: readonly unknown[]; byId: Map<string, { termsHash?: number | undefined }>; terms?: TermStats | undefined },
): Promise<TermStats> {
  if (list.terms) return list.terms;
  const version = list.version;
  const table = await current.query().where(agentFilter(agentId)).select(['id', 'terms']).toArrow();
  const ids = table.getChild('id');
  const column = table.getChild('terms');
  const stats: TermStats = { totalLength: 0, documentFrequency: new Map() };
  const hashes: [string, number][] = [];
  for (let i = 0; i < table.numRows; i++) {
    const terms = String(column?.get(i) ?? '');
    countTerms(stats, terms);
    hashes.push([String(ids?.get(i)), termsHash(terms)]);
  }
  if (list.version === version && list.entries.length === table.numRows) {
    for (const [id, hash] of hashes) {
      const entry = list.byId.get(id);
      if (entry) entry.termsHash = hash;
    }
    list.terms = stats;
  }
  return stats;
}

/** A full-text candidate: its id, its stored analyzed terms, and its record, read only if it is kept. */
export type LexicalCandidate = { id: string; terms: string; read: () => MemoryHitRecord };

/**
 * The candidates rescored with Okapi BM25 (k1 1.2, b 0.75, Lucene's idf) over the agent's own
 * records, as the other indexes score, best first (ties by id), at most `limit`. LanceDB's own BM25
 * counts every row of the table (other agents', and rows deleted since the index was built) and
 * scores rows written after the last index build apart, so the same records ranked differently in
 * a table that also held other agents, or in a copy of the agent written at once (issue 41).
 * Scored from each row's stored `terms` (core's `analyze` of the record, as written), so no
 * candidate's text is analyzed again and only the kept ones' records are read.
 */
export function rescoreLexical(candidates: readonly LexicalCandidate[], queryTerms: readonly string[], stats: TermStats, count: number, limit: number): MemoryHit[] {
  if (count === 0) return [];
  const averageLength = stats.totalLength / count || 1;
  const idf = new Map<string, number>();
  for (const term of queryTerms) {
    const df = stats.documentFrequency.get(term) ?? 0;
    if (df > 0) idf.set(term, Math.log(1 + (count - df + 0.5) / (df + 0.5)));
  }
  const scored: { candidate: LexicalCandidate; score: number }[] = [];
  for (const candidate of candidates) {
    const terms = candidate.terms === '' ? [] : candidate.terms.split(' ');
    const frequency = new Map<string, number>();
    for (const term of terms) if (idf.has(term)) frequency.set(term, (frequency.get(term) ?? 0) + 1);
    // Summed in query-term order, as the in-memory index sums: equal scores to the last bit.
    let score = 0;
    for (const term of queryTerms) {
      const tf = frequency.get(term);
      if (tf !== undefined) score += (idf.get(term)! * tf * (K1 + 1)) / (tf + K1 * (1 - B + (B * terms.length) / averageLength));
    }
    if (score > 0) scored.push({ candidate, score });
  }
  scored.sort((a, b) => (a.score !== b.score ? b.score - a.score : a.candidate.id < b.candidate.id ? -1 : a.candidate.id > b.candidate.id ? 1 : 0));
  return scored.slice(0, limit).map(({ candidate, score }) => ({ record: candidate.read(), score }));
}
