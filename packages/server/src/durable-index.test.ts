import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inMemoryMemoryIndex } from '@memory-agents/core';
import { isUnavailableError, memoryRecordDefaults, type MemoryRecord } from '@memory-agents/core/adapter';
import { describeMemoryIndexConformance } from '@memory-agents/core/testing';
import { durableMemoryIndex } from './durable-index.js';

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'ma-durable-index-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describeMemoryIndexConformance({
  name: 'durableMemoryIndex over the in-memory index (its directory not made yet)',
  persistent: false,
  create: async () => ({ port: durableMemoryIndex(inMemoryMemoryIndex(), join(root, 'never-made')) }),
});

describe('durableMemoryIndex', () => {
  const record: MemoryRecord = {
    id: 'm1',
    organizationId: 'o',
    agentId: 'a',
    text: 'the harbour crane is orange',
    keywords: 'harbour crane orange',
    vector: new Float32Array([1, 0, 0]),
    speaker: null,
    occurredAt: null,
    source: { kind: 'turn', threadId: 't', observationId: 'obs', turnIndex: 0 },
    createdAt: new Date(0).toISOString(),
    ...memoryRecordDefaults({ occurredAt: null, createdAt: new Date(0).toISOString() }),
  };
  const embedder = { id: 'test', dimensions: 3 };

  it('flushes what a write added, and answers a write whose flush fails as unavailable (503), not a defect', async () => {
    const directory = join(root, 'lancedb');
    const inner = inMemoryMemoryIndex();
    let files = 0;
    // Like LanceDB: each write adds a file.
    const writing = { ...inner, upsert: async (request: Parameters<typeof inner.upsert>[0]) => {
      await inner.upsert(request);
      await writeFile(join(directory, `fragment-${files++}.lance`), 'x').catch(() => undefined);
    } };
    await writeFile(join(root, 'not-a-directory'), '');
    const broken = durableMemoryIndex(writing, join(root, 'not-a-directory'));
    await broken.init();
    const error = await broken.upsert({ records: [record], embedder }).catch((e: unknown) => e);
    expect(isUnavailableError(error), String(error)).toBe(true);
    expect((error as Error).message).toMatch(/could not flush its files/);

    const { mkdir } = await import('node:fs/promises');
    await mkdir(directory);
    const index = durableMemoryIndex(writing, directory);
    await index.init();
    await index.upsert({ records: [{ ...record, id: 'm2' }], embedder });
    expect(files).toBe(2);
    expect((await index.get({ agentId: 'a', ids: ['m2'] })).map((found) => found.id)).toEqual(['m2']);
  });
});
