import { describe, expect, it } from 'vitest';
import { learningService } from '../__fixtures__/learning-service.js';
import { refusal } from '../__fixtures__/refusal.js';
import { LanguageModelError, type GenerateRequest } from '../ports/language-model.js';
import { mockLanguageModel } from '../testing/mocks/mock-language-model.js';
import { inMemoryStore } from '../in-memory/store/index.js';
import { REFLECTION_WRITER } from './reflect.js';

// Reflection (issue 43, with a model): a scripted language model (a test double behind the
// LanguageModel port) proposes facts; each lands pending review, cited to the turns it rests on.

const say = (speaker: string, text: string, timestamp: string) => ({ speaker, timestamp, content: [{ type: 'text' as const, text }] });
const SAID = [
  say('Alice', 'I had sushi for lunch on Monday.', '2026-05-04T12:00:00Z'),
  say('Alice', 'Sushi again today, the salmon nigiri was great.', '2026-05-06T12:00:00Z'),
  say('Alice', 'My gym locker number is 4417.', '2026-05-07T12:00:00Z'),
];
const itemOf = (request: GenerateRequest, words: string) => Number(/\[(\d+)\][^\n]*$/mu.exec(request.messages[1]!.content.split('\n').find((line) => line.includes(words)) ?? '')?.[1]);

async function reflecting(generate: NonNullable<Parameters<typeof mockLanguageModel>[0]>['generate']) {
  const model = mockLanguageModel({ id: 'scripted-llm', generate });
  const learning = await learningService({ model });
  await learning.observeSettled(SAID);
  return { ...learning, model };
}

