import { refusal } from '../__fixtures__/refusal.js';
import { describe, expect, it } from 'vitest';
import { learningService } from '../__fixtures__/learning-service.js';
import { inMemoryBlobs } from '../in-memory/in-memory-blobs.js';
import type { BlobStore } from '../ports/blob-store.js';

const say = (text: string) => ({ speaker: 'Ana', timestamp: '2024-03-10T10:00:00Z', content: [{ type: 'text' as const, text }] });

/** A service whose clock moves a second per call of `tick`, whose blob writes of export files can be held. */
async function world() {
  let now = Date.parse('2026-11-28T07:00:00.000Z');
  let gate: Promise<void> | null = null;
  const inner = inMemoryBlobs();
  const keys = new Set<string>();
  const blobs: BlobStore = {
    ...inner,
    put: async (request) => {
      if (gate && request.key.endsWith('.jsonl')) await gate;
      keys.add(request.key);
      return inner.put(request);
    },
    putStream: async (request) => {
      if (gate && request.key.endsWith('.jsonl')) await gate;
      keys.add(request.key);
      return inner.putStream!(request);
    },
  };
  const setup = await learningService({ blobs, clock: { now: () => now } });
  await setup.observeSettled([say('My locker code is plumbrette nine.'), say('The van is parked at the harbour.')]);
  const { service, owner: caller, agentId } = setup;
  const fileOf = async (exportId: string) => {
    const key = [...keys].find((candidate) => candidate.endsWith(`${exportId}.jsonl`));
    return key ? inner.get({ key }) : null;
  };
  return {
    ...setup,
    tick: () => (now += 1_000),
    hold: () => {
      let open!: () => void;
      gate = new Promise<void>((resolve) => (open = resolve));
      return () => {
        gate = null;
        open();
      };
    },
    exportNow: async () => {
      const started = await service.exports.create({ caller, agentId });
      await service.idle();
      return started.export_id;
    },
    get: (exportId: string) => service.exports.get({ caller, agentId, exportId }),
    download: (exportId: string) => service.exports.download({ caller, agentId, exportId }),
    fileOf,
    keysLeft: async () => {
      const left: string[] = [];
      for (const key of keys) if (key.startsWith('exports/') && (await inner.get({ key }))) left.push(key);
      return left;
    },
  };
}

/** A download's file as text, read chunk by chunk as an HTTP bridge reads it. */
async function downloaded(download: Promise<{ chunks: AsyncIterable<Uint8Array> }>): Promise<string> {
  const parts: Uint8Array[] = [];
  for await (const part of (await download).chunks) parts.push(part);
  return Buffer.concat(parts).toString('utf8');
}

describe('erasure reaches exports (issue 41)', () => {
  it('an erasure removes the exports made before it: the file leaves the blob store, status and download are 404 with a sentence', async () => {
    const w = await world();
    const before = await w.exportNow();
    expect(await downloaded(w.download(before))).toContain('plumbrette');
    w.tick();
    await w.service.erasures.erase({ caller: w.owner, agentId: w.agentId, body: { thread_id: w.threadId } });
    await w.service.idle();
    expect(await w.fileOf(before)).toBeNull();
    for (const call of [w.get(before), w.download(before)]) {
      expect(await refusal(call)).toMatchObject({ status: 404, code: 'not_found', message: expect.stringMatching(/not found: exports made before data of this agent was erased or deleted are removed.*start a new export/) });
    }
    // An export made afterwards is whole, and holds nothing erased.
    w.tick();
    const after = await w.exportNow();
    expect((await w.get(after)).status).toBe('ready');
    expect(await downloaded(w.download(after))).not.toContain('plumbrette');
    // An id made after the erasure and never issued stays a plain 404.
    expect((await refusal(w.get('exp_7ZZZZZZZZZZZZZZZZZZZZZZZZZ'))).message).toBe('Export exp_7ZZZZZZZZZZZZZZZZZZZZZZZZZ was not found.');
  });

  it('an export still running during an erasure does not finish with the erased data', async () => {
    const w = await world();
    const release = w.hold();
    const running = (await w.service.exports.create({ caller: w.owner, agentId: w.agentId })).export_id;
    w.tick();
    const erasure = await w.service.erasures.erase({ caller: w.owner, agentId: w.agentId, body: { thread_id: w.threadId } });
    // The erasure completes while the export's file write is held.
    const status = () => w.service.erasures.get({ caller: w.owner, agentId: w.agentId, erasureId: erasure.erasure_id });
    while ((await status()).status !== 'completed') await new Promise((resolve) => setTimeout(resolve, 5));
    release();
    await w.service.idle();
    expect(await w.fileOf(running)).toBeNull();
    expect(await refusal(w.download(running))).toMatchObject({ status: 404, code: 'not_found' });
  });

  it('a thread delete and a memory delete remove the exports made before them too', async () => {
    const w = await world();
    const first = await w.exportNow();
    w.tick();
    const memory = (await w.service.memories.list({ caller: w.owner, agentId: w.agentId, query: { limit: '10' } })).memories[0]!;
    await w.service.memories.delete({ caller: w.owner, agentId: w.agentId, memoryId: memory.memory_id });
    expect(await w.fileOf(first)).toBeNull();
    expect((await refusal(w.get(first))).status).toBe(404);
    w.tick();
    const second = await w.exportNow();
    expect((await w.get(second)).status).toBe('ready');
    w.tick();
    await w.service.threads.delete({ caller: w.owner, agentId: w.agentId, threadId: w.threadId });
    await w.service.idle();
    expect(await w.fileOf(second)).toBeNull();
    expect((await refusal(w.download(second))).status).toBe(404);
  });

  it('an agent delete removes its exports, statuses and marker from the blob store', async () => {
    const w = await world();
    await w.exportNow();
    w.tick();
    await w.service.memories.delete({ caller: w.owner, agentId: w.agentId, memoryId: (await w.service.memories.list({ caller: w.owner, agentId: w.agentId, query: {} })).memories[0]!.memory_id });
    w.tick();
    await w.exportNow();
    expect((await w.keysLeft()).length).toBeGreaterThan(0);
    await w.service.agents.delete({ caller: w.owner, agentId: w.agentId });
    await w.service.idle();
    expect(await w.keysLeft()).toEqual([]);
  });
});
