import { describe, expect, it } from 'vitest';
import { hashedNgramEmbedder } from '../embedding/hashed-ngram-embedder.js';
import { inMemoryMemoryIndex } from '../in-memory/in-memory-memory-index.js';
import type { Embedder } from '../ports/embedder.js';
import { learningService } from '../__fixtures__/learning-service.js';

/** The hashed embedder, counting every text it is asked to embed. */
function countingEmbedder(): Embedder & { texts: string[] } {
  const base = hashedNgramEmbedder();
  const texts: string[] = [];
  return {
    ...base,
    texts,
    embed(request) {
      texts.push(...request.texts);
      return base.embed(request);
    },
  };
}

describe('learning embeds each memory text once per batch', () => {
  it("reuses the vector of the writer's lookup for the commit", async () => {
    const embedder = countingEmbedder();
    const index = inMemoryMemoryIndex();
    const { service, agentId, observeSettled } = await learningService({ embedder, index });
    const said = (text: string, timestamp: string) => ({ content: [{ type: 'text' as const, text }], timestamp, speaker: 'Ana' });
    // Statements of a fact that can change look up similar memories (the default writer's supersession).
    const status = await observeSettled([said('I live in Porto.', '2024-01-01T00:00:00.000Z'), said('My phone number changed, the new one ends in 42.', '2024-01-02T00:00:00.000Z'), said('Lovely weather today!', '2024-01-03T00:00:00.000Z')]);
    expect(status.status).toBe('committed');
    const { records } = await index.list({ agentId, limit: 10 });
    expect(records.length).toBeGreaterThan(0);
    const learned = embedder.texts.filter((text) => records.some((record) => record.text === text));
    // Every memory text was embedded, and none twice (before: once for the lookup, once for the commit).
    expect(new Set(learned).size).toBe(records.length);
    expect(learned.length).toBe(records.length);
    // The lookups ran: at least one memory text was embedded before its commit by the writer.
    expect(embedder.texts.length).toBeGreaterThanOrEqual(records.length);
    await service.stop();
  });
});
