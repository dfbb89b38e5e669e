import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeMemoryIndexConformance } from '@memory-agents/core/testing';
import * as lancedb from '@lancedb/lancedb';
import { describe, expect, it } from 'vitest';
import { lancedbMemoryIndex, sqlString } from './lancedb-memory-index.js';
import { duplicateKey, memoryRecordDefaults } from '@memory-agents/core/adapter';
import { rowsToArrow, tableSchema, toRow } from './rows.js';

async function temporaryDirectory() {
  const directory = await mkdtemp(join(tmpdir(), 'memory-agents-lancedb-'));
  return { directory, cleanup: () => rm(directory, { recursive: true, force: true }) };
}

describeMemoryIndexConformance({
  name: 'lancedb',
  create: async () => {
    const { directory, cleanup } = await temporaryDirectory();
    return { port: lancedbMemoryIndex({ uri: directory }), cleanup, reopen: async () => lancedbMemoryIndex({ uri: directory }) };
  },
});

// The same suite with the ANN (HNSW_SQ) path and frequent optimize forced on small tables.
describeMemoryIndexConformance({
  name: 'lancedb with an ANN index and frequent optimize',
  create: async () => {
    const { directory, cleanup } = await temporaryDirectory();
    const options = { uri: directory, annThreshold: 1000, optimizeEveryWrites: 2 };
    return { port: lancedbMemoryIndex(options), cleanup, reopen: async () => lancedbMemoryIndex(options) };
  },
});

// The object-store code path (no local directory): LanceDB's in-process `memory://` store, with
// storage options passed through. A second connection sees another store, so no `reopen` here.
let memoryStores = 0;
describeMemoryIndexConformance({
  name: 'lancedb on an object-store URI (memory://)',
  persistent: false,
  create: async () => ({ port: lancedbMemoryIndex({ uri: `memory://conformance-${memoryStores++}`, storageOptions: { allow_http: 'true' } }) }),
});

