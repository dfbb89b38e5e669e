/**
 * Memory an export job takes on the server (issue 41): an agent of `--memories` memories (384-dim
 * vectors, LoCoMo-sized texts) written straight into the in-memory index, exported with vectors
 * into file-system blobs, the process's RSS and external memory sampled every 5 ms while the job
 * runs. Two runs in the same process, alternated: the blob store as shipped (`putStream`: the file
 * written as it is made) and the same store without `putStream` (core collects the file and `put`s
 * it whole, as every export did before).
 *
 *   npm run build && node --expose-gc --import tsx bench/export-memory.ts [--memories 20000] [--rounds 2]
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMemoryService, fileSystemBlobs, inMemoryMemoryIndex, inMemoryStore, silentLogger, type BlobStore } from '@memory-agents/core';
import { argument } from './support/args.js';

const memories = Number(argument('memories', '20000'));
const rounds = Number(argument('rounds', '2'));
const MB = 1024 * 1024;

async function run(streamed: boolean): Promise<{ peakRss: number; peakExternal: number; bytes: number; ms: number }> {
  const directory = await mkdtemp(join(tmpdir(), 'export-memory-'));
  const shipped = fileSystemBlobs({ directory });
  const blobs: BlobStore = streamed ? shipped : { ...shipped, putStream: undefined };
  const index = inMemoryMemoryIndex();
  const service = createMemoryService({ store: inMemoryStore(), index, blobs, logger: silentLogger });
  await service.start();
  const org = await service.admin.createOrganization({ name: 'Bench' });
  const caller = await service.as(org.organizationId);
  const agent = await service.agents.create({ caller, body: { agent_config: { role: 'r', objective: 'o' } } });
  await service.idle();
  const embedder = await index.embedder();
  for (let start = 0; start < memories; start += 1000) {
    const records = Array.from({ length: Math.min(1000, memories - start) }, (_, k) => {
      const i = start + k;
      return {
        id: `mem_${String(i).padStart(26, '0')}`, organizationId: org.organizationId, agentId: agent.agent_id,
        text: `Memory ${i}: we talked about the harbour, the orchard and the violin lessons on Tuesday evenings.`, keywords: 'harbour orchard',
        vector: Float32Array.from({ length: 384 }, (_, d) => Math.sin(i * 7 + d)), speaker: 'ana', occurredAt: null,
        source: { kind: 'turn' as const, threadId: 'thread_x', observationId: `obs_${i}`, turnIndex: 0 }, createdAt: new Date(Date.UTC(2026, 0, 1) + i).toISOString(),
        provenance: { writer: 'default', jobId: null, span: null }, alsoFrom: [], validFrom: null, validTo: null, supersededBy: null, suspicious: false, expiresAt: null,
      };
    });
    await index.upsert({ records, embedder: embedder ?? { id: 'hashed-ngrams-v1', dimensions: 384 } });
  }
  (globalThis as { gc?: () => void }).gc?.();
  const base = process.memoryUsage();
  let peakRss = 0;
  let peakExternal = 0;
  const sampler = setInterval(() => {
    const now = process.memoryUsage();
    peakRss = Math.max(peakRss, now.rss - base.rss);
    peakExternal = Math.max(peakExternal, now.external + now.arrayBuffers - base.external - base.arrayBuffers);
  }, 5);
  const started = performance.now();
  const job = await service.exports.create({ caller, agentId: agent.agent_id });
  await service.idle();
  const ms = performance.now() - started;
  clearInterval(sampler);
  const done = await service.exports.get({ caller, agentId: agent.agent_id, exportId: job.export_id });
  await service.stop();
  await rm(directory, { recursive: true, force: true });
  return { peakRss, peakExternal, bytes: done.bytes ?? 0, ms };
}

for (let round = 0; round < rounds; round++) {
  for (const streamed of round % 2 === 0 ? [true, false] : [false, true]) {
    const result = await run(streamed);
    console.log(`${streamed ? 'streamed ' : 'collected'}  file ${(result.bytes / MB).toFixed(1)} MB  peak RSS +${(result.peakRss / MB).toFixed(0)} MB  peak external +${(result.peakExternal / MB).toFixed(0)} MB  ${result.ms.toFixed(0)} ms`);
  }
}
