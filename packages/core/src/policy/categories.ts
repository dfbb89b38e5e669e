import type { Embedder } from '../ports/embedder.js';
import type { PolicyCategory } from '../ports/store/index.js';

/**
 * The category of a memory from an agent's closed list (`extraction_policy.categories`, issue 44):
 * - a category the writer proposed (the LLM writer is shown the list) is kept when the list holds
 *   it, and refused otherwise: the memory gets no category (or is not kept, with `only_categories`);
 *   a name outside the list is never stored;
 * - else the first category one of whose `keywords` (its name when it gives none) the memory's text
 *   holds as a whole word or phrase, case-insensitive: the offline rule, the operator's own words;
 * - else, when the embedder's vectors carry meaning (`Embedder.meaning`, a sentence model), the
 *   category whose centroid (the embedding of its name, description and keywords) is nearest the
 *   memory's vector, when its cosine similarity is at least {@link CENTROID_THRESHOLD}.
 */

/**
 * The least cosine similarity between a memory and a category's centroid for the category to be
 * given by meaning (all-MiniLM-L6-v2 on seeded memories, `bench/category-centroids.ts`: precision 0.90,
 * recall 0.38, no memory of no category given one; at 0.20 precision fell to 0.75 with one stray).
 * Precision first: a wrong category can drop a memory (an exclude rule naming it).
 */
export const CENTROID_THRESHOLD = 0.25;

/** What a writer proposed for a memory: a name (maybe outside the list), null for none, undefined when it did not say. */
export type ProposedCategory = string | null | undefined;

/** The category the list gives a proposal: the name when listed, else null (refused). */
export function listedCategory(categories: readonly PolicyCategory[], proposed: string | null): string | null {
  if (proposed === null) return null;
  const name = proposed.trim().toLowerCase();
  return categories.some((category) => category.name === name) ? name : null;
}

/** The first category whose keywords (or name) the text holds as a whole word or phrase; null when none. */
export function keywordCategory(categories: readonly PolicyCategory[], text: string): string | null {
  const lower = text.toLowerCase();
  for (const category of categories) {
    const words = category.keywords ?? [category.name.replace(/[_-]+/g, ' ')];
    if (words.some((word) => lower.includes(word.toLowerCase()) && wordPattern(word).test(lower))) return category.name;
  }
  return null;
}

const patterns = new Map<string, RegExp>();
function wordPattern(word: string): RegExp {
  let pattern = patterns.get(word);
  if (!pattern) {
    if (patterns.size >= 2000) patterns.clear();
    const escaped = word.toLowerCase().replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    patterns.set(word, (pattern = new RegExp(`(?<![\\p{L}\\p{N}])${escaped}(?![\\p{L}\\p{N}])`, 'u')));
  }
  return pattern;
}

/** The texts a category's centroid averages: its name, its description, each keyword, and all of them joined. */
export const centroidTexts = (category: PolicyCategory): string[] => {
  const name = category.name.replace(/[_-]+/g, ' ');
  const joined = [name, category.description, category.keywords?.join(', ')].filter(Boolean).join(': ');
  return [...new Set([name, ...(category.description ? [category.description] : []), ...(category.keywords ?? []), joined])];
};

/** Centroids by embedder and category: computed once per process. */
const centroids = new Map<string, Float32Array>();

/**
 * The centroids of the categories under `embedder` (each the normalised mean of the vectors of its
 * {@link centroidTexts}: measured nearer to short memories than one joined text), embedding what
 * was not seen before in one call.
 */
export async function centroidsOf(embedder: Embedder, categories: readonly PolicyCategory[]): Promise<Float32Array[]> {
  const keyOf = (category: PolicyCategory) => `${embedder.id}\u0000${JSON.stringify(centroidTexts(category))}`;
  const missing = categories.filter((category) => !centroids.has(keyOf(category)));
  if (missing.length > 0) {
    const texts = missing.map(centroidTexts);
    const { vectors } = await embedder.embed({ texts: texts.flat() });
    if (centroids.size + missing.length > 5000) centroids.clear();
    let at = 0;
    missing.forEach((category, i) => {
      const parts = vectors.slice(at, (at += texts[i]!.length));
      centroids.set(keyOf(category), normalised(parts));
    });
  }
  return categories.map((category) => centroids.get(keyOf(category))!);
}

function normalised(parts: readonly Float32Array[]): Float32Array {
  const sum = new Float32Array(parts[0]?.length ?? 0);
  for (const part of parts) for (let i = 0; i < sum.length; i++) sum[i]! += part[i]!;
  const norm = Math.hypot(...sum);
  return norm === 0 ? sum : sum.map((value) => value / norm);
}

/** The category whose centroid is nearest `vector`, when at least `threshold`; null otherwise. */
export function nearestCategory(categories: readonly PolicyCategory[], centroidVectors: readonly Float32Array[], vector: Float32Array, threshold = CENTROID_THRESHOLD): string | null {
  let best: string | null = null;
  let bestScore = threshold;
  categories.forEach((category, i) => {
    const score = cosine(vector, centroidVectors[i]!);
    if (score >= bestScore) {
      best = category.name;
      bestScore = score;
    }
  });
  return best;
}

function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length && i < b.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}
