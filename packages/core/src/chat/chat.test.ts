import { describe, expect, it } from 'vitest';
import type { Caller } from '../auth/caller.js';
import { learningService, turns } from '../__fixtures__/learning-service.js';
import { LanguageModelError, type GenerateRequest, type LanguageModel } from '../ports/language-model.js';
import type { ChatStreamEventOutput } from '../schemas/outputs.js';
import { inMemoryStore } from '../in-memory/store/index.js';
import type { Store } from '../ports/store/index.js';

/**
 * A model that stalls every answer until `releaseAll()`. It honours aborts unless `ignoreAbort`
 * (a provider SDK that does not), and its stream sends one delta before stalling.
 */
function heldModel(options: { ignoreAbort?: boolean } = {}) {
  const waiting: (() => void)[] = [];
  let started = 0;
  const stall = (signal: AbortSignal | undefined) =>
    new Promise<void>((resolve, reject) => {
      started++;
      waiting.push(resolve);
      if (!options.ignoreAbort) signal?.addEventListener('abort', () => reject(Object.assign(new Error('aborted'), { name: 'AbortError' })), { once: true });
    });
  const model: LanguageModel = {
    specificationVersion: 'v1',
    id: 'held-model',
    async generate(request: GenerateRequest) {
      await stall(request.signal);
      return { text: 'The held answer.', citedItems: [] };
    },
    async *stream(request: GenerateRequest) {
      yield 'The held ';
      await stall(request.signal);
      yield 'answer.';
    },
  };
  return {
    model,
    releaseAll: () => waiting.splice(0).forEach((resolve) => resolve()),
    /** Resolves once `n` answers are stalled in the model. */
    async stalled(n: number) {
      for (let i = 0; i < 5_000 && started < n; i++) await new Promise((resolve) => setTimeout(resolve, 1));
      if (started < n) throw new Error(`only ${started} answers reached the model`);
    },
  };
}

const body = (turn: string) => ({ turn_id: turn, message: 'What about item1?' });

async function drain(events: AsyncIterable<ChatStreamEventOutput>): Promise<ChatStreamEventOutput[]> {
  const seen: ChatStreamEventOutput[] = [];
  for await (const event of events) seen.push(event);
  return seen;
}

