import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { memoryRecordDefaults } from '@memory-agents/core/adapter';
import { lancedbMemoryIndex } from './lancedb-memory-index.js';

// A process killed (SIGKILL) while LanceDB created or dropped a table leaves a `<name>.lance`
// directory holding data files and no manifest. `tableNames()` lists it and `openTable` refuses it
// for ever; the index must treat it as the table that never was, not fail every init after.
const embedder = { id: 'test:4', dimensions: 4 };
const base = { occurredAt: null, createdAt: '2026-01-01T00:00:00.000Z' };
const record = (id: string, text: string) => ({
  ...memoryRecordDefaults(base),
  ...base,
  id,
  organizationId: 'org_1',
  agentId: 'agent_a',
  text,
  keywords: '',
  vector: Float32Array.from([1, 0, 0, 0]),
  speaker: null,
  source: { kind: 'turn' as const, threadId: 'thread_1', observationId: 'obs_1', turnIndex: 0 },
});

let directory = '';
beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), 'memory-agents-lancedb-uncommitted-'));
});
afterEach(async () => {
  await rm(directory, { recursive: true, force: true });
});

/**
 * What a kill between a table's first files and its first manifest leaves behind (seen after a
 * SIGKILL mid-learning: a transaction file and an empty `_versions`; or a data file alone).
 */
async function uncommitted(name: string): Promise<void> {
  const table = join(directory, `${name}.lance`);
  await mkdir(join(table, 'data'), { recursive: true });
  await writeFile(join(table, 'data', '0-cut-short.lance'), 'half a data file');
  await mkdir(join(table, '_transactions'), { recursive: true });
  await writeFile(join(table, '_transactions', '0-bf00a81b-7309-4638-8ac2-1729e901f5c7.txn'), 'a transaction never committed');
  await mkdir(join(table, '_versions'), { recursive: true });
}

describe('lancedbMemoryIndex over tables a killed process left uncommitted', () => {
  it('opens, writes and finds when the memories table, the re-embed side table and the pointer never committed', async () => {
    await uncommitted('memories');
    await uncommitted('memories__reembed');
    await uncommitted('memories__current');
    const index = lancedbMemoryIndex({ uri: directory });
    await index.init();
    expect(await index.embedder()).toBeNull();
    expect(await index.count!()).toBe(0);
    await index.upsert({ records: [record('mem_1', 'the lighthouse keeper')], embedder });
    await index.close();

    const reopened = lancedbMemoryIndex({ uri: directory });
    await reopened.init();
    expect(await reopened.embedder()).toEqual(embedder);
    const found = await reopened.search({ agentId: 'agent_a', text: 'lighthouse', vector: Float32Array.from([1, 0, 0, 0]), limit: 5 });
    expect(found.lexical.map((hit) => hit.record.id)).toEqual(['mem_1']);
    expect(await reopened.reembedProgress!()).toBeNull();
    await reopened.close();
  });

  it('still refuses a table whose manifest is there but unreadable: that is data, never dropped or recreated', async () => {
    await uncommitted('memories');
    await writeFile(join(directory, 'memories.lance', '_versions', '1.manifest'), 'not a manifest');
    const index = lancedbMemoryIndex({ uri: directory });
    await expect(index.init()).rejects.toMatchObject({ code: 'service_unavailable' });
    await index.close();
  });
});
