import { afterEach, describe, expect, it } from 'vitest';
import type { Embedder } from '../../../ports/embedder.js';

/** What an embedder conformance run is given. */
export type EmbedderConformanceOptions = {
  /** Shown in test names. */
  name: string;
  /** Makes the embedder for one test. */
  create: () => Promise<{ port: Embedder; cleanup?: () => Promise<void> }>;
  /**
   * Whether to check that similar texts score above dissimilar ones (true for any real model and
   * for the hashed embedder; false for mocks that return arbitrary vectors).
   * @default true
   */
  isSemantic?: boolean;
  /** Test names (`"<area>: <behaviour>"`) to leave out, with a reason in the caller's code. */
  skip?: string[];
};

const cosine = (a: Float32Array, b: Float32Array) => {
  let dot = 0;
  let normA = 0;
  let normB = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    normA += a[i]! * a[i]!;
    normB += b[i]! * b[i]!;
  }
  return normA === 0 || normB === 0 ? 0 : dot / Math.sqrt(normA * normB);
};

/**
 * The `Embedder` conformance suite: one vector per text in input order, the declared dimensions,
 * determinism, finite values, a stable id, and (unless `isSemantic: false`) similar texts closer
 * than unrelated ones.
 *
 * @example
 * describeEmbedderConformance({ name: 'hashed', create: async () => ({ port: hashedNgramEmbedder() }) });
 */
export function describeEmbedderConformance(options: EmbedderConformanceOptions): void {
  describe(`Embedder conformance: ${options.name}`, () => {
    const cleanups: (() => Promise<void>)[] = [];
    afterEach(async () => {
      while (cleanups.length > 0) await cleanups.pop()!();
    });
    const test = (title: string, body: (embedder: Embedder) => Promise<void>) => {
      const run = options.skip?.includes(title) ? it.skip : it;
      run(title, async () => {
        const { port, cleanup } = await options.create();
        if (cleanup) cleanups.push(cleanup);
        await body(port);
      });
    };

    test('identity: specificationVersion v1, a non-empty id and positive integer dimensions', async (embedder) => {
      expect(embedder.specificationVersion).toBe('v1');
      expect(embedder.id.length).toBeGreaterThan(0);
      expect(Number.isInteger(embedder.dimensions) && embedder.dimensions > 0).toBe(true);
    });

    test('embed: one vector per text, in input order, of the declared dimensions', async (embedder) => {
      const texts = ['Caroline went hiking', 'The quarterly report is due Friday', 'Caroline went hiking', 'x'];
      const { vectors, usage } = await embedder.embed({ texts });
      expect(vectors).toHaveLength(texts.length);
      // Usage is optional; when reported, a token count (issue 33).
      if (usage !== undefined) expect(Number.isSafeInteger(usage.inputTokens) && usage.inputTokens >= 0).toBe(true);
      for (const vector of vectors) {
        expect(vector).toBeInstanceOf(Float32Array);
        expect(vector.length).toBe(embedder.dimensions);
      }
      // Same text at positions 0 and 2, so order is observable.
      expect(Array.from(vectors[2]!)).toEqual(Array.from(vectors[0]!));
      expect(Array.from(vectors[1]!)).not.toEqual(Array.from(vectors[0]!));
      const { vectors: single } = await embedder.embed({ texts: [texts[1]!] });
      expect(Array.from(single[0]!)).toEqual(Array.from(vectors[1]!));
    });

    test('embed: an empty batch gives no vectors', async (embedder) => {
      expect((await embedder.embed({ texts: [] })).vectors).toEqual([]);
    });

    test('embed: deterministic across calls and instances', async (embedder) => {
      const texts = ['Melanie painted a sunrise over the lake', 'Ünïcödé, emoji 🎉 and CJK 记忆 survive'];
      const first = await embedder.embed({ texts });
      const second = await embedder.embed({ texts });
      const { port: other, cleanup } = await options.create();
      if (cleanup) cleanups.push(cleanup);
      const third = await other.embed({ texts });
      expect(other.id).toBe(embedder.id);
      for (let i = 0; i < texts.length; i++) {
        expect(Array.from(second.vectors[i]!)).toEqual(Array.from(first.vectors[i]!));
        expect(Array.from(third.vectors[i]!)).toEqual(Array.from(first.vectors[i]!));
      }
    });

    test('embed: values are finite, also for empty, long and odd texts', async (embedder) => {
      const texts = ['', '   ', '!!! ??? ...', 'the of and', 'a'.repeat(5000), 'word '.repeat(2000), '\u0000\uffff\ud800'];
      const { vectors } = await embedder.embed({ texts });
      expect(vectors).toHaveLength(texts.length);
      for (const vector of vectors) for (const value of vector) expect(Number.isFinite(value)).toBe(true);
    });

    test('embed: similar texts are closer than unrelated ones', async (embedder) => {
      if (options.isSemantic === false) return;
      const [anchor, similar, unrelated] = (
        await embedder.embed({
          texts: [
            'Caroline is going hiking in the mountains this weekend',
            'This weekend Caroline goes on a mountain hike',
            'The invoice for the printer cartridges was paid yesterday',
          ],
        })
      ).vectors as [Float32Array, Float32Array, Float32Array];
      expect(cosine(anchor, similar)).toBeGreaterThan(cosine(anchor, unrelated));
      expect(cosine(anchor, anchor)).toBeCloseTo(1, 4);
    });

    test('embed: rejects when the signal is already aborted', async (embedder) => {
      const controller = new AbortController();
      controller.abort();
      await expect(embedder.embed({ texts: ['hello'], signal: controller.signal })).rejects.toBeDefined();
    });
  });
}
