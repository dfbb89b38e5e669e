// Memory decay (issue 42) through the service with a clock the test moves: an agent's half-life
// lowers an old memory's rank at read time (never its text), a pin exempts it, a citation in an
// answer resets its age, and an agent without decay ranks exactly as before.
import { describe, expect, it } from 'vitest';
import { learningService } from '../__fixtures__/learning-service.js';
import { inMemoryMemoryIndex } from '../in-memory/in-memory-memory-index.js';

const DAY = 86_400_000;
const T0 = Date.parse('2026-01-01T00:00:00.000Z');
const say = (text: string, timestamp: string) => ({ speaker: 'Alice', timestamp, content: [{ type: 'text' as const, text }] });

async function world() {
  let now = T0;
  const setup = await learningService({ index: inMemoryMemoryIndex(), clock: { now: () => now } });
  // The old memory matches the question better by words; the new one is learned 90 days later.
  await setup.observeSettled([say('Hiking, hiking boots and a hiking trip: I went hiking in the Alps.', '2026-01-01T00:00:00Z')]);
  now = T0 + 90 * DAY;
  await setup.observeSettled([say('I went hiking in the Andes with Marta.', '2026-04-01T00:00:00Z')]);
  const { service, owner, agentId } = setup;
  const order = async () => (await service.memories.search({ caller: owner, agentId, body: { query: 'Where did I go hiking?' } })).hits.map((hit) => (hit.memory.text.includes('Alps') ? 'Alps' : hit.memory.text.includes('Andes') ? 'Andes' : '?'));
  const configure = (agent_config: Record<string, unknown>) => service.agents.update({ caller: owner, agentId, body: { agent_config: { role: 'assistant', objective: 'remember', ...agent_config } } });
  const idOf = async (word: string) => (await service.memories.list({ caller: owner, agentId })).memories.find((memory) => memory.text.includes(word))!.memory_id;
  return { ...setup, order, configure, idOf, at: (ms: number) => (now = T0 + ms) };
}

describe('memory decay', () => {
  it('ranks an old memory lower by its half-life, a pin exempts it, and its text never changes', async () => {
    const { service, owner, agentId, order, configure, idOf } = await world();
    expect((await order()).slice(0, 2)).toEqual(['Alps', 'Andes']);
    await configure({ memory_decay: { turn_half_life_days: 30 } });
    expect((await order()).slice(0, 2)).toEqual(['Andes', 'Alps']);
    const { hits } = await service.memories.search({ caller: owner, agentId, body: { query: 'Where did I go hiking?' } });
    const alps = hits.find((hit) => hit.memory.text.includes('Alps'))!;
    // 90 days at a 30-day half-life: an eighth of its score is left; the signals still add up.
    expect(alps.signals.decay).toBeLessThan(0);
    expect(alps.score / (alps.score - alps.signals.decay)).toBeCloseTo(0.125, 5);
    expect(Object.values(alps.signals).reduce((sum, value) => sum + value, 0)).toBeCloseTo(alps.score, 9);
    expect(alps.memory.text).toBe('Hiking, hiking boots and a hiking trip: I went hiking in the Alps.');
    await service.memories.update({ caller: owner, agentId, memoryId: await idOf('Alps'), body: { pinned: true } });
    expect((await order()).slice(0, 2)).toEqual(['Alps', 'Andes']);
  });

  it('a memory an answer cites is reinforced: its age counts from that answer', async () => {
    const { service, owner, agentId, threadId, order, configure, at } = await world();
    await configure({ memory_decay: { turn_half_life_days: 30 } });
    expect((await order()).slice(0, 2)).toEqual(['Andes', 'Alps']);
    const answer = await service.chat({ caller: owner, agentId, threadId, body: { turn_id: 't1', message: 'What was in the Alps?' } });
    expect(answer.memory_context).toContain('Alps');
    at(90 * DAY + 1000);
    expect((await order()).slice(0, 2)).toEqual(['Alps', 'Andes']);
  });

  it('a PATCH that omits memory_decay keeps it, {} switches it off, and a bad half-life is 422', async () => {
    const { service, owner, agentId, order, configure } = await world();
    await configure({ memory_decay: { turn_half_life_days: 30 } });
    await configure({});
    expect((await service.agents.get({ caller: owner, agentId })).agent_config.memory_decay).toEqual({ turn_half_life_days: 30 });
    expect((await order()).slice(0, 2)).toEqual(['Andes', 'Alps']);
    await configure({ memory_decay: {} });
    expect((await order()).slice(0, 2)).toEqual(['Alps', 'Andes']);
    for (const memory_decay of [{ turn_half_life_days: 0 }, { turn_half_life_days: 36501 }, { week: 1 }, { turn_half_life_days: '30' }]) {
      await expect(configure({ memory_decay }), JSON.stringify(memory_decay)).rejects.toMatchObject({ status: 422, code: 'invalid_request' });
    }
  });
});
