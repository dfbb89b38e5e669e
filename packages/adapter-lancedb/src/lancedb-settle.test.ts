import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as lancedb from '@lancedb/lancedb';
import type { MemoryRecord } from '@memory-agents/core/adapter';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { lancedbMemoryIndex } from './lancedb-memory-index.js';

const embedder = { id: 'test:8', dimensions: 8 };
const WORDS = ['harbour', 'kayak', 'lantern', 'orchard', 'violin', 'glacier', 'saffron', 'meadow', 'quartz', 'falcon', 'cedar', 'pixel'];

function records(from: number, count: number, agentId = 'agent_a'): MemoryRecord[] {
  let seed = from + 7;
  const next = () => ((seed = (seed * 16807) % 2147483647) / 2147483647) * 2 - 1;
  return Array.from({ length: count }, (_, k) => {
    const i = from + k;
    return {
      id: `mem_${String(i).padStart(6, '0')}`,
      organizationId: 'org_1',
      agentId,
      text: `${WORDS[i % WORDS.length]} ${WORDS[(i * 7 + 3) % WORDS.length]} note ${i}`,
      keywords: '',
      vector: Float32Array.from({ length: 8 }, next),
      speaker: null,
      occurredAt: null,
      source: { kind: 'turn' as const, threadId: 'thread_1', observationId: `obs_${i}`, turnIndex: 0 },
      createdAt: '2026-01-01T00:00:00.000Z',
      provenance: { writer: 'unknown', jobId: null, span: null }, alsoFrom: [], validFrom: null, validTo: null, supersededBy: null, suspicious: false, expiresAt: null,
    };
  });
}

