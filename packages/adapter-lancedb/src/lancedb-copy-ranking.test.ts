import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inMemoryMemoryIndex } from '@memory-agents/core';
import type { MemoryIndex, MemoryRecord } from '@memory-agents/core/adapter';
import { afterEach, describe, expect, it } from 'vitest';
import { lancedbMemoryIndex } from './lancedb-memory-index.js';

/**
 * Issue 41: an agent exported and imported into a fresh embedded data dir searched differently
 * from the original (11 of 20 searches kept their hits and order): LanceDB's BM25 counted every
 * row of the table (other agents', deleted ones) and scored rows written after the last index
 * build apart. Full text is now scored over the agent's own records, as the other indexes do.
 */
const embedder = { id: 'test:8', dimensions: 8 };
const WORDS = ['green', 'tea', 'morning', 'harbour', 'kayak', 'lantern', 'orchard', 'violin', 'glacier', 'saffron', 'meadow', 'quartz', 'falcon', 'cedar', 'pixel', 'coffee'];

function records(from: number, count: number, agentId: string): MemoryRecord[] {
  let seed = from + 11;
  const next = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
  return Array.from({ length: count }, (_, k) => {
    const i = from + k;
    // Texts of different lengths and word mixes, so that document frequencies and lengths matter.
    const words = Array.from({ length: 2 + Math.floor(next() * 9) }, () => WORDS[Math.floor(next() * (agentId === 'agent_a' ? WORDS.length : 6))]!);
    return {
      id: `mem_${agentId.slice(-1)}${String(i).padStart(6, '0')}`,
      organizationId: 'org_1',
      agentId,
      text: `${words.join(' ')} note ${i}`,
      keywords: i % 3 === 0 ? 'morning routine' : '',
      vector: Float32Array.from({ length: 8 }, () => next() * 2 - 1),
      speaker: null,
      occurredAt: null,
      source: { kind: 'turn' as const, threadId: 'thread_1', observationId: `obs_${i}`, turnIndex: 0 },
      createdAt: new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString(),
      provenance: { writer: 'unknown', jobId: null, span: null },
      alsoFrom: [],
      validFrom: null,
      validTo: null,
      supersededBy: null,
      suspicious: false,
      expiresAt: null,
    };
  });
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function openIndex(): Promise<MemoryIndex> {
  const directory = await mkdtemp(join(tmpdir(), 'memory-agents-lancedb-copy-'));
  const index = lancedbMemoryIndex({ uri: directory, annThreshold: 100_000, settleAfterIdleMs: null });
  cleanups.unshift(async () => {
    await index.close();
    await rm(directory, { recursive: true, force: true });
  });
  await index.init();
  return index;
}

async function allRecords(index: MemoryIndex, agentId: string): Promise<MemoryRecord[]> {
  const ids: string[] = [];
  let cursor: string | null = null;
  do {
    const page = await index.list({ agentId, limit: 200, cursor, includeHistory: true });
    ids.push(...page.records.map((record) => record.id));
    cursor = page.nextCursor;
  } while (cursor !== null);
  return index.get({ agentId, ids });
}

const QUERIES = ['green tea in the morning', 'harbour kayak', 'violin', 'saffron meadow quartz', 'coffee morning', 'falcon cedar pixel lantern', 'orchard glacier note'];

async function lexical(index: MemoryIndex, text: string) {
  const { lexical: hits } = await index.search({ agentId: 'agent_a', text, vector: null, limit: 10 });
  return hits.map((hit) => ({ id: hit.record.id, score: hit.score }));
}

describe('lancedbMemoryIndex full text: scored over the agent, as a copy of it is', () => {
  it('an agent copied into a fresh index (as an import writes it) ranks and scores every search as the original, and as the in-memory index', async () => {
    const original = await openIndex();
    // Learned in many small writes, with another agent's records in the same table (more of them,
    // on fewer words), some records superseded and a few erased.
    await original.upsert({ records: records(0, 400, 'agent_b'), embedder });
    for (let batch = 0; batch < 24; batch++) await original.upsert({ records: records(batch * 10, 10, 'agent_a'), embedder, newIds: true });
    await original.update({ agentId: 'agent_a', patches: [{ id: 'mem_a000004', validTo: '2026-02-01T00:00:00.000Z', supersededBy: 'mem_a000005' }] });
    await original.deleteBy({ agentId: 'agent_a', ids: ['mem_a000007', 'mem_a000100'] });
    await original.upsert({ records: records(240, 6, 'agent_a'), embedder });

    const kept = await allRecords(original, 'agent_a');
    expect(kept).toHaveLength(244);
    const copy = await openIndex();
    await copy.upsert({ records: kept, embedder, newIds: true });
    const memory = inMemoryMemoryIndex();
    await memory.upsert({ records: kept, embedder, newIds: true });

    for (const text of QUERIES) {
      const [fromOriginal, fromCopy, fromMemory] = [await lexical(original, text), await lexical(copy, text), await lexical(memory, text)];
      expect(fromOriginal.length, text).toBeGreaterThan(0);
      expect(fromCopy.map((hit) => hit.id), text).toEqual(fromOriginal.map((hit) => hit.id));
      expect(fromMemory.map((hit) => hit.id), text).toEqual(fromOriginal.map((hit) => hit.id));
      for (const [i, hit] of fromOriginal.entries()) {
        expect(fromCopy[i]!.score, text).toBeCloseTo(hit.score, 9);
        expect(fromMemory[i]!.score, text).toBeCloseTo(hit.score, 9);
      }
    }
  });

  it('keeps scoring over the agent through appends, rewrites that keep the terms, and rewrites that change them', async () => {
    const index = await openIndex();
    const memory = inMemoryMemoryIndex();
    const write = async (batch: MemoryRecord[], newIds: boolean) => {
      await index.upsert({ records: batch, embedder, newIds });
      await memory.upsert({ records: batch, embedder, newIds });
    };
    const check = async () => {
      for (const text of QUERIES) {
        const [fromIndex, fromMemory] = [await lexical(index, text), await lexical(memory, text)];
        expect(fromIndex.map((hit) => hit.id), text).toEqual(fromMemory.map((hit) => hit.id));
        for (const [i, hit] of fromMemory.entries()) expect(fromIndex[i]!.score, text).toBeCloseTo(hit.score, 9);
      }
    };
    await write(records(0, 300, 'agent_b'), true);
    await write(records(0, 60, 'agent_a'), true);
    await check(); // statistics counted
    await write(records(60, 30, 'agent_a'), true);
    await check(); // brought along by an append
    const superseded = { agentId: 'agent_a', patches: [{ id: 'mem_a000010', validTo: '2026-02-01T00:00:00.000Z', supersededBy: 'mem_a000011' }] };
    await index.update(superseded);
    await memory.update(superseded);
    await check(); // a rewrite keeping the terms
    const rewritten = records(20, 5, 'agent_a').map((record) => ({ ...record, text: `coffee coffee ${record.text}` }));
    await write(rewritten, false);
    await check(); // a rewrite changing them
  });
});
