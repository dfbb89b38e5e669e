import { describe, expect, it } from 'vitest';
import { createMemoryService } from '../create-memory-service.js';
import { hashedNgramEmbedder } from '../embedding/hashed-ngram-embedder.js';
import { inMemoryMemoryIndex } from '../in-memory/in-memory-memory-index.js';
import { inMemoryStore } from '../in-memory/store/index.js';
import type { Embedder } from '../ports/embedder.js';
import type { MemoryRecord } from '../ports/memory-index.js';
import { silentLogger } from '../service/logger.js';
import { mockEmbedder } from '../testing/mocks/mock-embedder.js';
import { REEMBED_BATCH } from './reembedder.js';

const OLD = hashedNgramEmbedder();

/** `count` records of two agents under the hashed embedder, every fifth one superseded (history). */
async function seededIndex(count: number) {
  const index = inMemoryMemoryIndex();
  const texts = Array.from({ length: count }, (_, i) => `Note ${i}: the parcel for room ${i} arrived.`);
  const { vectors } = await OLD.embed({ texts });
  const records: MemoryRecord[] = texts.map((text, i) => ({
    id: `mem_01JREEMBED${String(i).padStart(16, '0')}`,
    organizationId: 'org_01JREEMBED000000000000001',
    agentId: i % 2 === 0 ? 'agent_01JREEMBED00000000000001' : 'agent_01JREEMBED00000000000002',
    text,
    keywords: '',
    vector: vectors[i]!,
    speaker: null,
    occurredAt: null,
    source: { kind: 'turn', threadId: 'thread_01JREEMBED0000000000001', observationId: 'obs_01JREEMBED00000000000001', turnIndex: i },
    createdAt: '2026-01-01T00:00:00.000Z',
    provenance: { writer: 'test', jobId: null, span: null },
    alsoFrom: [],
    validFrom: null,
    validTo: i % 5 === 0 ? '2026-02-01T00:00:00.000Z' : null,
    supersededBy: null,
    suspicious: false, expiresAt: null,
  }));
  await index.upsert({ records, embedder: { id: OLD.id, dimensions: OLD.dimensions } });
  return { index, texts };
}

/** The new embedder (a scripted stand-in for a model), counting the texts it embeds; `holdAfter` calls wait for the caller's abort. */
function counting(holdAfter = Infinity) {
  const inner = mockEmbedder({ dimensions: 8, id: 'new-embedder:8' });
  const embedded: string[] = [];
  let calls = 0;
  const embedder: Embedder = {
    specificationVersion: 'v1',
    id: inner.id,
    dimensions: inner.dimensions,
    async embed(request) {
      if (++calls > holdAfter) {
        await new Promise((_, reject) => request.signal?.addEventListener('abort', () => reject(new Error('aborted')), { once: true }));
      }
      embedded.push(...request.texts);
      return inner.embed(request);
    },
  };
  return { embedder, embedded, calls: () => calls };
}

async function until(check: () => Promise<boolean> | boolean): Promise<void> {
  while (!(await check())) await new Promise((resolve) => setTimeout(resolve, 5));
}

describe('re-embedding in the service (Reembedder)', () => {
  it('stopped mid-way, the next start continues with what is pending: every record once, at most one batch twice', async () => {
    const total = REEMBED_BATCH * 2 + 88;
    const { index, texts } = await seededIndex(total);
    const store = inMemoryStore();

    const first = counting(2);
    const a = createMemoryService({ store, index, embedder: first.embedder, logger: silentLogger });
    await a.start();
    await until(() => first.calls() > 2);
    expect(await a.reembedding.status()).toMatchObject({ done: REEMBED_BATCH * 2, total, running: true, from: { id: OLD.id }, to: { id: 'new-embedder:8' } });
    expect(await index.embedder()).toEqual({ id: OLD.id, dimensions: OLD.dimensions });
    await a.stop();
    expect(await index.reembedProgress()).toMatchObject({ done: REEMBED_BATCH * 2, total });

    const second = counting();
    const b = createMemoryService({ store, index, embedder: second.embedder, logger: silentLogger });
    await b.start();
    await until(async () => (await b.reembedding.status()) === null);
    expect(await index.embedder()).toEqual({ id: 'new-embedder:8', dimensions: 8 });
    const all = [...first.embedded, ...second.embedded];
    expect(new Set(all)).toEqual(new Set(texts));
    expect(all.length).toBeLessThanOrEqual(total + REEMBED_BATCH);
    // Every record (history too) carries the new embedder's vector.
    const ids = Array.from({ length: total }, (_, i) => `mem_01JREEMBED${String(i).padStart(16, '0')}`);
    const stored = [
      ...(await index.get({ agentId: 'agent_01JREEMBED00000000000001', ids })),
      ...(await index.get({ agentId: 'agent_01JREEMBED00000000000002', ids })),
    ];
    expect(stored).toHaveLength(total);
    const { vectors } = await mockEmbedder({ dimensions: 8, id: 'new-embedder:8' }).embed({ texts: stored.map((record) => record.text) });
    stored.forEach((record, i) => expect(record.vector).toEqual(vectors[i]));
    await b.stop();
  });

  it('run() re-embeds in the foreground without background work, and a start with the old embedder abandons a re-embed', async () => {
    const { index } = await seededIndex(40);
    const store = inMemoryStore();
    const held = counting(0);
    const a = createMemoryService({ store, index, embedder: held.embedder, logger: silentLogger });
    await a.start();
    await until(() => held.calls() > 0);
    await a.stop();
    expect(await index.reembedProgress()).toMatchObject({ done: 0, total: 40 });

    // Back to the old embedder: the re-embed is abandoned, nothing pauses.
    const back = createMemoryService({ store, index, embedder: OLD, logger: silentLogger });
    await back.start();
    expect(await index.reembedProgress()).toBeNull();
    expect(await back.reembedding.status()).toBeNull();
    await back.stop();

    const progress: number[] = [];
    const fresh = counting();
    const c = createMemoryService({ store, index, embedder: fresh.embedder, logger: silentLogger, backgroundWork: false });
    await c.start();
    expect(await c.reembedding.status()).toBeNull();
    const final = await c.reembedding.run({ onProgress: (status) => progress.push(status.done) });
    expect(final).toMatchObject({ done: 40, total: 40, running: false });
    expect(progress).toEqual([0, 40]);
    expect(await index.embedder()).toEqual({ id: 'new-embedder:8', dimensions: 8 });
    expect(await c.reembedding.run()).toBeNull();
    await c.stop();
  });
});
