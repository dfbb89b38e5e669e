import { describe, expect, it } from 'vitest';
import { createMemoryService } from '../create-memory-service.js';
import { hashedNgramEmbedder } from '../embedding/hashed-ngram-embedder.js';
import { inMemoryMemoryIndex } from '../in-memory/in-memory-memory-index.js';
import { inMemoryStore } from '../in-memory/store/index.js';
import { defaultMemoryWriter } from '../memory/default-memory-writer.js';
import type { Embedder } from '../ports/embedder.js';
import { LanguageModelError } from '../ports/language-model.js';
import type { MemoryIndex } from '../ports/memory-index.js';
import type { MemoryWriter } from '../ports/memory-writer.js';
import { learningService, turns } from '../__fixtures__/learning-service.js';
import { silentLogger } from '../service/logger.js';
import { turnRanges } from './learning-report.js';
import { LEARNING_REASONS, type LearningReason } from '../ports/store/index.js';

/** The default writer, except that chosen (0-based) turns fail with chosen reasons. */
function failingWriter(failures: Record<number, LearningReason>): MemoryWriter {
  const base = defaultMemoryWriter();
  return {
    specificationVersion: 'v1',
    id: 'failing-writer',
    async write(request) {
      const { outcomes } = await base.write(request);
      return {
        outcomes: outcomes.map((outcome) =>
          failures[outcome.turnIndex] === undefined ? outcome : { turnIndex: outcome.turnIndex, ok: false as const, reason: failures[outcome.turnIndex]!, message: 'failed on purpose' },
        ),
      };
    },
  };
}

/** A writer that throws for every batch. */
function throwingWriter(error: unknown): MemoryWriter {
  return {
    specificationVersion: 'v1',
    id: 'throwing-writer',
    async write() {
      throw error;
    },
  };
}

const learning = (ranges: { first: number; last: number }[], reason: LearningReason) => ({
  status: 'not_learned',
  not_learned_turns: ranges,
  reason,
  message: LEARNING_REASONS[reason].message,
  refunded_credits: null,
  action: 'resend',
});

describe('turnRanges', () => {
  it('turns 0-based indexes into merged 1-based inclusive ranges', () => {
    expect(turnRanges([])).toEqual([]);
    expect(turnRanges([0])).toEqual([{ first: 1, last: 1 }]);
    expect(turnRanges([4, 1, 2, 3, 7, 9, 8, 2])).toEqual([
      { first: 2, last: 5 },
      { first: 8, last: 10 },
    ]);
  });
});

describe('learned records (memory record v2)', () => {
  it('carry provenance (writer id, job id, span), validity from occurredAt and the suspicious flag of the draft', async () => {
    const index = inMemoryMemoryIndex();
    const base = defaultMemoryWriter();
    // The default writer, flagging the second turn's memory as suspicious.
    const writer: MemoryWriter = {
      specificationVersion: 'v1',
      id: 'flagging-writer',
      async write(request) {
        const { outcomes } = await base.write(request);
        return {
          outcomes: outcomes.map((outcome) =>
            outcome.ok && outcome.turnIndex === 1 ? { ...outcome, memories: outcome.memories.map((memory) => ({ ...memory, suspicious: true })) } : outcome,
          ),
        };
      },
    };
    const { service, agentId, observeSettled } = await learningService({ index, writer });
    const status = await observeSettled(turns(2));
    expect(status.status).toBe('committed');
    const { records } = await index.list({ agentId, limit: 10 });
    expect(records).toHaveLength(2);
    const byTurn = new Map(records.map((record) => [record.source.turnIndex, record]));
    for (const [turnIndex, record] of byTurn) {
      expect(record.provenance).toEqual({ writer: 'flagging-writer', jobId: status.observation_id, span: { start: 0, end: record.text.length } });
      expect(record.validFrom).toBe(record.occurredAt ?? record.createdAt);
      expect(record).toMatchObject({ validTo: null, supersededBy: null, alsoFrom: [], suspicious: turnIndex === 1 });
    }
    await service.stop();
  });
});