describe('chat: concurrent answers', () => {
  it('refuses the third answer of one subject (429, Retry-After 5, user) and the fifth of the organization (organization)', async () => {
    const held = heldModel();
    const { service, caller, agentId, threadId, observeSettled, owner } = await learningService({ model: held.model });
    await observeSettled(turns(2));
    const threadOf = async (who: Caller) => (await service.threads.create({ caller: who, agentId, body: {} })).thread_id;
    const running = [service.chat({ caller: owner, agentId, threadId, body: body('a') }), service.chat({ caller: await caller(), agentId, threadId, body: body('b') })];
    await held.stalled(2);
    await expect(service.chat({ caller: await caller(), agentId, threadId, body: body('c') })).rejects.toMatchObject({ code: 'rate_limit_exceeded', status: 429, retryAfter: 5, details: 'user' });
    // Observe-and-respond and observe-and-enrich count as answers too.
    await expect(service.observeAndRespond({ caller: owner, agentId, threadId, body: body('c2') })).rejects.toMatchObject({ code: 'rate_limit_exceeded', details: 'user' });
    await expect(service.observeAndEnrich({ caller: owner, agentId, threadId, body: body('c3') })).rejects.toMatchObject({ code: 'rate_limit_exceeded', details: 'user' });
    const alice = await caller('alice');
    const bob = await caller('bob');
    const aliceThread = await threadOf(alice);
    const bobThread = await threadOf(bob);
    running.push(service.chat({ caller: alice, agentId, threadId: aliceThread, body: body('d') }), service.chat({ caller: bob, agentId, threadId: bobThread, body: body('e') }));
    await held.stalled(4);
    const carol = await caller('carol');
    await expect(service.chat({ caller: carol, agentId, threadId: await threadOf(carol), body: body('f') })).rejects.toMatchObject({ code: 'rate_limit_exceeded', status: 429, retryAfter: 5, details: 'organization' });
    held.releaseAll();
    for (const answer of await Promise.all(running)) expect(answer.message).toBe('The held answer.');
    // Every place came back.
    const again = [service.chat({ caller: owner, agentId, threadId, body: body('g') }), service.chat({ caller: owner, agentId, threadId, body: body('h') })];
    await held.stalled(6);
    held.releaseAll();
    await Promise.all(again);
    await service.stop();
  });

  it('keeps a stream\'s place until the stream ends', async () => {
    const held = heldModel();
    const { service, owner, agentId, threadId } = await learningService({ model: held.model });
    const first = await service.chatStream({ caller: owner, agentId, threadId, body: body('s1') });
    const second = await service.chatStream({ caller: owner, agentId, threadId, body: body('s2') });
    const firstEvents = drain(first);
    const secondEvents = drain(second);
    await held.stalled(2);
    await expect(service.chat({ caller: owner, agentId, threadId, body: body('x') })).rejects.toMatchObject({ code: 'rate_limit_exceeded', details: 'user' });
    held.releaseAll();
    const events = await firstEvents;
    expect(events.map((event) => event.event)).toEqual(['context', 'delta', 'delta', 'done']);
    await secondEvents;
    const after = service.chat({ caller: owner, agentId, threadId, body: body('y') });
    await held.stalled(3);
    held.releaseAll();
    await expect(after).resolves.toMatchObject({ message: 'The held answer.' });
    await service.stop();
  });

  it('gives the place back at once when the caller aborts, even while the model ignores the abort', async () => {
    for (const ignoreAbort of [false, true]) {
      const held = heldModel({ ignoreAbort });
      const { service, owner, agentId, threadId } = await learningService({ model: held.model });
      const streamAbort = new AbortController();
      const chatAbort = new AbortController();
      const stream = await service.chatStream({ caller: owner, agentId, threadId, body: body('s'), abortSignal: streamAbort.signal });
      const streamed = drain(stream).catch(() => []);
      const chatting = service.chat({ caller: owner, agentId, threadId, body: body('c'), abortSignal: chatAbort.signal }).catch((error: unknown) => error);
      await held.stalled(2);
      await expect(service.chat({ caller: owner, agentId, threadId, body: body('refused') })).rejects.toMatchObject({ code: 'rate_limit_exceeded' });
      streamAbort.abort();
      chatAbort.abort();
      await new Promise((resolve) => setTimeout(resolve, 0));
      // Both places are free while the model may still be stalled.
      const next = [service.chat({ caller: owner, agentId, threadId, body: body('n1') }), service.chat({ caller: owner, agentId, threadId, body: body('n2') })];
      await held.stalled(4);
      held.releaseAll();
      for (const answer of await Promise.all(next)) expect(answer.message).toBe('The held answer.');
      await streamed;
      await chatting;
      await service.stop();
    }
  });
});