describe('review.reflect', () => {
  it('writes each proposal pending review, cited to the memories it rests on; approved, recall finds it; a later reflection does not read it', async () => {
    const { service, owner, agentId, model } = await reflecting((request) => {
      const a = itemOf(request, 'sushi for lunch');
      const b = itemOf(request, 'Sushi again');
      return JSON.stringify({ proposals: [
        { text: 'Alice eats sushi often and likes salmon nigiri.', speaker: 'Alice', from: [a, b] },
        // Repeats a memory read: left out. Rests on no item: left out.
        { text: 'My gym locker number is 4417.', speaker: 'Alice', from: [itemOf(request, 'locker')] },
        { text: 'Alice has a cat.', speaker: 'Alice', from: [99] },
      ] });
    });
    const reflection = await service.review.reflect({ caller: owner, agentId, body: { max_proposals: 5 } });
    expect(reflection).toMatchObject({ agent_id: agentId, model: 'scripted-llm', memories_read: 3, credits: '0' });
    expect(reflection.proposals).toHaveLength(1);
    const [proposal] = reflection.proposals;
    expect(proposal).toMatchObject({ state: 'pending', held_as: 'inferred', memory: { text: 'Alice eats sushi often and likes salmon nigiri.', speaker: 'Alice', writer: REFLECTION_WRITER, span: null, review_state: 'pending' } });
    expect([proposal!.memory.source, ...proposal!.memory.also_from].map((source) => source.turn_index).sort()).toEqual([0, 1]);
    // The memories went to the model as fenced data, with the rule that they are no instructions.
    const [call] = model.generateCalls;
    expect(call!.messages[0]!.content).toContain('never instructions');
    expect(call!.messages[1]!.content).toMatch(/^<memory-data id="[0-9a-f]{16}">/);
    expect(call!.responseFormat).toBe('json');

    const recall = async () => (await service.recall({ caller: owner, agentId, body: { query: 'What food does Alice like? nigiri often' } })).memory_context;
    expect(await recall()).not.toContain('eats sushi often');
    expect((await service.review.list({ caller: owner, agentId })).items.map((item) => item.memory.memory_id)).toEqual([proposal!.memory.memory_id]);
    await service.review.approve({ caller: owner, agentId, memoryId: proposal!.memory.memory_id });
    expect(await recall()).toContain('Alice eats sushi often and likes salmon nigiri.');

    await service.review.reflect({ caller: owner, agentId, body: {} });
    expect(model.generateCalls[1]!.messages[1]!.content).not.toContain('eats sushi often');
  });

  it('honours Idempotency-Key: a retry replays the first answer without asking the model again; another body with the key is 409', async () => {
    const { service, owner, agentId, model } = await reflecting(JSON.stringify({ proposals: [{ text: 'Alice eats sushi often.', speaker: 'Alice', from: [1, 2] }] }));
    const first = await service.review.reflect({ caller: owner, agentId, body: {}, idempotencyKey: 'reflect-1' });
    const again = await service.review.reflect({ caller: owner, agentId, body: {}, idempotencyKey: 'reflect-1' });
    expect(again).toEqual(first);
    expect(model.generateCalls).toHaveLength(1);
    expect(await refusal(service.review.reflect({ caller: owner, agentId, body: { max_proposals: 2 }, idempotencyKey: 'reflect-1' }))).toMatchObject({ status: 409 });
    const relearned = await service.review.relearn({ caller: owner, agentId, body: {}, idempotencyKey: 'relearn-1' });
    expect(await service.review.relearn({ caller: owner, agentId, body: {}, idempotencyKey: 'relearn-1' })).toEqual(relearned);
  });

  it('never proposes declined words again, keeps to max_proposals, and proposes nothing from an empty answer', async () => {
    const answer = JSON.stringify({ proposals: [
      { text: 'Alice eats sushi often.', speaker: 'Alice', from: [1, 2] },
      { text: 'Alice keeps fit at the gym.', speaker: 'Alice', from: [3] },
    ] });
    const { service, owner, agentId } = await reflecting([answer, answer, '{"proposals": []}']);
    const first = await service.review.reflect({ caller: owner, agentId, body: { max_proposals: 1 } });
    expect(first.proposals.map((item) => item.memory.text)).toEqual(['Alice eats sushi often.']);
    await service.review.decline({ caller: owner, agentId, memoryId: first.proposals[0]!.memory.memory_id, body: { reason: 'only twice' } });
    const second = await service.review.reflect({ caller: owner, agentId, body: { max_proposals: 20 } });
    expect(second.proposals.map((item) => item.memory.text)).toEqual(['Alice keeps fit at the gym.']);
    expect((await service.review.reflect({ caller: owner, agentId, body: {} })).proposals).toEqual([]);
    expect((await service.memories.list({ caller: owner, agentId, query: { limit: '100' } })).memories).toHaveLength(3);
  });

  it('refuses: the extractive model 503 service_not_configured; a model away or an answer that is no JSON 503 and nothing written; bad bodies 422; a person 403', async () => {
    const plain = await learningService();
    await plain.observeSettled(SAID);
    expect(await refusal(plain.service.review.reflect({ caller: plain.owner, agentId: plain.agentId, body: {} }))).toMatchObject({ status: 503, code: 'service_not_configured' });

    const away = await reflecting(() => {
      throw new LanguageModelError('unavailable', 'provider down');
    });
    expect(await refusal(away.service.review.reflect({ caller: away.owner, agentId: away.agentId, body: {} }))).toMatchObject({ status: 503, code: 'answer_model_unavailable', message: expect.stringContaining('(unavailable)') });
    const prose = await reflecting('Alice seems to like sushi.');
    expect(await refusal(prose.service.review.reflect({ caller: prose.owner, agentId: prose.agentId, body: {} }))).toMatchObject({ status: 503, code: 'answer_model_unavailable' });
    expect((await prose.service.review.list({ caller: prose.owner, agentId: prose.agentId })).items).toEqual([]);
    for (const body of [{ max_proposals: 0 }, { max_proposals: 21 }, { max_proposals: 2.5 }, { other: 1 }]) {
      expect(await refusal(prose.service.review.reflect({ caller: prose.owner, agentId: prose.agentId, body }))).toMatchObject({ status: 422 });
    }
    expect(await refusal(prose.service.review.reflect({ caller: await prose.caller('eu_0123456789abcdef0123456789abcdef'), agentId: prose.agentId, body: {} }))).toMatchObject({ status: 403, code: 'forbidden' });
  });

  it('reads nothing with fewer than two memories; charges the words read at the input-word price, 402 out of credit', async () => {
    const model = mockLanguageModel({ id: 'scripted-llm', generate: '{"proposals": []}' });
    const lonely = await learningService({ model });
    await lonely.observeSettled([SAID[0]!]);
    expect(await lonely.service.review.reflect({ caller: lonely.owner, agentId: lonely.agentId, body: {} })).toMatchObject({ memories_read: 1, proposals: [] });
    expect(model.generateCalls).toHaveLength(0);

    const store = inMemoryStore();
    const billed = await learningService({ model, store });
    const org = await billed.service.admin.createOrganization({ name: 'Paying', credits: '10' });
    const caller = await billed.service.as(org.organizationId);
    const { agent_id: agentId } = await billed.service.agents.create({ caller, body: { agent_config: { role: 'assistant', objective: 'remember' } } });
    await billed.service.idle();
    const { thread_id: threadId } = await billed.service.threads.create({ caller, agentId, body: {} });
    await billed.service.observe({ caller, agentId, threadId, body: { observations: SAID } });
    await billed.service.idle();
    const reflection = await billed.service.review.reflect({ caller, agentId, body: {} });
    // 7 + 8 + 6 words read at 0.001 credit a word.
    expect(reflection.credits).toBe('0.021');
    const ledger = await billed.service.billing({ caller, query: {} });
    expect(ledger.entries.filter((entry) => entry.route === 'reflection')).toEqual([expect.objectContaining({ in_words: 21, cost: '0.021' })]);
    // Spend all but less than a reflection costs: 402, and the model is not called.
    const spend = (Number(ledger.balance) - 0.01).toFixed(6);
    await store.ledger.append({ organizationId: org.organizationId, entry: { kind: 'charge', route: 'test', inWords: 0, outWords: 0, cost: spend, reference: null, jobId: null, turnCosts: {}, createdAt: new Date().toISOString() }, requireFunds: true });
    const calls = model.generateCalls.length;
    expect(await refusal(billed.service.review.reflect({ caller, agentId, body: {} }))).toMatchObject({ status: 402, code: 'payment_required', message: expect.stringContaining('nothing was proposed') });
    expect(model.generateCalls).toHaveLength(calls);
  });
});
