import { describe, expect, it } from 'vitest';
import { inMemoryMemoryIndex } from '../in-memory/in-memory-memory-index.js';
import type { MemoryHitRecord, MemoryRecord } from '../ports/memory-index.js';
import { checkRetrievalOptions, type RetrievedItem } from './weights.js';
import { rerank } from './rerank.js';

const record = (id: string, vector: number[]): MemoryRecord => ({
  id,
  organizationId: 'org_1',
  agentId: 'agent_1',
  text: `memory ${id}`,
  keywords: '',
  vector: Float32Array.from(vector),
  speaker: 'user',
  occurredAt: null,
  source: { kind: 'turn', threadId: 'thread_1', observationId: 'obs_1', turnIndex: 0 },
  createdAt: '2024-01-01T00:00:00.000Z',
  provenance: { writer: 'verbatim-v2', jobId: null, span: null },
  alsoFrom: [],
  validFrom: null,
  validTo: null,
  supersededBy: null,
  suspicious: false, expiresAt: null,
});

async function indexWith(records: MemoryRecord[]) {
  const index = inMemoryMemoryIndex();
  await index.init();
  await index.upsert({ records, embedder: { id: 'test', dimensions: 2 } });
  return index;
}

const item = (id: string, score: number): RetrievedItem => ({ record: { id } as MemoryHitRecord, score });

describe('rerank (maximal marginal relevance)', () => {
  it('moves a different memory ahead of a second wording of the best one', async () => {
    const index = await indexWith([record('a', [1, 0]), record('a2', [0.99, 0.14]), record('b', [0, 1])]);
    const ranked = [item('a', 1), item('a2', 0.95), item('b', 0.8)];
    expect((await rerank(index, 'agent_1', ranked, { diversity: 0.5 })).map((entry) => entry.record.id)).toEqual(['a', 'b', 'a2']);
    // Without diversity, and with little of it, the fused order stays.
    expect((await rerank(index, 'agent_1', ranked, { diversity: 0 })).map((entry) => entry.record.id)).toEqual(['a', 'a2', 'b']);
    expect((await rerank(index, 'agent_1', ranked, { diversity: 0.05 })).map((entry) => entry.record.id)).toEqual(['a', 'a2', 'b']);
  });

  it('reorders only the first `depth` candidates; ones the index no longer has keep their place after them', async () => {
    const index = await indexWith([record('a', [1, 0]), record('a2', [1, 0]), record('b', [0, 1]), record('c', [0.7, 0.7])]);
    const ranked = [item('a', 1), item('gone', 0.97), item('a2', 0.95), item('b', 0.9), item('c', 0.1)];
    expect((await rerank(index, 'agent_1', ranked, { diversity: 0.5, depth: 4 })).map((entry) => entry.record.id)).toEqual(['a', 'b', 'a2', 'gone', 'c']);
  });

  it.each([
    [{ diversity: -0.1 }, 'retrieval.rerank.diversity must be a number in [0, 1], got -0.1'],
    [{ diversity: 1.01 }, 'retrieval.rerank.diversity must be a number in [0, 1], got 1.01'],
    [{ diversity: Number.NaN }, 'retrieval.rerank.diversity must be a number in [0, 1], got NaN'],
    [{ diversity: 0.3, depth: 1 }, 'retrieval.rerank.depth must be an integer in 2..200, got 1'],
    [{ diversity: 0.3, depth: 201 }, 'retrieval.rerank.depth must be an integer in 2..200, got 201'],
  ])('refuses %j', (rerankOptions, message) => {
    expect(() => checkRetrievalOptions({ rerank: rerankOptions })).toThrow(message);
  });

  it('accepts the edges', () => {
    for (const rerankOptions of [{ diversity: 0 }, { diversity: 1, depth: 2 }, { diversity: 0.5, depth: 200 }]) expect(checkRetrievalOptions({ rerank: rerankOptions })).toEqual({ rerank: rerankOptions });
  });
});