describe('observation jobs: failure accounting', () => {
  it('fails the job with merged ranges, the first reason, a message and action resend; the other turns are learned', async () => {
    const { service, owner, agentId, threadId, observeSettled } = await learningService({ writer: failingWriter({ 1: 'model_unavailable', 2: 'model_unavailable', 3: 'model_unavailable', 7: 'generation_timeout' }) });
    const status = await observeSettled(turns(10));
    expect(status).toMatchObject({
      status: 'failed',
      turns_total: 10,
      turns_processed: 10,
      queue_depth: 0,
      error: expect.stringContaining('4 of 10 turns'),
      learning: learning(
        [
          { first: 2, last: 4 },
          { first: 8, last: 8 },
        ],
        'model_unavailable',
      ),
    });
    // The learned turns are searchable; the failed ones are not (and never will be).
    const found = await service.retrieve({ caller: owner, agentId, query: 'item1 item5 item6 item2 item8', maxContextChars: 100_000 });
    const texts = found.packed.map((item) => item.record.text);
    expect(texts).toEqual(expect.arrayContaining(['This is turn 1 about item1.', 'This is turn 5 about item5.']));
    expect(texts.some((text) => text.includes('item2.') || text.includes('item8.'))).toBe(false);
    // A later job of the agent runs normally.
    expect((await observeSettled(turns(1, 'later'))).status).toBe('committed');
    await service.stop();
    void threadId;
  });

  it('maps a writer that throws to the reason of its error kind for the whole batch', async () => {
    for (const [error, reason] of [
      [new LanguageModelError('unavailable', 'down'), 'model_unavailable'],
      [new LanguageModelError('timeout', 'slow'), 'generation_timeout'],
      [new LanguageModelError('unparseable', 'garbage'), 'generation_unparseable'],
      [new LanguageModelError('failed', 'no'), 'generation_failed'],
      [new Error('boom'), 'generation_failed'],
    ] as const) {
      const { service, observeSettled } = await learningService({ writer: throwingWriter(error) });
      const status = await observeSettled(turns(3));
      expect(status.status).toBe('failed');
      expect(status.learning).toEqual(learning([{ first: 1, last: 3 }], reason));
      await service.stop();
    }
  });

  it('reports memory_commit_shortfall after three failed index commits, and keeps the agent usable', async () => {
    const index = inMemoryMemoryIndex();
    let failing = true;
    let attempts = 0;
    const flaky: MemoryIndex = {
      ...index,
      init: () => index.init(),
      close: () => index.close(),
      search: (request) => index.search(request),
      get: (request) => index.get(request),
      deleteBy: (request) => index.deleteBy(request),
      copyAgent: (request) => index.copyAgent(request),
      stats: (request) => index.stats(request),
      embedder: () => index.embedder(),
      async upsert(request) {
        if (failing) {
          attempts++;
          throw new Error('disk full');
        }
        return index.upsert(request);
      },
    };
    const { service, observeSettled } = await learningService({ index: flaky });
    const status = await observeSettled(turns(4));
    expect(attempts).toBe(3);
    expect(status).toMatchObject({ status: 'failed', learning: learning([{ first: 1, last: 4 }], 'memory_commit_shortfall') });
    failing = false;
    expect((await observeSettled(turns(2))).status).toBe('committed');
    await service.stop();
  });

  it('reports embedder_mismatch for every turn when the index was built by another embedder', async () => {
    const first = hashedNgramEmbedder();
    const other = hashedNgramEmbedder({ dimensions: 64 });
    let current: Embedder = first;
    const switchable: Embedder = {
      specificationVersion: 'v1',
      get id() {
        return current.id;
      },
      get dimensions() {
        return current.dimensions;
      },
      embed: (request) => current.embed(request),
    };
    expect(other.id).not.toBe(first.id);
    const { service, observeSettled } = await learningService({ embedder: switchable });
    expect((await observeSettled(turns(2))).status).toBe('committed');
    current = other;
    // Long turns: several batches; the first fails on the index and the rest are not tried.
    const long = Array.from({ length: 6 }, (_, i) => ({ content: [{ type: 'text' as const, text: `Turn ${i + 1}. ${'word '.repeat(19_000)}` }] }));
    const status = await observeSettled(long);
    expect(status).toMatchObject({ status: 'failed', turns_total: 6, learning: learning([{ first: 1, last: 6 }], 'embedder_mismatch') });
    await service.stop();
  });
});

