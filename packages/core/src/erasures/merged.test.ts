import { describe, expect, it } from 'vitest';
import { learningService } from '../__fixtures__/learning-service.js';

const say = (text: string, timestamp: string) => [{ speaker: 'ana', timestamp, content: [{ type: 'text' as const, text }] }];

/** Two threads where the second's turn was merged into the first's memory (a near-duplicate). */
async function mergedWorld() {
  const world = await learningService();
  const { service, owner, agentId, threadId } = world;
  const other = (await service.threads.create({ caller: owner, agentId, body: {} })).thread_id;
  const first = await world.observeSettled(say('MY SISTER lives in LISBON now.', '2024-01-01T10:00:00Z'));
  const second = await world.observeSettled(say('my sister lives in lisbon now', '2024-02-01T10:00:00Z'), { threadId: other });
  const memoryId = `mem_${first.observation_id.slice(4)}_0_0`;
  const receipt = await service.observationReceipt({ caller: owner, agentId, threadId: other, observationId: second.observation_id });
  expect(receipt.turns[0]).toMatchObject({ outcome: 'merged', memory_ids: [memoryId] });
  const erase = async (body: { thread_id: string } | { observation_id: string }) => {
    const erasure = await service.erasures.erase({ caller: owner, agentId, body });
    await service.idle();
    expect((await service.erasures.get({ caller: owner, agentId, erasureId: erasure.erasure_id })).status).toBe('completed');
  };
  const memories = async () => (await service.memories.list({ caller: owner, agentId, query: { include_history: true } as never })).memories;
  return { ...world, other, first, second, memoryId, erase, memories };
}

describe('erasure of merged near-duplicates', () => {
  it('erasing the merged turn takes it out of the memory it was merged into', async () => {
    const { threadId, other, second, memoryId, erase, memories } = await mergedWorld();
    await erase({ thread_id: other });
    const [memory, ...rest] = await memories();
    expect(rest).toEqual([]);
    expect(memory).toMatchObject({ memory_id: memoryId, text: 'MY SISTER lives in LISBON now.', source: { thread_id: threadId }, also_from: [] });
    expect(JSON.stringify(memory)).not.toContain(second.observation_id);
  });

  it('erasing the memory\'s own turn re-points it to the merged turn, with that turn\'s words only', async () => {
    const { first, other, second, memoryId, erase, memories, service, owner, agentId } = await mergedWorld();
    await erase({ observation_id: first.observation_id });
    const [memory, ...rest] = await memories();
    expect(rest).toEqual([]);
    expect(memory).toMatchObject({
      memory_id: memoryId,
      text: 'my sister lives in lisbon now',
      source: { kind: 'turn', thread_id: other, observation_id: second.observation_id, turn_index: 0 },
      also_from: [],
      occurred_at: '2024-02-01T10:00:00.000Z',
      job_id: second.observation_id,
      span: { start: 0, end: 29 },
    });
    expect(JSON.stringify(memory)).not.toMatch(/LISBON|SISTER/);
    // The memory keeps its id (receipts and supersession links name it); nothing else names the erased job.
    expect(JSON.stringify({ ...memory, memory_id: null })).not.toContain(first.observation_id.slice(4));
    const recalled = await service.recall({ caller: owner, agentId, body: { query: 'Where does my sister live?' } });
    expect(recalled.memory_context).toContain('my sister lives in lisbon now');
    expect(recalled.memory_context).not.toContain('LISBON');
    // Erasing the new source too leaves nothing.
    await erase({ thread_id: other });
    expect(await memories()).toEqual([]);
  });
});
