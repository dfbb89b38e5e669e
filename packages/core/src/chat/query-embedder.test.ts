import { describe, expect, it } from 'vitest';
import { hashedNgramEmbedder } from '../embedding/hashed-ngram-embedder.js';
import { isServiceError } from '../errors/index.js';
import { inMemoryMemoryIndex } from '../in-memory/in-memory-memory-index.js';
import { LanguageModelError } from '../ports/language-model.js';
import type { Embedder } from '../ports/embedder.js';
import { queryEmbedder } from './query-embedder.js';

describe('queryEmbedder', () => {
  it('embeds with the configured embedder while the index was built by it (or is empty)', async () => {
    const embedder = hashedNgramEmbedder();
    const wrapped = await queryEmbedder(inMemoryMemoryIndex(), embedder);
    expect((await wrapped.embed({ texts: ['hello'] })).vectors).toHaveLength(1);
  });

  it('gives no vector when the index was built by another embedder, so only full-text search runs', async () => {
    const index = inMemoryMemoryIndex();
    const built = hashedNgramEmbedder();
    await index.upsert({
      records: [
        {
          id: 'mem_1',
          organizationId: 'org_1',
          agentId: 'agent_1',
          text: 'hello',
          keywords: '',
          vector: (await built.embed({ texts: ['hello'] })).vectors[0]!,
          speaker: null,
          occurredAt: null,
          source: { kind: 'turn', threadId: 't', observationId: 'o', turnIndex: 0 },
          createdAt: '2026-01-01T00:00:00.000Z',
          provenance: { writer: 'unknown', jobId: null, span: null }, alsoFrom: [], validFrom: null, validTo: null, supersededBy: null, suspicious: false, expiresAt: null,
        },
      ],
      embedder: { id: built.id, dimensions: built.dimensions },
    });
    const wrapped = await queryEmbedder(index, hashedNgramEmbedder({ dimensions: 64 }));
    expect((await wrapped.embed({ texts: ['hello'] })).vectors).toEqual([]);
  });

  it('turns a provider failure into 503 service_unavailable', async () => {
    const down: Embedder = {
      specificationVersion: 'v1',
      id: 'down',
      dimensions: 4,
      embed: async () => {
        throw new LanguageModelError('unavailable', 'connection refused');
      },
    };
    const error = await (await queryEmbedder(inMemoryMemoryIndex(), down)).embed({ texts: ['x'] }).catch((caught: unknown) => caught);
    expect(isServiceError(error) && error.code).toBe('service_unavailable');
  });
});
