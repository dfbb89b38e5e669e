import { describe, expect, it } from 'vitest';
import { learningService } from '../__fixtures__/learning-service.js';
import { CHANGED_FACTS, expectCurrentTruth, learnChangedFact, type ChangedFact } from '../__fixtures__/changed-facts.js';

/**
 * Issue 32 through the public API, on the default writer and answerer: after a person changes a
 * fact, recall and chat give the new value first (the old one only as marked history), and
 * `as_of` an instant before the change gives the old value.
 */
describe('changed facts (validity and history)', async () => {
  const { service, owner } = await learningService();

  const learn = (fact: ChangedFact) => learnChangedFact(service, owner, fact);

  it.each(CHANGED_FACTS.map((fact) => [fact.name, fact] as const))('%s: recall and chat give the new value, as_of the old one', async (_, fact) => {
    const { answer } = await expectCurrentTruth(service, owner, fact);
    const oldAt = answer.indexOf(fact.oldValue);
    if (oldAt !== -1) expect(answer.indexOf(fact.newValue)).toBeLessThan(oldAt);
  });

  it('says what changed, citing the new and the old memory', async () => {
    const fact = CHANGED_FACTS.find((candidate) => candidate.name === 'move')!;
    const { agentId, threadId } = await learn(fact);
    const answer = await service.chat({ caller: owner, agentId, threadId, body: { turn_id: 'cite', message: fact.question } });
    expect(answer.message).toMatch(/Berlin.*\[1\].*this changed: earlier on 2024-01-10, "I live in Paris, my flat is near the canal\." \[\d\]/);
    expect(answer.citations.length).toBeGreaterThanOrEqual(2);
  });

  it('supersedes within one observe call (the old and the new fact in one learning batch)', async () => {
    const agent = await service.agents.create({ caller: owner, body: { agent_config: { role: 'assistant', objective: 'remember' } } });
    await service.idle();
    const agentId = agent.agent_id;
    const { thread_id: threadId } = await service.threads.create({ caller: owner, agentId, body: {} });
    const observations = [
      { content: [{ type: 'text' as const, text: 'My phone number is 555-0100.' }], timestamp: '2024-01-10T09:00:00.000Z' },
      { content: [{ type: 'text' as const, text: 'My new phone number is 555-0199.' }], timestamp: '2024-04-02T18:30:00.000Z' },
    ];
    await service.observe({ caller: owner, agentId, threadId, body: { observations } });
    await service.idle();
    const now = await service.recall({ caller: owner, agentId, body: { query: 'What is my phone number?' } });
    expect(now.memory_context.split('\n')[0]).toContain('555-0199');
    const then = await service.recall({ caller: owner, agentId, body: { query: 'What is my phone number?', as_of: '2024-02-01T00:00:00Z' } });
    expect(then.memory_context).toContain('555-0100');
    expect(then.memory_context).not.toContain('555-0199');
  });

  it('a change the text dates ("moved ... in March", said in April) is current from that date, not from when it was said', async () => {
    const fact = CHANGED_FACTS.find((candidate) => candidate.name === 'move')!;
    const { agentId } = await learn(fact);
    const listed = await service.memories.list({ caller: owner, agentId, query: { include_history: 'true' } });
    const berlin = listed.memories.find((memory: { text: string }) => memory.text.includes('Berlin'))!;
    const paris = listed.memories.find((memory: { text: string }) => memory.text.includes('Paris'))!;
    expect(berlin.valid_from).toBe('2024-03-01T00:00:00.000Z');
    expect(paris).toMatchObject({ valid_to: '2024-03-01T00:00:00.000Z', superseded_by: berlin.memory_id });
    const midMarch = await service.recall({ caller: owner, agentId, body: { query: fact.question, as_of: '2024-03-20T00:00:00Z' } });
    expect(midMarch.memory_context).toContain('Berlin');
    expect(midMarch.memory_context).not.toContain('Paris');
    const lateFebruary = await service.recall({ caller: owner, agentId, body: { query: fact.question, as_of: '2024-02-28T00:00:00Z' } });
    expect(lateFebruary.memory_context).toContain('Paris');
    expect(lateFebruary.memory_context).not.toContain('Berlin');
  });

  it('refuses an as_of that is not a date-time with 422', async () => {
    const fact = CHANGED_FACTS[0]!;
    const { agentId } = await learn(fact);
    await expect(service.recall({ caller: owner, agentId, body: { query: fact.question, as_of: 'last tuesday' } })).rejects.toMatchObject({ code: 'invalid_request', status: 422 });
  });
});
