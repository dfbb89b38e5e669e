import { describe, expect, it } from 'vitest';
import { createMemoryService } from '../create-memory-service.js';
import { hashedNgramEmbedder } from '../embedding/hashed-ngram-embedder.js';
import { inMemoryMemoryIndex } from '../in-memory/in-memory-memory-index.js';
import { inMemoryStore } from '../in-memory/store/index.js';
import { defaultMemoryWriter } from '../memory/default-memory-writer.js';
import type { MemoryIndex } from '../ports/memory-index.js';
import type { MemoryWriteRequest, MemoryWriter, Supersession, TurnOutcome } from '../ports/memory-writer.js';
import { silentLogger } from '../service/logger.js';
import { learningService, turns } from '../__fixtures__/learning-service.js';
import { LEARNING_REASONS } from '../ports/store/index.js';

/** Writes each turn verbatim; turns containing "moved" supersede every similar memory mentioning "lives" (history kept). */
function supersedingWriter(): MemoryWriter & { requests: MemoryWriteRequest[] } {
  const base = defaultMemoryWriter();
  const requests: MemoryWriteRequest[] = [];
  return {
    specificationVersion: 'v1',
    id: 'superseding-writer',
    capabilities: { reconciles: true },
    requests,
    async write(request) {
      requests.push(request);
      const { outcomes } = await base.write({ ...request, searchSimilar: async () => [] });
      const supersedes: Supersession[] = [];
      for (const turn of request.turns) {
        if (!turn.text.includes('moved')) continue;
        for (const record of await request.searchSimilar(turn.text, 10)) if (record.text.includes('lives')) supersedes.push({ old: { id: record.id }, by: { turnIndex: turn.turnIndex, piece: 0 } });
      }
      return supersedes.length > 0 ? { outcomes, supersedes } : { outcomes };
    },
  };
}

const say = (...texts: string[]) => texts.map((text) => ({ content: [{ type: 'text' as const, text }] }));