describe('observation jobs: learning record and chat learning', () => {
  it('lists not-learned records newest first with paging, and validates limit and cursor', async () => {
    const { service, owner, agentId, threadId, observeSettled } = await learningService({ writer: failingWriter({ 0: 'generation_failed' }) });
    const jobs = [];
    for (let i = 0; i < 3; i++) jobs.push((await observeSettled(turns(2, `job${i}`))).observation_id);
    const firstPage = await service.threads.learning({ caller: owner, agentId, threadId, query: { limit: '2' } });
    expect(firstPage).toMatchObject({ agent_id: agentId, thread_id: threadId });
    expect(firstPage.entries.map((entry) => entry.observation_id)).toEqual([jobs[2], jobs[1]]);
    expect(firstPage.entries[0]).toEqual({
      observation_id: jobs[2],
      not_learned_turns: [{ first: 1, last: 1 }],
      reason: 'generation_failed',
      message: LEARNING_REASONS.generation_failed.message,
      refunded_credits: null,
      action: 'resend',
      created_at: expect.any(String),
    });
    expect(firstPage.next_cursor).toEqual(expect.any(String));
    const secondPage = await service.threads.learning({ caller: owner, agentId, threadId, query: { limit: '2', cursor: firstPage.next_cursor! } });
    expect(secondPage.entries.map((entry) => entry.observation_id)).toEqual([jobs[0]]);
    expect(secondPage.next_cursor).toBeNull();
    expect((await service.threads.learning({ caller: owner, agentId, threadId, query: {} })).entries).toHaveLength(3);
    for (const query of [{ limit: '0' }, { limit: '101' }, { limit: 'ten' }, { cursor: 'abc' }, { cursor: '0' }, { extra: '1' }]) {
      await expect(service.threads.learning({ caller: owner, agentId, threadId, query })).rejects.toMatchObject({ code: 'invalid_request', status: 400 });
    }
    expect((await service.threads.learning({ caller: owner, agentId, threadId, query: { limit: '100' } })).entries).toHaveLength(3);
    // Another thread has its own (empty) record.
    const other = await service.threads.create({ caller: owner, agentId, body: {} });
    expect((await service.threads.learning({ caller: owner, agentId, threadId: other.thread_id, query: {} })).entries).toEqual([]);
    await service.stop();
  });

  it('reports each failed job once in chat learning: the first chat in the thread after it, then never again', async () => {
    const { service, caller, owner, agentId, threadId, observeSettled } = await learningService({ writer: failingWriter({ 1: 'generation_timeout' }) });
    const sender = await caller();
    const failed = await observeSettled(turns(3), { caller: sender });
    expect(failed.status).toBe('failed');
    // A chat in another thread does not take this thread's report.
    const elsewhere = await service.threads.create({ caller: owner, agentId, body: {} });
    expect((await service.chat({ caller: await caller(), agentId, threadId: elsewhere.thread_id, body: { turn_id: 'a', message: 'item1?' } })).learning).toEqual([]);
    const first = await service.chat({ caller: await caller(), agentId, threadId, body: { turn_id: 'b', message: 'item1?' } });
    expect(first.learning).toEqual([
      { request_id: sender.requestId, role: 'user', status: 'not_learned', reason: 'generation_timeout', message: LEARNING_REASONS.generation_timeout.message, refunded_credits: '0', action: 'resend' },
    ]);
    expect((await service.chat({ caller: await caller(), agentId, threadId, body: { turn_id: 'c', message: 'item1?' } })).learning).toEqual([]);
    // Two new failures are both reported by the next answering call (here a stream), once.
    await observeSettled(turns(2, 'again'));
    await observeSettled(turns(2, 'more'));
    const events = [];
    for await (const event of await service.chatStream({ caller: await caller(), agentId, threadId, body: { turn_id: 'd', message: 'item1?' } })) events.push(event);
    const done = events.at(-1)!;
    expect(done.event).toBe('done');
    expect(done.event === 'done' && done.data.learning.map((item) => item.reason)).toEqual(['generation_timeout', 'generation_timeout']);
    expect((await service.chat({ caller: await caller(), agentId, threadId, body: { turn_id: 'e', message: 'item1?' } })).learning).toEqual([]);
    // The full record still lists all three.
    expect((await service.threads.learning({ caller: owner, agentId, threadId, query: {} })).entries).toHaveLength(3);
    await service.stop();
  });
});