describe('chat: model failures', () => {
  it('answers 503 answer_model_unavailable when the model fails, records nothing, and frees the place', async () => {
    const failing: LanguageModel = {
      specificationVersion: 'v1',
      id: 'down',
      generate: async () => {
        throw new LanguageModelError('unavailable', 'connection refused');
      },
      // eslint-disable-next-line require-yield
      async *stream() {
        throw new LanguageModelError('unavailable', 'connection refused');
      },
    };
    const { service, owner, agentId, threadId } = await learningService({ model: failing });
    for (let i = 0; i < 3; i++) {
      await expect(service.chat({ caller: owner, agentId, threadId, body: body(`f${i}`) })).rejects.toMatchObject({ code: 'answer_model_unavailable', status: 503 });
    }
    expect((await service.threads.get({ caller: owner, agentId, threadId })).messages).toEqual([]);
    await service.stop();
  });

  it('sends an error event (an error body) when the model fails after the stream started', async () => {
    const breaking: LanguageModel = {
      specificationVersion: 'v1',
      id: 'breaking',
      generate: async () => ({ text: 'unused' }),
      async *stream() {
        yield 'Half an ';
        throw new LanguageModelError('unavailable', 'connection reset');
      },
    };
    const { service, owner, agentId, threadId, observeSettled } = await learningService({ model: breaking });
    await observeSettled(turns(2));
    const events = await drain(await service.chatStream({ caller: owner, agentId, threadId, body: body('broken') }));
    expect(events.map((event) => event.event)).toEqual(['context', 'delta', 'error']);
    expect(events[0]).toMatchObject({ event: 'context', data: { memory_context: expect.stringContaining('item1') } });
    expect(events[2]!.data).toEqual({ error: expect.any(String), code: 'answer_model_unavailable', request_id: owner.requestId });
    // The failed turn is not recorded, and the place is free again.
    expect((await service.threads.get({ caller: owner, agentId, threadId })).messages).toEqual([]);
    await drain(await service.chatStream({ caller: owner, agentId, threadId, body: body('again1') }));
    await drain(await service.chatStream({ caller: owner, agentId, threadId, body: body('again2') }));
    await service.stop();
  });
});

describe('recall', () => {
  it('returns the memory context and citations for a query, and learns, records and charges nothing', async () => {
    const { service, owner, agentId, threadId, observeSettled } = await learningService();
    await observeSettled([{ content: [{ type: 'text' as const, text: 'The staging database lives on host pg-staging-3.' }] }]);
    const before = await service.threads.get({ caller: owner, agentId, threadId });
    const recalled = await service.recall({ caller: owner, agentId, body: { query: 'Where does the staging database live?', max_context_chars: 500 } });
    expect(recalled.agent_id).toBe(agentId);
    expect(recalled.memory_context).toContain('pg-staging-3');
    expect(recalled.memory_context.length).toBeLessThanOrEqual(500);
    expect(recalled.citations.length).toBeGreaterThan(0);
    expect(recalled.stages.map((stage) => stage.name)).toEqual(['memory_context']);
    await service.idle();
    // The query became no memory and no message.
    const again = await service.recall({ caller: owner, agentId, body: { query: 'Where does the staging database live?' } });
    expect(again.memory_context).not.toContain('Where does the staging database live?');
    expect((await service.threads.get({ caller: owner, agentId, threadId })).messages).toEqual(before.messages);
    await expect(service.recall({ caller: owner, agentId, body: { query: '' } })).rejects.toMatchObject({ code: 'invalid_request' });
    await expect(service.recall({ caller: owner, agentId: 'agent_00000000000000000000000000', body: { query: 'x' } })).rejects.toMatchObject({ code: 'agent_not_found' });
    await service.stop();
  });
});

describe('chat: store calls per answer', () => {
  it('reads the cited turns in one store call, once per answer even when streamed, and gives the same citations', async () => {
    const inner = inMemoryStore();
    let turnReads = 0;
    const store: Store = { ...inner, turns: { ...inner.turns, get: (request) => (turnReads++, inner.turns.get(request)) } };
    const { service, owner, agentId, threadId, observeSettled } = await learningService({ store });
    await observeSettled(turns(6));
    await observeSettled(turns(4));
    await service.idle();
    turnReads = 0;
    const whole = await service.chat({ caller: owner, agentId, threadId, body: body('whole') });
    expect(whole.citations.length).toBeGreaterThan(0);
    expect(turnReads).toBe(1);
    turnReads = 0;
    const events = await drain(await service.chatStream({ caller: owner, agentId, threadId, body: body('streamed') }));
    expect(turnReads).toBe(1);
    const context = events.find((event) => event.event === 'context');
    const done = events.find((event) => event.event === 'done');
    expect(context && 'citations' in context.data && context.data.citations.length).toBeGreaterThan(0);
    expect(done && 'citations' in done.data ? done.data.citations : null).toEqual(whole.citations);
    await service.stop();
  });
});