/** What LanceDB itself reports about the table: fragments and rows outside each index. */
async function tableState(directory: string) {
  const connection = await lancedb.connect(directory);
  try {
    const table = await connection.openTable('memories');
    const { fragmentStats } = await table.stats();
    const unindexed: Record<string, number> = {};
    for (const index of await table.listIndices()) unindexed[index.name] = (await table.indexStats(index.name))?.numUnindexedRows ?? -1;
    table.close();
    return { fragments: fragmentStats.numFragments, unindexed };
  } finally {
    connection.close();
  }
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function temporaryDirectory(): Promise<string> {
  const directory = await mkdtemp(join(tmpdir(), 'memory-agents-lancedb-settle-'));
  cleanups.push(() => rm(directory, { recursive: true, force: true }));
  return directory;
}

describe('lancedbMemoryIndex settling', () => {
  it('settle() compacts many small writes and folds every row into the indexes: full text then ranks as a table written at once', async () => {
    const directory = await temporaryDirectory();
    const index = lancedbMemoryIndex({ uri: directory, annThreshold: 200, settleAfterIdleMs: null });
    cleanups.unshift(() => index.close());
    await index.init();
    for (let batch = 0; batch < 30; batch++) await index.upsert({ records: records(batch * 20, 20), embedder });
    await index.upsert({ records: records(10_000, 15, 'agent_b'), embedder });

    const before = await tableState(directory);
    expect(before.fragments).toBeGreaterThan(20);
    expect(Math.max(...Object.values(before.unindexed))).toBeGreaterThan(0);
    // The reference: the same records written at once into a table of their own (one fragment,
    // every row in the full-text index from the start).
    const referenceDirectory = await temporaryDirectory();
    const reference = lancedbMemoryIndex({ uri: referenceDirectory, settleAfterIdleMs: null });
    cleanups.unshift(() => reference.close());
    await reference.upsert({ records: [...records(0, 600), ...records(10_000, 15, 'agent_b')], embedder });
    const queries = ['harbour kayak', 'violin glacier note', 'saffron'];
    const expected = [];
    for (const text of queries) expected.push((await reference.search({ agentId: 'agent_a', text, vector: null, limit: 10 })).lexical.map((hit) => hit.record.id));

    await index.settle();

    const after = await tableState(directory);
    // LanceDB compacts by groups (it may keep a few fragments apart), not always into one.
    expect(after.fragments).toBeLessThanOrEqual(4);
    expect(Object.keys(after.unindexed).sort()).toEqual(['agent_id_idx', 'id_idx', 'terms_idx', 'valid_to_idx', 'vector_idx']);
    expect(Object.values(after.unindexed)).toEqual([0, 0, 0, 0, 0]);
    for (const [i, text] of queries.entries()) {
      const { lexical } = await index.search({ agentId: 'agent_a', text, vector: null, limit: 10 });
      expect(lexical.map((hit) => hit.record.id)).toEqual(expected[i]);
    }
    // A record's own vector still finds it first, with its exact cosine, through the ANN index.
    const target = records(320, 20)[13]!; // mem_000333, as written
    const { semantic } = await index.search({ agentId: 'agent_a', text: '', vector: target.vector, limit: 5 });
    expect(semantic[0]?.record.id).toBe(target.id);
    expect(semantic[0]?.score).toBeCloseTo(1, 5);
    expect(semantic.every((hit) => hit.record.agentId === 'agent_a')).toBe(true);
    expect((await index.stats({ agentId: 'agent_a' })).count).toBe(600);
  });

  it('settles by itself once writes pause for settleAfterIdleMs and enough piled up', async () => {
    const directory = await temporaryDirectory();
    const index = lancedbMemoryIndex({ uri: directory, settleAfterIdleMs: 200 });
    cleanups.unshift(() => index.close());
    await index.init();
    // A few small writes are cheap to scan and not worth a compaction: they stay as they are.
    for (let batch = 0; batch < 3; batch++) await index.upsert({ records: records(batch * 10, 10), embedder });
    await new Promise((resolve) => setTimeout(resolve, 800));
    expect((await tableState(directory)).fragments).toBe(3);
    // More than 16 small fragments are.
    for (let batch = 3; batch < 20; batch++) await index.upsert({ records: records(batch * 10, 10), embedder });
    await vi.waitFor(
      async () => {
        const state = await tableState(directory);
        expect(state.fragments).toBeLessThanOrEqual(4);
        expect(Object.values(state.unindexed).every((rows) => rows === 0)).toBe(true);
      },
      { timeout: 60_000, interval: 200 },
    );
    expect((await index.search({ agentId: 'agent_a', text: 'harbour', vector: null, limit: 100 })).lexical.length).toBeGreaterThan(0);
  });

  it('does not settle while writes keep coming, and a closed index never settles', async () => {
    const directory = await temporaryDirectory();
    const index = lancedbMemoryIndex({ uri: directory, settleAfterIdleMs: 300 });
    await index.init();
    // Writes every ~100 ms for well past the quiet period, enough of them to be worth settling:
    // the table keeps its small fragments while they come.
    for (let batch = 0; batch < 25; batch++) {
      await index.upsert({ records: records(batch * 5, 5), embedder });
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect((await tableState(directory)).fragments).toBe(25);
    await index.close();
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect((await tableState(directory)).fragments).toBe(25);
  });

  it('settles a full-text tie at the cut by id even when the tied rows run far past the first fetch', async () => {
    const directory = await temporaryDirectory();
    const index = lancedbMemoryIndex({ uri: directory, settleAfterIdleMs: null });
    cleanups.unshift(() => index.close());
    await index.init();
    // 300 records with the same words (one BM25 score), written largest id first, so the smallest
    // ids, which the cut must keep, are the ones LanceDB meets last; plus unrelated records.
    const tied = records(0, 300)
      .map((record) => ({ ...record, text: 'identical words about a red kayak' }))
      .reverse();
    for (let start = 0; start < tied.length; start += 50) await index.upsert({ records: tied.slice(start, start + 50), embedder });
    await index.upsert({ records: records(1000, 100).map((record) => ({ ...record, text: `another note about meadows ${record.id}` })), embedder });
    const { lexical } = await index.search({ agentId: 'agent_a', text: 'red kayak', vector: null, limit: 10 });
    expect(lexical.map((hit) => hit.record.id)).toEqual(Array.from({ length: 10 }, (_, i) => `mem_${String(i).padStart(6, '0')}`));
    expect(new Set(lexical.map((hit) => hit.score)).size).toBe(1);
    expect(lexical.every((hit) => hit.record.text === 'identical words about a red kayak' && !('vector' in hit.record))).toBe(true);
  });
});

describe('lancedbMemoryIndex vector search with the HNSW index', () => {
  /** `count` records of `agentId` whose vectors lie around axis `axis` of 8. */
  function around(axis: number, from: number, count: number, agentId: string): MemoryRecord[] {
    return records(from, count, agentId).map((record) => {
      const vector = Float32Array.from(record.vector, (value) => value * 0.3);
      vector[axis] = 3;
      return { ...record, vector };
    });
  }
  const cosine = (a: Float32Array, b: Float32Array) => {
    let dot = 0, na = 0, nb = 0;
    for (let i = 0; i < a.length; i++) (dot += a[i]! * b[i]!), (na += a[i]! ** 2), (nb += b[i]! ** 2);
    return dot / Math.sqrt(na * nb);
  };

  it('keeps the agent filter and the limit whether the agent holds most of the table or little of it', async () => {
    const directory = await temporaryDirectory();
    const index = lancedbMemoryIndex({ uri: directory, annThreshold: 200, settleAfterIdleMs: null });
    cleanups.unshift(() => index.close());
    const a = around(0, 0, 500, 'agent_a'); // 55% of the rows: searched unfiltered, its rows kept
    const b = around(1, 1000, 400, 'agent_b'); // 44%: pre-filtered search
    await index.upsert({ records: [...a, ...b], embedder });
    await index.settle(); // the HNSW index over every row

    const axis0 = Float32Array.from([1, 0, 0, 0, 0, 0, 0, 0]);
    const axis1 = Float32Array.from([0, 1, 0, 0, 0, 0, 0, 0]);
    for (const [agentId, own, query] of [['agent_a', a, axis0], ['agent_b', b, axis1]] as const) {
      const { semantic } = await index.search({ agentId, text: '', vector: query, limit: 50 });
      expect(semantic).toHaveLength(50);
      expect(semantic.every((hit) => hit.record.agentId === agentId)).toBe(true);
      const exact = [...own].sort((x, y) => cosine(query, y.vector) - cosine(query, x.vector)).slice(0, 50).map((record) => record.id);
      const found = new Set(semantic.map((hit) => hit.record.id));
      expect(exact.filter((id) => found.has(id)).length).toBeGreaterThanOrEqual(45);
      // Exact cosine for every hit (HNSW_SQ ranks on quantized vectors; the scores are refined).
      const byId = new Map(own.map((record) => [record.id, record]));
      for (const hit of semantic) expect(hit.score).toBeCloseTo(cosine(query, byId.get(hit.record.id)!.vector), 5);
    }
    // agent_a holds most rows, but the rows nearest this query are agent_b's: the unfiltered search
    // finds too few of agent_a's, and the pre-filtered one still gives a full page of them.
    const { semantic } = await index.search({ agentId: 'agent_a', text: '', vector: axis1, limit: 50 });
    expect(semantic).toHaveLength(50);
    expect(semantic.every((hit) => hit.record.agentId === 'agent_a')).toBe(true);
    const { semantic: few } = await index.search({ agentId: 'agent_a', text: '', vector: axis1, limit: 3 });
    expect(few).toHaveLength(3);
    expect(few.every((hit) => hit.record.agentId === 'agent_a')).toBe(true);
    expect(few.map((hit) => hit.score)).toEqual([...few.map((hit) => hit.score)].sort((x, y) => y - x));
  });
});

describe('lancedbMemoryIndex full text for an agent holding most of the table', () => {
  it("falls back to the filtered query when the best-scoring rows are another agent's", async () => {
    const directory = await temporaryDirectory();
    const index = lancedbMemoryIndex({ uri: directory, settleAfterIdleMs: null });
    cleanups.unshift(() => index.close());
    // agent_a: 60% of the rows, 20 of them about kayaks; agent_b: fewer rows, all about kayaks
    // twice over, so every best-scoring "kayak" row is agent_b's.
    const a = records(0, 600, 'agent_a').map((record, i) => ({ ...record, text: i < 20 ? `a kayak trip number ${i} with friends and family` : `meadow walk ${i}` }));
    const b = records(5000, 400, 'agent_b').map((record, i) => ({ ...record, text: `kayak kayak ${i}` }));
    await index.upsert({ records: [...a, ...b], embedder });
    const { lexical } = await index.search({ agentId: 'agent_a', text: 'kayak', vector: null, limit: 10 });
    expect(lexical).toHaveLength(10);
    expect(lexical.every((hit) => hit.record.agentId === 'agent_a' && hit.record.text.includes('kayak'))).toBe(true);
    const all = await index.search({ agentId: 'agent_a', text: 'kayak', vector: null, limit: 50 });
    expect(all.lexical.map((hit) => hit.record.id).sort()).toEqual(a.slice(0, 20).map((record) => record.id).sort());
    const other = await index.search({ agentId: 'agent_b', text: 'kayak', vector: null, limit: 5 });
    expect(other.lexical.every((hit) => hit.record.agentId === 'agent_b')).toBe(true);
  });
});