describe('observation jobs: the ingestion slot and readiness', () => {
  it('admits exactly one of many concurrent observes to an idle agent; the rest get 429 with Retry-After 1', async () => {
    const { service, caller, agentId, threadId } = await learningService();
    const results = await Promise.allSettled(Array.from({ length: 6 }, async () => service.observe({ caller: await caller(), agentId, threadId, body: { observations: turns(2) } })));
    expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(1);
    for (const result of results.filter((result) => result.status === 'rejected')) {
      expect((result as PromiseRejectedResult).reason).toMatchObject({ code: 'rate_limit_exceeded', status: 429, retryAfter: 1, details: 'capacity' });
    }
    await service.idle();
    await service.stop();
  });

  it('answers 409 agent_not_ready to observe and chat while the agent initializes', async () => {
    // Restoring memory stalls until released, so the agent stays initializing meanwhile.
    const index = inMemoryMemoryIndex();
    let release: () => void = () => undefined;
    const stalled = new Promise<void>((resolve) => (release = resolve));
    const slow: MemoryIndex = Object.assign(Object.create(null), index, {
      init: () => index.init(),
      close: () => index.close(),
      deleteBy: (request: Parameters<MemoryIndex['deleteBy']>[0]) => index.deleteBy(request),
      copyAgent: async (request: Parameters<MemoryIndex['copyAgent']>[0]) => {
        await stalled;
        return index.copyAgent(request);
      },
    });
    const { service, owner, agentId: source } = await learningService({ index: slow });
    const agent = await service.agents.create({ caller: owner, body: { agent_config: { role: 'r', objective: 'o' }, restore_from: source } });
    const thread = 'thread_01ARZ3NDEKTSV4RRFFQ69G5FAV';
    await expect(service.observe({ caller: owner, agentId: agent.agent_id, threadId: thread, body: { observations: turns(1) } })).rejects.toMatchObject({ code: 'agent_not_ready', status: 409 });
    await expect(service.chat({ caller: owner, agentId: agent.agent_id, threadId: thread, body: { turn_id: 't', message: 'hi' } })).rejects.toMatchObject({ code: 'agent_not_ready', status: 409 });
    // Validation comes first: a malformed body is 422 even then.
    await expect(service.observe({ caller: owner, agentId: agent.agent_id, threadId: thread, body: { observations: [] } })).rejects.toMatchObject({ code: 'invalid_request', status: 422 });
    expect((await service.agents.get({ caller: owner, agentId: agent.agent_id })).status).toBe('initializing');
    release();
    await service.idle();
    await expect(service.observe({ caller: owner, agentId: agent.agent_id, threadId: thread, body: { observations: turns(1) } })).rejects.toMatchObject({ code: 'thread_not_found', status: 404 });
    await service.stop();
  });

  it('resumes a job left processing by a dead worker of a non-shared store at once, with resumed_at set', async () => {
    const store = inMemoryStore();
    const index = inMemoryMemoryIndex();
    const first = await learningService({ store, index });
    const accepted = await first.service.observe({ caller: first.owner, agentId: first.agentId, threadId: first.threadId, body: { observations: turns(3) } });
    await first.service.idle();
    // Simulate a crash mid-job: the job back to processing with its turns unread and the lease
    // held by a holder that no longer exists.
    await store.jobs.update({ jobId: accepted.observation_id, patch: { status: 'processing' } });
    await store.turns.setStates({ jobId: accepted.observation_id, turnIndexes: [1, 2], state: 'read' });
    await store.leases.acquire({ name: `ingest:${first.agentId}`, holder: 'worker_dead', ttlMs: 3_600_000, now: Date.now() });
    const { createMemoryService } = await import('../create-memory-service.js');
    const { silentLogger } = await import('../service/logger.js');
    const restarted = createMemoryService({ store, index, logger: silentLogger });
    await restarted.start();
    await restarted.idle();
    const status = await restarted.observationStatus({ caller: first.owner, agentId: first.agentId, threadId: first.threadId, observationId: accepted.observation_id });
    expect(status).toMatchObject({ status: 'committed', turns_total: 3, turns_processed: 3, learning: null });
    expect(status.resumed_at).not.toBeNull();
    expect((await index.stats({ agentId: first.agentId })).count).toBe(3);
    await restarted.stop();
  });
  it('a resumed job learns the turns its dead worker never committed, and keeps the ones it did', async () => {
    const store = inMemoryStore();
    const index = inMemoryMemoryIndex();
    const first = await learningService({ store, index });
    const accepted = await first.service.observe({ caller: first.owner, agentId: first.agentId, threadId: first.threadId, body: { observations: turns(4) } });
    await first.service.idle();
    const jobId = accepted.observation_id;
    const learned = (await index.get({ agentId: first.agentId, ids: [0, 1, 2, 3].map((turn) => `mem_${jobId.slice(4)}_${turn}_0`) })).length;
    expect(learned).toBe(4);
    // Simulate a crash after turns 0 and 1 committed: turns 2 and 3 never reached the index.
    await store.jobs.update({ jobId, patch: { status: 'processing' } });
    await store.turns.setStates({ jobId, turnIndexes: [2, 3], state: 'pending' });
    await index.deleteBy({ agentId: first.agentId, ids: [2, 3].map((turn) => `mem_${jobId.slice(4)}_${turn}_0`) });
    expect((await index.stats({ agentId: first.agentId })).count).toBe(2);
    await store.leases.acquire({ name: `ingest:${first.agentId}`, holder: 'worker_dead', ttlMs: 3_600_000, now: Date.now() });
    const { createMemoryService } = await import('../create-memory-service.js');
    const { silentLogger } = await import('../service/logger.js');
    const restarted = createMemoryService({ store, index, logger: silentLogger });
    await restarted.start();
    await restarted.idle();
    const status = await restarted.observationStatus({ caller: first.owner, agentId: first.agentId, threadId: first.threadId, observationId: jobId });
    expect(status).toMatchObject({ status: 'committed', turns_total: 4, turns_processed: 4, learning: null });
    expect(status.resumed_at).not.toBeNull();
    expect(await store.turns.counts({ jobId })).toEqual({ pending: 0, read: 0, committed: 4, failed: 0 });
    expect((await index.stats({ agentId: first.agentId })).count).toBe(4);
    await restarted.stop();
  });
});

