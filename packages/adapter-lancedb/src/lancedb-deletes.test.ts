import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hashedNgramEmbedder } from '@memory-agents/core';
import { type MemoryRecord } from '@memory-agents/core/adapter';
import { afterEach, describe, expect, it } from 'vitest';
import { lancedbMemoryIndex } from './lancedb-memory-index.js';

const embedder = hashedNgramEmbedder();
const fingerprint = { id: embedder.id, dimensions: embedder.dimensions };
const directories: string[] = [];
afterEach(async () => {
  while (directories.length > 0) await rm(directories.pop()!, { recursive: true, force: true });
});

const WORDS = ['garden', 'invoice', 'painting', 'marathon', 'guitar', 'recipe', 'sunset', 'puppy', 'library', 'concert', 'bicycle', 'camping', 'pottery', 'violin', 'museum'];

/** Deterministic sentences whose word frequencies differ between the two agents. */
function records(agentId: string, count: number, skew: number): MemoryRecord[] {
  return Array.from({ length: count }, (_, i) => {
    const words = [WORDS[(i * skew) % WORDS.length]!, WORDS[(i * 7 + skew) % WORDS.length]!, WORDS[(i * 3) % WORDS.length]!];
    const text = `Note ${i}: we talked about the ${words.join(' and the ')} today.`;
    return {
      id: `mem_${agentId}_${String(i).padStart(4, '0')}`,
      organizationId: 'org_x',
      agentId,
      text,
      keywords: '',
      vector: embedder.embedSync(text),
      speaker: 'user',
      occurredAt: null,
      source: { kind: 'turn', threadId: 'thread_x', observationId: `obs_${agentId}`, turnIndex: i },
      createdAt: '2026-01-01T00:00:00.000Z',
      provenance: { writer: 'unknown', jobId: null, span: null }, alsoFrom: [], validFrom: null, validTo: null, supersededBy: null, suspicious: false,
    } satisfies MemoryRecord;
  });
}

async function openIndex() {
  const directory = await mkdtemp(join(tmpdir(), 'memory-agents-lancedb-deletes-'));
  directories.push(directory);
  const index = lancedbMemoryIndex({ uri: directory });
  await index.init();
  return index;
}

describe('lancedbMemoryIndex after deletions', () => {
  it('ranks an agent\'s records as a table that never held the deleted agent does', async () => {
    const kept = records('agent_b', 400, 5);
    const withDeletion = await openIndex();
    await withDeletion.upsert({ records: records('agent_a', 400, 2), embedder: fingerprint });
    await withDeletion.upsert({ records: kept, embedder: fingerprint });
    await withDeletion.deleteBy({ agentId: 'agent_a' });
    const fresh = await openIndex();
    await fresh.upsert({ records: kept, embedder: fingerprint });
    try {
      for (const query of ['garden invoice', 'marathon puppy', 'violin museum concert', 'recipe']) {
        const [a, b] = await Promise.all([
          withDeletion.search({ agentId: 'agent_b', text: query, vector: null, limit: 10 }),
          fresh.search({ agentId: 'agent_b', text: query, vector: null, limit: 10 }),
        ]);
        expect(a.lexical.map((hit) => hit.record.id), query).toEqual(b.lexical.map((hit) => hit.record.id));
      }
    } finally {
      await withDeletion.close();
      await fresh.close();
    }
  });
});
