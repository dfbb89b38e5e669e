import { describe, expect, it } from 'vitest';
import { mockEmbedder } from './mock-embedder.js';

const cosine = (a: Float32Array, b: Float32Array) => a.reduce((sum, value, index) => sum + value * (b[index] ?? 0), 0);

describe('mockEmbedder', () => {
  it('returns one unit vector of the configured length per text, deterministically', async () => {
    const embedder = mockEmbedder({ dimensions: 32 });
    const first = await embedder.embed({ texts: ['Ana lives in Lisbon', '', 'Ana lives in Lisbon'] });
    const second = await mockEmbedder({ dimensions: 32 }).embed({ texts: ['Ana lives in Lisbon'] });
    expect(first.vectors).toHaveLength(3);
    for (const vector of first.vectors) {
      expect(vector).toHaveLength(32);
      expect(cosine(vector, vector)).toBeCloseTo(1, 5);
    }
    expect([...(first.vectors[0] ?? [])]).toEqual([...(second.vectors[0] ?? [])]);
    expect(embedder.id).toBe('mock-embedder:32');
  });

  it('puts texts sharing words closer than unrelated texts', async () => {
    const embedder = mockEmbedder({ dimensions: 256 });
    const [query, related, unrelated] = (await embedder.embed({ texts: ['where does Ana live', 'Ana lives in Lisbon', 'quarterly revenue grew'] })).vectors;
    expect(cosine(query!, related!)).toBeGreaterThan(cosine(query!, unrelated!));
  });

  it('records calls and rejects with an AbortError when aborted', async () => {
    const embedder = mockEmbedder();
    await expect(embedder.embed({ texts: ['x'], signal: AbortSignal.abort() })).rejects.toMatchObject({ name: 'AbortError' });
    expect(embedder.calls).toHaveLength(1);
  });
});
