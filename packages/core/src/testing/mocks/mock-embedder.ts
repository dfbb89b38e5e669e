import type { EmbedRequest, Embedder } from '../../ports/embedder.js';

/** Options of {@link mockEmbedder}. */
export type MockEmbedderOptions = {
  /** Vector length. @default 16 */
  dimensions?: number;
  /** Reported as the embedder's `id`. @default `mock-embedder:<dimensions>` */
  id?: string;
};

export type MockEmbedder = Embedder & {
  /** Every `embed` request, in order. */
  readonly calls: EmbedRequest[];
};

/**
 * A deterministic {@link Embedder} for tests that records its calls. Each text becomes a unit
 * vector of hashed word and character-trigram counts, so equal texts give equal vectors and texts
 * sharing words point the same way (cosine similarity works as a rough relevance signal). An empty
 * text gets a fixed unit vector, never a zero vector.
 *
 * @example
 * const embedder = mockEmbedder({ dimensions: 8 });
 * const { vectors } = await embedder.embed({ texts: ['hello'] });
 */
export function mockEmbedder(options: MockEmbedderOptions = {}): MockEmbedder {
  const dimensions = options.dimensions ?? 16;
  if (!Number.isInteger(dimensions) || dimensions < 1) throw new TypeError('mockEmbedder: dimensions must be a positive integer');
  const calls: EmbedRequest[] = [];
  return {
    specificationVersion: 'v1',
    id: options.id ?? `mock-embedder:${dimensions}`,
    dimensions,
    calls,
    async embed(request) {
      calls.push(request);
      if (request.signal?.aborted) {
        const reason: unknown = request.signal.reason;
        throw reason instanceof Error && reason.name === 'AbortError' ? reason : new DOMException('The operation was aborted.', 'AbortError');
      }
      return { vectors: request.texts.map((text) => hashedVector(text, dimensions)) };
    },
  };
}

function hashedVector(text: string, dimensions: number): Float32Array {
  const vector = new Float32Array(dimensions);
  const normalized = text.toLowerCase();
  const words = normalized.match(/[\p{L}\p{N}]+/gu) ?? [];
  const features = [...words, ...words.flatMap((word) => trigrams(` ${word} `))];
  for (const feature of features) {
    const hash = fnv1a(feature);
    vector[hash % dimensions] = (vector[hash % dimensions] ?? 0) + ((hash >>> 16) & 1 ? 1 : -1);
  }
  let norm = Math.hypot(...vector);
  if (norm === 0) {
    vector[0] = 1;
    norm = 1;
  }
  return vector.map((value) => value / norm);
}

function trigrams(word: string): string[] {
  const grams: string[] = [];
  for (let index = 0; index + 3 <= word.length; index += 1) grams.push(word.slice(index, index + 3));
  return grams;
}

function fnv1a(text: string): number {
  let hash = 2166136261;
  for (const char of text) hash = Math.imul(hash ^ (char.codePointAt(0) ?? 0), 16777619);
  return hash >>> 0;
}
