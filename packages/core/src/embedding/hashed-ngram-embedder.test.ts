import { describe, expect, it } from 'vitest';
import { describeEmbedderConformance } from '../testing/conformance/embedder/index.js';
import { hashedNgramEmbedder } from './hashed-ngram-embedder.js';

describeEmbedderConformance({ name: 'hashed n-grams', create: async () => ({ port: hashedNgramEmbedder() }) });
describeEmbedderConformance({ name: 'hashed n-grams, 64 dims', create: async () => ({ port: hashedNgramEmbedder({ dimensions: 64 }) }) });

const embedder = hashedNgramEmbedder();
const cosine = (a: string, b: string) => {
  const x = embedder.embedSync(a);
  const y = embedder.embedSync(b);
  let dot = 0;
  for (let i = 0; i < x.length; i++) dot += x[i]! * y[i]!;
  return dot;
};

describe('hashedNgramEmbedder', () => {
  it('names recipe and dimensions in its id', () => {
    expect(embedder.id).toBe('hashed-ngrams-v1:384');
    expect(hashedNgramEmbedder({ dimensions: 128 }).id).toBe('hashed-ngrams-v1:128');
  });

  it('rejects impossible dimensions', () => {
    expect(() => hashedNgramEmbedder({ dimensions: 0 })).toThrow(RangeError);
    expect(() => hashedNgramEmbedder({ dimensions: 1.5 })).toThrow(RangeError);
  });

  it('returns unit vectors for texts with words and a zero vector for texts without', () => {
    for (const text of ['running shoes', 'Who are you?', 'x 1']) {
      const vector = embedder.embedSync(text);
      let norm = 0;
      for (const value of vector) norm += value * value;
      expect(norm).toBeCloseTo(1, 5);
    }
    expect(embedder.embedSync('?!').every((value) => value === 0)).toBe(true);
  });

  it('maps inflected forms together: "running shoes" ~ "run shoe"', () => {
    expect(cosine('running shoes', 'run shoe')).toBeGreaterThan(0.95);
    expect(cosine('Caroline adopted two puppies', 'caroline adopting a puppy')).toBeGreaterThan(0.7);
  });

  it('gives partial credit for shared words and typos, little for unrelated texts', () => {
    const related = cosine('Caroline went to the LGBTQ support group', 'Caroline attended a support group');
    const typo = cosine('Melanie painted a beautiful sunrise', 'Melanie paintd a beautifull sunrise');
    const unrelated = cosine('Caroline went to the LGBTQ support group', 'The invoice was paid yesterday');
    expect(related).toBeGreaterThan(0.4);
    expect(typo).toBeGreaterThan(0.5);
    expect(Math.abs(unrelated)).toBeLessThan(0.2);
  });

  it('weights repeated words sublinearly', () => {
    const once = cosine('kayak trip', 'kayak');
    const many = cosine('kayak kayak kayak kayak trip', 'kayak');
    expect(many).toBeGreaterThan(once);
    expect(many).toBeLessThan(0.95);
  });
});