describe('observation jobs: deletion while learning', () => {
  it('leaves no memory of a thread deleted while one of its batches was being committed', async () => {
    const index = inMemoryMemoryIndex();
    let unblock: () => void = () => undefined;
    let blocked: () => void = () => undefined;
    const upsertStarted = new Promise<void>((resolve) => (blocked = resolve));
    const gate = new Promise<void>((resolve) => (unblock = resolve));
    let gated = false;
    const slow: MemoryIndex = Object.assign(Object.create(null), index, {
      init: () => index.init(),
      close: () => index.close(),
      upsert: async (request: Parameters<MemoryIndex['upsert']>[0]) => {
        if (gated) {
          blocked();
          await gate;
        }
        return index.upsert(request);
      },
      deleteBy: (request: Parameters<MemoryIndex['deleteBy']>[0]) => index.deleteBy(request),
      stats: (request: Parameters<MemoryIndex['stats']>[0]) => index.stats(request),
    });
    const { service, owner, agentId, observeSettled } = await learningService({ index: slow });
    const keep = await service.threads.create({ caller: owner, agentId, body: {} });
    expect((await observeSettled(turns(2, 'kept'), { threadId: keep.thread_id })).status).toBe('committed');
    const doomed = await service.threads.create({ caller: owner, agentId, body: {} });
    gated = true;
    await service.observe({ caller: owner, agentId, threadId: doomed.thread_id, body: { observations: turns(5, 'doomed') } });
    await upsertStarted;
    await service.threads.delete({ caller: owner, agentId, threadId: doomed.thread_id });
    await new Promise((resolve) => setTimeout(resolve, 0));
    unblock();
    await service.idle();
    // Only the kept thread's two memories remain.
    expect((await index.stats({ agentId })).count).toBe(2);
    const found = await service.retrieve({ caller: owner, agentId, query: 'doomed item1 item2', maxContextChars: 100_000 });
    expect(found.packed.map((item) => item.record.text).filter((text) => text.includes('doomed'))).toEqual([]);
    await service.stop();
  });

  it('leaves no memory of an agent deleted while it was learning', async () => {
    const index = inMemoryMemoryIndex();
    const { service, owner, agentId, threadId } = await learningService({ index });
    const long = Array.from({ length: 20 }, (_, i) => ({ content: [{ type: 'text' as const, text: `Turn ${i + 1}. ${'word '.repeat(19_000)}` }] }));
    await service.observe({ caller: owner, agentId, threadId, body: { observations: long } });
    await service.agents.delete({ caller: owner, agentId });
    await service.idle();
    expect((await index.stats({ agentId })).count).toBe(0);
    await expect(service.agents.get({ caller: owner, agentId })).rejects.toMatchObject({ code: 'agent_not_found' });
    await service.stop();
  });
});

