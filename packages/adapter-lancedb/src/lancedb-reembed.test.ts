import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as lancedb from '@lancedb/lancedb';
import type { MemoryRecord } from '@memory-agents/core/adapter';
import { describe, expect, it } from 'vitest';
import { lancedbMemoryIndex } from './lancedb-memory-index.js';

const OLD = { id: 'old-embedder:4', dimensions: 4 };
const NEW = { id: 'new-embedder:6', dimensions: 6 };

function record(i: number, dimensions = 4): MemoryRecord {
  const vector = new Float32Array(dimensions);
  vector[i % dimensions] = 1;
  return {
    id: `mem_01JLANCEREEMBED${String(i).padStart(10, '0')}`,
    organizationId: 'org_01JLANCEREEMBED000000000001',
    agentId: 'agent_01JLANCEREEMBED00000000001',
    text: `Note ${i} about the garden`,
    keywords: '',
    vector,
    speaker: null,
    occurredAt: null,
    source: { kind: 'turn', threadId: 'thread_01JLANCEREEMBED000000001', observationId: 'obs_01JLANCEREEMBED0000000001', turnIndex: i },
    createdAt: '2026-01-01T00:00:00.000Z',
    provenance: { writer: 'test', jobId: null, span: null },
    alsoFrom: [],
    validFrom: null,
    validTo: null,
    supersededBy: null,
    suspicious: false, expiresAt: null,
  };
}

/** Where the generations live on disk (issue 39): the pointer, the side table, leftovers of a cut-short switch. */
describe('lancedbMemoryIndex re-embedding tables', () => {
  it('after a switch only the pointer and the new generation remain; a leftover generation is dropped when the index opens', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'memory-agents-lancedb-reembed-'));
    try {
      const index = lancedbMemoryIndex({ uri: directory });
      await index.init();
      await index.upsert({ records: Array.from({ length: 5 }, (_, i) => record(i)), embedder: OLD });
      await index.beginReembed({ target: NEW });
      const connection = await lancedb.connect(directory);
      expect((await connection.tableNames()).sort()).toEqual(['memories', 'memories__reembed']);
      const pending = await index.reembedPending({ limit: 10 });
      await index.writeReembedded({ target: NEW, vectors: pending.map(({ id }, i) => ({ id, vector: record(i, 6).vector })) });
      expect(await index.finishReembed({ target: NEW })).toBe(true);
      const names = (await connection.tableNames()).sort();
      expect(names).toHaveLength(2);
      expect(names[0]).toMatch(/^memories__current$/);
      expect(names[1]).toMatch(/^memories__g[0-9a-z]+$/);
      await index.close();

      // A switch cut short before its pointer moved leaves a generation table nobody points at.
      await connection.createTable('memories__gzzzzzz', [{ id: 'x' }]);
      const reopened = lancedbMemoryIndex({ uri: directory });
      await reopened.init();
      expect(await reopened.embedder()).toEqual(NEW);
      expect(await reopened.stats({ agentId: record(0).agentId })).toEqual({ count: 5 });
      expect((await connection.tableNames()).sort()).toEqual(names);
      await reopened.close();
      connection.close();
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });
});
