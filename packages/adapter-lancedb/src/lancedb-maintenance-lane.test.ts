import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as lancedb from '@lancedb/lancedb';
import type { Table } from '@lancedb/lancedb';
import type { MemoryRecord } from '@memory-agents/core/adapter';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { lancedbMemoryIndex } from './lancedb-memory-index.js';

const embedder = { id: 'test:8', dimensions: 8 };

function records(from: number, count: number): MemoryRecord[] {
  let seed = from + 11;
  const next = () => ((seed = (seed * 16807) % 2147483647) / 2147483647) * 2 - 1;
  return Array.from({ length: count }, (_, k) => {
    const i = from + k;
    return {
      id: `mem_${String(i).padStart(6, '0')}`,
      organizationId: 'org_1',
      agentId: 'agent_a',
      text: `ordinary note number ${i}`,
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

/**
 * Holds LanceDB's real vector index builds at their start until `release()` (the build itself is
 * LanceDB's own, run once released), and counts `optimize()` calls.
 */
async function gateVectorBuilds() {
  // The class of the tables LanceDB opens (not exported by the package).
  const connection = await lancedb.connect('memory://lane-probe');
  const probe = await connection.createTable('probe', [{ x: 1 }], { mode: 'overwrite' });
  const prototype = Object.getPrototypeOf(probe) as Table;
  probe.close();
  connection.close();
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let started!: () => void;
  const buildStarted = new Promise<void>((resolve) => (started = resolve));
  const events: string[] = [];
  const createIndex = prototype.createIndex;
  const optimize = prototype.optimize;
  vi.spyOn(prototype, 'createIndex').mockImplementation(async function (this: Table, column, options) {
    if (column === 'vector') {
      events.push('vector build started');
      started();
      await gate;
    }
    await createIndex.call(this, column, options);
    if (column === 'vector') events.push('vector build finished');
  });
  vi.spyOn(prototype, 'optimize').mockImplementation(async function (this: Table, options) {
    events.push('optimize');
    return optimize.call(this, options);
  });
  return { release, buildStarted, events };
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function temporaryDirectory(): Promise<string> {
  const directory = await mkdtemp(join(tmpdir(), 'memory-agents-lancedb-lane-'));
  cleanups.push(() => rm(directory, { recursive: true, force: true }));
  return directory;
}

describe('lancedbMemoryIndex maintenance lane', () => {
  it('a search and an upsert complete while a vector index build is running; the build then lands', async () => {
    const directory = await temporaryDirectory();
    const { release, buildStarted, events } = await gateVectorBuilds();
    const index = lancedbMemoryIndex({ uri: directory, annThreshold: 300, settleAfterIdleMs: null, indexBuildsInChildProcess: false, onBackgroundError: (error) => events.push(`error ${String(error)}`) });
    cleanups.unshift(() => index.close());
    await index.init();

    await index.upsert({ records: records(0, 320), embedder, newIds: true });
    await buildStarted;

    // The build holds: a write of new rows, a merge over existing ones and searches still finish.
    const late = { ...records(1000, 1)[0]!, text: 'a harbour lantern arrived late', vector: Float32Array.from([1, 0, 0, 0, 0, 0, 0, 0]) };
    await index.upsert({ records: [late], embedder, newIds: true });
    events.push('upsert done');
    await index.upsert({ records: [{ ...records(5, 1)[0]!, text: 'rewritten note five' }], embedder });
    events.push('merge done');
    const found = await index.search({ agentId: 'agent_a', text: 'harbour lantern', vector: Float32Array.from([2, 0, 0, 0, 0, 0, 0, 0]), limit: 3 });
    events.push('search done');
    expect(found.lexical[0]?.record.id).toBe(late.id);
    expect(found.semantic[0]?.record.id).toBe(late.id);
    expect(await index.stats({ agentId: 'agent_a' })).toEqual({ count: 321 });

    release();
    await index.settle();
    expect(events.slice(0, 4)).toEqual(['vector build started', 'upsert done', 'merge done', 'search done']);
    expect(events).toContain('vector build finished');
    expect(events.filter((event) => event.startsWith('error'))).toEqual([]);

    const connection = await lancedb.connect(directory);
    const table = await connection.openTable('memories');
    expect((await table.listIndices()).map((entry) => entry.indexType)).toContain('IvfHnswSq');
    table.close();
    connection.close();
    // The row written during the build is still found after it.
    const after = await index.search({ agentId: 'agent_a', text: 'harbour lantern', vector: Float32Array.from([2, 0, 0, 0, 0, 0, 0, 0]), limit: 3 });
    expect(after.semantic[0]?.record.id).toBe(late.id);
  });

  it('close() waits for the running build and drops maintenance queued behind it', async () => {
    const directory = await temporaryDirectory();
    const { release, buildStarted, events } = await gateVectorBuilds();
    const index = lancedbMemoryIndex({ uri: directory, annThreshold: 300, optimizeEveryWrites: 1, settleAfterIdleMs: null, indexBuildsInChildProcess: false });
    await index.init();
    await index.upsert({ records: records(0, 320), embedder, newIds: true });
    await buildStarted;
    // Queues an optimize behind the running build.
    await index.upsert({ records: records(400, 5), embedder, newIds: true });

    const closing = index.close().then(() => events.push('closed'));
    release();
    await closing;
    expect(events).toEqual(['vector build started', 'vector build finished', 'closed']);
  });
});
