import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
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
      provenance: { writer: 'unknown', jobId: null, span: null }, alsoFrom: [], validFrom: null, validTo: null, supersededBy: null, suspicious: false, expiresAt: null,
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

/** Every file under `directory` whose bytes contain `marker`. */
async function filesHolding(directory: string, marker: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(directory, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    if ((await readFile(path)).includes(Buffer.from(marker))) found.push(path);
  }
  return found;
}

describe('lancedbMemoryIndex erasure', () => {
  const marker = 'zqerasemarkerzq';
  const marked = (agentId: string, threadId: string, count: number): MemoryRecord[] =>
    records(agentId, count, 3).map((record, i) => ({
      ...record,
      id: `${record.id}_${threadId}`,
      text: `${record.text} ${marker} ${i}`,
      source: { kind: 'turn', threadId, observationId: `obs_${threadId}`, turnIndex: i },
    }));

  it.each([
    ['a thread', { threadId: 'thread_secret' }],
    ['an observation', { observationId: 'obs_thread_secret' }],
    ['the agent', {}],
  ])('leaves no byte of the records of %s in the directory once deleteBy resolves', async (_name, filter) => {
    const directory = await mkdtemp(join(tmpdir(), 'memory-agents-lancedb-erase-'));
    directories.push(directory);
    const index = lancedbMemoryIndex({ uri: directory, settleAfterIdleMs: null });
    await index.init();
    try {
      // 400 kept rows in the fragment the secret rows are compacted into (3 rows: under a tenth).
      await index.upsert({ records: records('agent_a', 400, 2), embedder: fingerprint });
      await index.upsert({ records: marked('agent_a', 'thread_secret', 3), embedder: fingerprint });
      await index.upsert({ records: records('agent_b', 50, 4), embedder: fingerprint });
      await index.settle();
      expect((await filesHolding(directory, marker)).length).toBeGreaterThan(0);
      await index.deleteBy({ agentId: 'agent_a', ...filter });
      expect(await filesHolding(directory, marker)).toEqual([]);
      // What stayed is still found, by text and through the full-text index.
      const kept = await index.search({ agentId: 'agent_b', text: 'garden', vector: null, limit: 5 });
      expect(kept.lexical.length).toBeGreaterThan(0);
      expect((await index.stats({ agentId: 'agent_b' })).count).toBe(50);
      expect((await index.stats({ agentId: 'agent_a' })).count).toBe('threadId' in filter || 'observationId' in filter ? 400 : 0);
    } finally {
      await index.close();
    }
  });
});

describe('lancedbMemoryIndex keyword rewrite (issue 41)', () => {
  it('leaves no byte of the old keywords in the directory once rewriteKeywords resolves', async () => {
    const marker = 'zqneighbourwordzq';
    const directory = await mkdtemp(join(tmpdir(), 'memory-agents-lancedb-keywords-'));
    directories.push(directory);
    const index = lancedbMemoryIndex({ uri: directory, settleAfterIdleMs: null });
    await index.init();
    try {
      const neighbours = records('agent_a', 3, 3).map((record) => ({ ...record, id: `${record.id}_n`, keywords: `user ${marker} said this` }));
      await index.upsert({ records: records('agent_a', 400, 2), embedder: fingerprint });
      await index.upsert({ records: neighbours, embedder: fingerprint });
      await index.settle();
      expect((await filesHolding(directory, marker)).length).toBeGreaterThan(0);
      expect((await index.search({ agentId: 'agent_a', text: marker, vector: null, limit: 5 })).lexical).toHaveLength(3);
      await index.rewriteKeywords({ agentId: 'agent_a', records: neighbours.map((record) => ({ id: record.id, keywords: 'user said this' })) });
      expect(await filesHolding(directory, marker)).toEqual([]);
      expect((await index.search({ agentId: 'agent_a', text: marker, vector: null, limit: 5 })).lexical).toEqual([]);
      expect((await index.stats({ agentId: 'agent_a' })).count).toBe(403);
      const kept = await index.search({ agentId: 'agent_a', text: 'garden', vector: null, limit: 5 });
      expect(kept.lexical.length).toBeGreaterThan(0);
    } finally {
      await index.close();
    }
  });
});