describe('lancedbMemoryIndex', () => {
  it('quotes filter values so a quote cannot end the string', () => {
    expect(sqlString("agent_'; DROP")).toBe("'agent_''; DROP'");
  });

  it('does no I/O before init', async () => {
    const index = lancedbMemoryIndex({ uri: '/nonexistent/never/created' });
    expect(index.capabilities).toEqual({ approximateVectors: true, persistent: true });
    await index.close();
  });

  it('builds an HNSW index past annThreshold, keeps exact cosine scores and finds rows written after it', async () => {
    const { directory, cleanup } = await temporaryDirectory();
    try {
      const embedder = { id: 'test:8', dimensions: 8 };
      let seed = 3;
      const next = () => ((seed = (seed * 16807) % 2147483647) / 2147483647) * 2 - 1;
      const record = (i: number) => ({
        id: `mem_${String(i).padStart(6, '0')}`,
        organizationId: 'org_1',
        agentId: i % 2 === 0 ? 'agent_a' : 'agent_b',
        text: `memory number ${i}`,
        keywords: '',
        vector: Float32Array.from({ length: 8 }, next),
        speaker: null,
        occurredAt: null,
        source: { kind: 'turn' as const, threadId: 'thread_1', observationId: 'obs_1', turnIndex: i },
        createdAt: '2026-01-01T00:00:00.000Z',
        provenance: { writer: 'unknown', jobId: null, span: null }, alsoFrom: [], validFrom: null, validTo: null, supersededBy: null, suspicious: false, expiresAt: null,
      });
      const first = lancedbMemoryIndex({ uri: directory, annThreshold: 500 });
      await first.init();
      await first.upsert({ records: Array.from({ length: 600 }, (_, i) => record(i)), embedder });
      // The background build may not have started yet (close() drops maintenance not started):
      // settle() waits for it, in the maintenance lane.
      await first.settle();
      await first.close();

      const connection = await lancedb.connect(directory);
      const indices = await (await connection.openTable('memories')).listIndices();
      expect(indices.map((index) => index.indexType)).toContain('IvfHnswSq');
      connection.close();

      const second = lancedbMemoryIndex({ uri: directory, annThreshold: 500 });
      await second.init();
      const late = { ...record(1000), agentId: 'agent_a', text: 'a late arrival', vector: Float32Array.from([1, 0, 0, 0, 0, 0, 0, 0]) };
      await second.upsert({ records: [late], embedder });
      const result = await second.search({ agentId: 'agent_a', text: 'late arrival', vector: Float32Array.from([2, 0, 0, 0, 0, 0, 0, 0]), limit: 5 });
      expect(result.lexical[0]?.record.id).toBe(late.id);
      expect(result.semantic[0]?.record.id).toBe(late.id);
      expect(result.semantic[0]?.score).toBeCloseTo(1, 5);
      for (const hit of result.semantic) expect(hit.record.agentId).toBe('agent_a');
      await second.close();
    } finally {
      await cleanup();
    }
  });

  it('reads hits from the `hit` column of a new table, and from the record columns of a table made before it', async () => {
    const embedder = { id: 'test:4', dimensions: 4 };
    const record = (i: number) => ({
      id: `mem_${String(i).padStart(6, '0')}`,
      organizationId: 'org_1',
      agentId: 'agent_a',
      text: `kayak trip number ${i}`,
      keywords: 'paddle 2026-01-01',
      vector: Float32Array.from([1, i, 0, 0]),
      speaker: i % 2 === 0 ? 'Caroline' : null,
      occurredAt: i % 2 === 0 ? '2026-01-01T00:00:00.000Z' : null,
      source:
        i % 2 === 0
          ? { kind: 'turn' as const, threadId: 'thread_1', observationId: `obs_${i}`, turnIndex: i }
          : { kind: 'document' as const, threadId: 'thread_1', observationId: `obs_${i}`, turnIndex: 0, sourceId: 'src_1', page: i, filename: 'a.pdf' },
      createdAt: '2026-01-01T00:00:00.000Z',
      provenance: { writer: 'unknown', jobId: null, span: null }, alsoFrom: [], validFrom: null, validTo: null, supersededBy: null, suspicious: false, expiresAt: null,
    });
    const records = Array.from({ length: 6 }, (_, i) => record(i));
    for (const version of ['5', '4', '3', '2', '1']) {
      const { directory, cleanup } = await temporaryDirectory();
      try {
        if (version !== '5') {
          // A table as the adapter created it before the `hit` column (1), before the v2 record columns (2), before `duplicate_key` (3), or before `expires_at` (4).
          const connection = await lancedb.connect(directory);
          (await connection.createEmptyTable('memories', tableSchema(embedder, { hit: version !== '1', v2: version === '3' || version === '4', keys: version === '4', expiry: false }))).close();
          connection.close();
        }
        const index = lancedbMemoryIndex({ uri: directory, settleAfterIdleMs: null });
        await index.init();
        await index.upsert({ records, embedder });
        const { lexical, semantic } = await index.search({ agentId: 'agent_a', text: 'kayak paddle', vector: Float32Array.from([1, 2, 0, 0]), limit: 6 });
        expect(lexical).toHaveLength(6);
        expect(semantic[0]!.record.id).toBe(records[2]!.id);
        // Rows written through the opened table carry their duplicate keys (turns only).
        const turns = records.filter((record) => record.source.kind === 'turn');
        expect((await index.findDuplicates!({ agentId: 'agent_a', keys: turns.map((record) => duplicateKey(record)!) })).map((hit) => hit.id).sort()).toEqual(turns.map((record) => record.id).sort());
        for (const hit of [...lexical, ...semantic]) {
          const { vector: _vector, ...expected } = records.find((candidate) => candidate.id === hit.record.id)!;
          expect(hit.record).toEqual(expected);
          expect('vector' in hit.record).toBe(false);
        }
        await index.close();
        const connection = await lancedb.connect(directory);
        const table = await connection.openTable('memories');
        const { fields, metadata } = await table.schema();
        expect(fields.some((field) => field.name === 'hit')).toBe(version !== '1');
        // Opening added the v2 record columns and the duplicate keys to the older tables.
        expect(fields.some((field) => field.name === 'valid_to')).toBe(true);
        expect(fields.some((field) => field.name === 'duplicate_key')).toBe(true);
        expect(fields.some((field) => field.name === 'expires_at')).toBe(true);
        expect(metadata.get('memory_agents.schema_version')).toBe(version);
        table.close();
        connection.close();
      } finally {
        await cleanup();
      }
    }
  });

  it('opens a table written before the memory record v2: old rows read back with the defaults, then filter, list and update', async () => {
    const embedder = { id: 'test:4', dimensions: 4 };
    for (const hit of [true, false]) {
      const { directory, cleanup } = await temporaryDirectory();
      try {
        const old = (i: number, occurredAt: string | null) => ({
          id: `mem_old_${i}`,
          organizationId: 'org_1',
          agentId: 'agent_a',
          text: `canoe trip number ${i}`,
          keywords: '',
          vector: Float32Array.from([1, i, 0, 0]),
          speaker: 'Ana',
          occurredAt,
          source: { kind: 'turn' as const, threadId: `thread_${i}`, observationId: `obs_${i}`, turnIndex: 0 },
          createdAt: `2026-01-0${i + 1}T00:00:00.000Z`,
        });
        const olds = [old(0, '2025-06-01T00:00:00.000Z'), old(1, null)];
        // Rows as the previous adapter wrote them: its columns, and a `hit` JSON without the v2 fields.
        const schema = tableSchema(embedder, { hit, v2: false });
        const rows = olds.map((record) => {
          const row = toRow({ ...record, ...memoryRecordDefaults(record) }) as unknown as Record<string, unknown>;
          const { vector: _vector, ...previousHit } = record;
          return { ...row, hit: JSON.stringify(previousHit) };
        });
        const connection = await lancedb.connect(directory);
        (await connection.createTable('memories', rowsToArrow(rows as never, schema))).close();
        connection.close();

        const index = lancedbMemoryIndex({ uri: directory, settleAfterIdleMs: null });
        await index.init();
        const defaults = olds.map((record) => ({ ...record, provenance: { writer: 'unknown', jobId: null, span: null }, alsoFrom: [], validFrom: record.occurredAt ?? record.createdAt, validTo: null, supersededBy: null, suspicious: false, expiresAt: null }));
        const got = await index.get({ agentId: 'agent_a', ids: olds.map((record) => record.id) });
        for (const expected of defaults) {
          const { vector: _v, ...rest } = got.find((record) => record.id === expected.id)!;
          const { vector: _e, ...expectedRest } = expected;
          expect(rest).toEqual(expectedRest);
        }
        const { lexical } = await index.search({ agentId: 'agent_a', text: 'canoe', vector: null, limit: 5 });
        expect(lexical.map((found) => found.record.id).sort()).toEqual(['mem_old_0', 'mem_old_1']);
        // validFrom defaulted to occurredAt ?? createdAt: before 2025-06-01 neither was valid yet.
        const early = await index.search({ agentId: 'agent_a', text: 'canoe', vector: null, limit: 5, asOf: '2025-01-01T00:00:00.000Z' });
        expect(early.lexical).toEqual([]);
        expect((await index.list({ agentId: 'agent_a', limit: 5 })).records.map((record) => record.id)).toEqual(['mem_old_1', 'mem_old_0']);
        await index.update({ agentId: 'agent_a', patches: [{ id: 'mem_old_0', validTo: '2026-02-01T00:00:00.000Z', supersededBy: 'mem_new' }] });
        expect((await index.list({ agentId: 'agent_a', limit: 5 })).records.map((record) => record.id)).toEqual(['mem_old_1']);
        expect((await index.search({ agentId: 'agent_a', text: 'canoe', vector: null, limit: 5 })).lexical.map((found) => found.record.id)).toEqual(['mem_old_1']);
        // New records go into the evolved table beside the old ones.
        const fresh = { ...defaults[1]!, id: 'mem_new', text: 'canoe club', threadId: undefined, provenance: { writer: 'verbatim-v2', jobId: 'job_1', span: { start: 0, end: 10 } } };
        await index.upsert({ records: [fresh], embedder });
        const [stored] = await index.get({ agentId: 'agent_a', ids: ['mem_new'] });
        expect(stored!.provenance).toEqual({ writer: 'verbatim-v2', jobId: 'job_1', span: { start: 0, end: 10 } });
        await index.close();
      } finally {
        await cleanup();
      }
    }
  });
});