describe('observation jobs with a reconciling memory writer', () => {
  it('marks the memories a batch supersedes once the batch is committed, keeping them as history', async () => {
    const writer = supersedingWriter();
    const index = inMemoryMemoryIndex();
    const { service, owner, agentId, observeSettled } = await learningService({ writer, index });
    const at = (timestamp: string, text: string) => [{ content: [{ type: 'text' as const, text }], timestamp }];
    expect((await observeSettled(at('2024-01-01T00:00:00.000Z', 'Ana lives in Porto near the river.'))).status).toBe('committed');
    expect((await service.retrieve({ caller: owner, agentId, query: 'Ana Porto river', maxContextChars: 100_000 })).packed.map((item) => item.record.text)).toEqual(['Ana lives in Porto near the river.']);

    expect((await observeSettled(at('2024-03-01T00:00:00.000Z', 'Ana moved to Lisbon near the river.'))).status).toBe('committed');
    const current = (await service.retrieve({ caller: owner, agentId, query: 'Ana Porto Lisbon river', maxContextChars: 100_000 })).packed;
    expect(current[0]!.record.text).toBe('Ana moved to Lisbon near the river.');
    // The old memory is history: not a current item, packed only as what the new one replaced.
    expect(current.slice(1).every((item) => item.replacedBy === 1)).toBe(true);
    const [old] = (await index.list({ agentId, limit: 10, includeHistory: true, textContains: 'Porto' })).records;
    expect(old).toMatchObject({ supersededBy: current[0]!.record.id });
    expect(old!.validTo).toBe('2024-03-01T00:00:00.000Z');
    const then = await service.retrieve({ caller: owner, agentId, query: 'Ana Porto Lisbon river', maxContextChars: 100_000, asOf: '2024-02-01T00:00:00.000Z' });
    expect(then.packed.map((item) => item.record.text)).toEqual(['Ana lives in Porto near the river.']);
    await service.stop();
  });

  it('keeps the superseded memory when the batch cannot be committed', async () => {
    const base = inMemoryMemoryIndex();
    let failUpserts = false;
    const flaky: MemoryIndex = {
      ...base,
      upsert: async (request) => {
        if (failUpserts) throw new Error('disk full');
        return base.upsert(request);
      },
    };
    const { service, owner, agentId, observeSettled } = await learningService({ writer: supersedingWriter(), index: flaky });
    await observeSettled(say('Ana lives in Porto near the river.'));
    failUpserts = true;
    const status = await observeSettled(say('Ana moved to Lisbon near the river.'));
    expect(status.learning?.reason).toBe('memory_commit_shortfall');
    const texts = (await service.retrieve({ caller: owner, agentId, query: 'Ana Porto river', maxContextChars: 100_000 })).packed.map((item) => item.record.text);
    expect(texts).toEqual(['Ana lives in Porto near the river.']);
    await service.stop();
  });

  it("fails the job's later turns earlier_turn_failed after a failed turn, reporting the first reason", async () => {
    const requests: MemoryWriteRequest[] = [];
    const writer: MemoryWriter = {
      specificationVersion: 'v1',
      id: 'down-after-first-batch',
      capabilities: { reconciles: true },
      async write(request) {
        requests.push(request);
        const outcomes = request.turns.map(
          (turn): TurnOutcome =>
            requests.length === 1 && turn.turnIndex === 0
              ? { turnIndex: 0, ok: true, memories: [] }
              : { turnIndex: turn.turnIndex, ok: false, reason: 'model_unavailable', message: 'down' },
        );
        return { outcomes };
      },
    };
    const { service, observeSettled } = await learningService({ writer });
    // Long turns make one ingestion batch each (at most 256,000 characters per batch).
    const long = Array.from({ length: 4 }, (_, i) => ({ content: [{ type: 'text' as const, text: `Turn ${i + 1}. ${'word '.repeat(19_000)}` }] }));
    const status = await observeSettled(long);
    expect(status.status).toBe('failed');
    expect(status.learning).toMatchObject({ not_learned_turns: [{ first: 2, last: 4 }], reason: 'model_unavailable', message: LEARNING_REASONS.model_unavailable.message });
    // Turns 3 and 4 were never handed to the writer.
    expect(requests.map((request) => request.turns.map((turn) => turn.turnIndex))).toEqual([[0, 1]]);
    await service.stop();
  });

  it('keeps learning later batches with a writer that does not reconcile', async () => {
    let calls = 0;
    const base = defaultMemoryWriter();
    const writer: MemoryWriter = {
      specificationVersion: 'v1',
      id: 'flaky-verbatim',
      async write(request) {
        calls += 1;
        if (calls === 1) return { outcomes: request.turns.map((turn): TurnOutcome => ({ turnIndex: turn.turnIndex, ok: false, reason: 'generation_failed', message: 'x' })) };
        return base.write(request);
      },
    };
    const { service, observeSettled } = await learningService({ writer });
    const long = Array.from({ length: 4 }, (_, i) => ({ content: [{ type: 'text' as const, text: `Turn ${i + 1}. ${'word '.repeat(19_000)}` }] }));
    const status = await observeSettled(long);
    expect(status.learning).toMatchObject({ not_learned_turns: [{ first: 1, last: 2 }], reason: 'generation_failed' });
    await service.stop();
  });

  it('fails turns embedder_mismatch without calling the writer when the index was built by another embedder (no re-embedding)', async () => {
    const index = inMemoryMemoryIndex();
    const first = await learningService({ index, embedder: hashedNgramEmbedder() });
    expect((await first.observeSettled(turns(1))).status).toBe('committed');
    await first.service.stop();

    const writer = supersedingWriter();
    const second = await learningService({ index, embedder: hashedNgramEmbedder({ dimensions: 64 }), writer, reembedInBackground: false });
    const status = await second.observeSettled(turns(3));
    expect(status).toMatchObject({ status: 'failed', learning: { not_learned_turns: [{ first: 1, last: 3 }], reason: 'embedder_mismatch' } });
    expect(writer.requests).toHaveLength(0);
    await second.service.stop();
  });

  it('re-embeds an index built by another embedder at start, then learns new turns under the new one (issue 39)', async () => {
    const index = inMemoryMemoryIndex();
    const first = await learningService({ index, embedder: hashedNgramEmbedder() });
    expect((await first.observeSettled(turns(2))).status).toBe('committed');
    await first.service.stop();

    const writer = supersedingWriter();
    const second = await learningService({ index, embedder: hashedNgramEmbedder({ dimensions: 64 }), writer });
    const status = await second.observeSettled(turns(3));
    expect(status).toMatchObject({ status: 'committed' });
    expect(JSON.stringify(status)).not.toContain('embedder_mismatch');
    expect(await index.embedder()).toEqual({ id: 'hashed-ngrams-v1:64', dimensions: 64 });
    expect(await second.service.reembedding.status()).toBeNull();
    await second.service.stop();
  });

  it('aborts a running writer when the service stops and resumes its turns on the next start', async () => {
    const store = inMemoryStore();
    const index = inMemoryMemoryIndex();
    let signalled: AbortSignal | undefined;
    const stalling: MemoryWriter = {
      specificationVersion: 'v1',
      id: 'stalling',
      write: (request) =>
        new Promise((_, reject) => {
          signalled = request.signal;
          request.signal?.addEventListener('abort', () => reject(Object.assign(new Error('aborted'), { name: 'AbortError' })));
        }),
    };
    const first = createMemoryService({ store, index, writer: stalling, logger: silentLogger });
    await first.start();
    const org = await first.admin.createOrganization({ name: 'Acme' });
    const { key } = await first.admin.createKey({ organizationId: org.organizationId });
    const caller = () => first.authenticate({ authorization: `Bearer ${key}`, endUser: undefined, secFetchSite: undefined, requestId: 'req_1' });
    const agent = await first.agents.create({ caller: await caller(), body: { agent_config: { role: 'assistant', objective: 'remember' } } });
    await first.idle();
    const thread = await first.threads.create({ caller: await caller(), agentId: agent.agent_id, body: {} });
    const accepted = await first.observe({ caller: await caller(), agentId: agent.agent_id, threadId: thread.thread_id, body: { observations: turns(2) } });
    while (!signalled) await new Promise((resolve) => setTimeout(resolve, 5));
    await first.stop();
    expect(signalled.aborted).toBe(true);
    const stopped = await first.observationStatus({ caller: await caller(), agentId: agent.agent_id, threadId: thread.thread_id, observationId: accepted.observation_id });
    expect(stopped.learning).toBeNull();
    expect(stopped.status).not.toBe('failed');

    const second = createMemoryService({ store, index, logger: silentLogger });
    await second.start();
    const again = () => second.authenticate({ authorization: `Bearer ${key}`, endUser: undefined, secFetchSite: undefined, requestId: 'req_2' });
    let status = await second.observationStatus({ caller: await again(), agentId: agent.agent_id, threadId: thread.thread_id, observationId: accepted.observation_id });
    while (status.status !== 'committed' && status.status !== 'failed') {
      await second.idle();
      await new Promise((resolve) => setTimeout(resolve, 10));
      status = await second.observationStatus({ caller: await again(), agentId: agent.agent_id, threadId: thread.thread_id, observationId: accepted.observation_id });
    }
    expect(status).toMatchObject({ status: 'committed', learning: null });
    await second.stop();
  });
});