describe('thread deletion resumed at start', () => {
  it('finishes a thread delete that failed (the index was down) at the next start: its memories and the thread go', async () => {
    const store = inMemoryStore();
    const index = inMemoryMemoryIndex();
    let indexDown = false;
    const flaky: MemoryIndex = Object.assign(Object.create(null), index, {
      init: () => index.init(),
      close: () => index.close(),
      upsert: (request: Parameters<MemoryIndex['upsert']>[0]) => index.upsert(request),
      stats: (request: Parameters<MemoryIndex['stats']>[0]) => index.stats(request),
      deleteBy: async (request: Parameters<MemoryIndex['deleteBy']>[0]) => {
        if (indexDown) throw new Error('memory index unreachable');
        return index.deleteBy(request);
      },
    });
    const { service, owner, agentId, threadId, observeSettled } = await learningService({ store, index: flaky });
    const kept = await service.threads.create({ caller: owner, agentId, body: {} });
    expect((await observeSettled(turns(2, 'kept'), { threadId: kept.thread_id })).status).toBe('committed');
    expect((await observeSettled(turns(3, 'forgotten'))).status).toBe('committed');
    expect((await index.stats({ agentId })).count).toBe(5);

    indexDown = true;
    expect(await service.threads.delete({ caller: owner, agentId, threadId })).toMatchObject({ status: 'deleting' });
    await service.idle();
    // The background delete failed: the memories are still there, the thread still `deleting`.
    expect((await index.stats({ agentId })).count).toBe(5);
    expect((await store.threads.get({ agentId, threadId }))?.status).toBe('deleting');
    await service.stop();

    indexDown = false;
    const restarted = createMemoryService({ store, index: flaky, logger: silentLogger });
    await restarted.start();
    await restarted.idle();
    expect(await store.threads.get({ agentId, threadId })).toBeNull();
    expect((await index.stats({ agentId })).count).toBe(2);
    const found = await restarted.retrieve({ caller: owner, agentId, query: 'forgotten item1 item2 item3', maxContextChars: 100_000 });
    expect(found.packed.map((item) => item.record.text).filter((text) => text.includes('forgotten'))).toEqual([]);
    expect((await store.threads.get({ agentId, threadId: kept.thread_id }))?.status).toBe('ready');
    await restarted.stop();
  });
});
