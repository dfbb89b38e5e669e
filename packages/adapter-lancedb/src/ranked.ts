import { compareMemoryHits, type MemoryHit, type MemoryHitRecord } from '@memory-agents/core/adapter';

/** Scores tie within this distance (float noise across queries and index types). */
const TIE = 1e-6;

/** The same ranking reading only ids and scores, and the records of ids by id. */
export type DeeperRanking = {
  ids: (count: number) => Promise<{ id: string; score: number }[]>;
  records: (ids: string[]) => Promise<Map<string, MemoryHitRecord>>;
};

/**
 * Runs a ranked query with room for ties: if the tie at the cut may continue past what was
 * fetched, "ties ordered by id" must still hold exactly at the `limit` boundary.
 *
 * `fetch` reads whole records (one row past the limit shows whether the tie continues). With
 * `deeper` (the same ranking reading only ids and scores, which costs about the same for 50 or
 * 1,000 rows), a tie is settled from a deeper id list and only the records that enter the top
 * from beyond the first fetch are read by id; without it, the whole fetch is repeated deeper.
 * Both channels come back in score order (BM25 top-k and the vector search are exact in their
 * order; re-scoring with exact cosine moves nothing but near-ties, which the check catches).
 * `firstCount` (at least `limit + 1`) is how many the first fetch reads: more room settles more
 * ties without a second query.
 */
export async function ranked(
  limit: number,
  fetch: (count: number) => Promise<MemoryHit[]>,
  deeper?: DeeperRanking,
  firstCount = limit + 1,
): Promise<MemoryHit[]> {
  let count = Math.max(limit + 1, firstCount);
  for (;;) {
    const hits = (await fetch(count)).sort(compareMemoryHits);
    if (hits.length < count || hits.length <= limit) return hits.slice(0, limit);
    const cutScore = hits[limit - 1]!.score;
    if (hits[hits.length - 1]!.score < cutScore - TIE) return hits.slice(0, limit);
    count *= 4;
    if (!deeper) continue;
    let scored = await deeper.ids(count);
    while (scored.length === count && scored[scored.length - 1]!.score >= cutScore - TIE) scored = await deeper.ids((count *= 4));
    const top = scored
      .sort((a, b) => (a.score !== b.score ? b.score - a.score : a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
      .slice(0, limit);
    const known = new Map(hits.map((hit) => [hit.record.id, hit.record]));
    const missing = await deeper.records(top.filter((entry) => !known.has(entry.id)).map((entry) => entry.id));
    return top.flatMap((entry) => {
      const record = known.get(entry.id) ?? missing.get(entry.id);
      return record ? [{ record, score: entry.score }] : [];
    });
  }
}

/**
 * `ranked` for items that are not hits yet (full-text candidates: id, score and what rescoring
 * needs), without the deeper id list: a tie at the cut that continues past the fetch repeats the
 * fetch four times deeper. Best first, ties by id.
 */
export async function rankedItems<T extends { id: string; score: number }>(limit: number, fetch: (count: number) => Promise<T[]>): Promise<T[]> {
  for (let count = limit + 1; ; count *= 4) {
    const items = (await fetch(count)).sort((a, b) => (a.score !== b.score ? b.score - a.score : a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    if (items.length < count || items.length <= limit) return items.slice(0, limit);
    if (items[items.length - 1]!.score < items[limit - 1]!.score - TIE) return items.slice(0, limit);
  }
}
