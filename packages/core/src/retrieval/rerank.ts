import type { MemoryIndex } from '../ports/memory-index.js';
import type { RetrievedItem } from './weights.js';

/** The rerank stage's settings ({@link RetrievalOptions.rerank}). */
export type RerankOptions = {
  /**
   * Maximal marginal relevance over the best {@link RerankOptions.depth} candidates: each next item
   * is the one with the best `(1 - diversity) * relevance - diversity * similarity to the items
   * already chosen` (relevance: the fused score over the best; similarity: the cosine of the
   * stored vectors). 0 keeps the fused order; values in [0, 1].
   */
  diversity: number;
  /** Candidates reordered (the rest keep their order after them), 2..200. @default 30 */
  depth?: number;
};

export const DEFAULT_RERANK_DEPTH = 30;

/** `options` checked for createMemoryService: a clear sentence for a value out of range. */
export function checkRerankOptions(options: RerankOptions): RerankOptions {
  const { diversity, depth } = options;
  if (typeof diversity !== 'number' || !Number.isFinite(diversity) || diversity < 0 || diversity > 1) throw new RangeError(`retrieval.rerank.diversity must be a number in [0, 1], got ${String(diversity)}`);
  if (depth !== undefined && (!Number.isInteger(depth) || depth < 2 || depth > 200)) throw new RangeError(`retrieval.rerank.depth must be an integer in 2..200, got ${String(depth)}`);
  return options;
}

const cosine = (a: Float32Array, b: Float32Array) => {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
};

/**
 * The rerank stage after fusion (issue 39; off unless asked): maximal marginal relevance with the
 * candidates' stored vectors (one `get` of at most `depth` records), so the first places hold
 * different evidence rather than several wordings of one turn. Model-free: it reuses the vectors
 * the index already has. Candidates the index no longer returns keep their fused place at the end.
 */
export async function rerank(index: MemoryIndex, agentId: string, ranked: RetrievedItem[], options: RerankOptions): Promise<RetrievedItem[]> {
  const depth = options.depth ?? DEFAULT_RERANK_DEPTH;
  if (options.diversity === 0 || ranked.length < 3) return ranked;
  const head = ranked.slice(0, depth);
  const records = await index.get({ agentId, ids: head.map((item) => item.record.id) });
  const vectors = new Map(records.map((record) => [record.id, record.vector]));
  const best = Math.max(...head.map((item) => item.score));
  const floor = Math.min(...head.map((item) => item.score));
  const relevance = (item: RetrievedItem) => (best > floor ? (item.score - floor) / (best - floor) : 1);
  const left = head.filter((item) => vectors.has(item.record.id));
  const chosen: RetrievedItem[] = [];
  // Greatest similarity of each candidate to the chosen items, updated as items are chosen.
  const nearest = new Map(left.map((item) => [item.record.id, 0]));
  while (left.length > 0) {
    let pick = 0;
    let pickValue = Number.NEGATIVE_INFINITY;
    left.forEach((item, i) => {
      const value = (1 - options.diversity) * relevance(item) - options.diversity * nearest.get(item.record.id)!;
      if (value > pickValue) {
        pickValue = value;
        pick = i;
      }
    });
    const [picked] = left.splice(pick, 1);
    chosen.push(picked!);
    const vector = vectors.get(picked!.record.id)!;
    for (const item of left) nearest.set(item.record.id, Math.max(nearest.get(item.record.id)!, cosine(vector, vectors.get(item.record.id)!)));
  }
  const missing = head.filter((item) => !vectors.has(item.record.id));
  return [...chosen, ...missing, ...ranked.slice(depth)];
}
