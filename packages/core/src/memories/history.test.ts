import { describe, expect, it } from 'vitest';
import { learningService } from '../__fixtures__/learning-service.js';
import { CHANGED_FACTS, learnChangedFact } from '../__fixtures__/changed-facts.js';
import { refusal } from '../__fixtures__/refusal.js';
import { MAX_HISTORY_VERSIONS } from './history.js';

const say = (speaker: string, text: string, timestamp: string) => ({ speaker, timestamp, content: [{ type: 'text' as const, text }] });

describe('memories.history', () => {
  it('lists an edited memory’s versions oldest first, from any of them, and leaves out other facts', async () => {
    const { service, owner, agentId, observeSettled } = await learningService();
    await observeSettled([say('Alice', 'The team standup is at nine every morning.', '2024-03-10T10:00:00Z'), say('Alice', 'I adopted a grey cat named Pixel.', '2024-03-10T10:01:00Z')]);
    const [first] = (await service.memories.list({ caller: owner, agentId, query: { text_contains: 'standup' } })).memories;
    const second = await service.memories.update({ caller: owner, agentId, memoryId: first!.memory_id, body: { text: 'The team standup is at half past nine.' } });
    const third = await service.memories.update({ caller: owner, agentId, memoryId: second.memory_id, body: { text: 'The team standup is at ten now.' } });

    for (const from of [first!.memory_id, second.memory_id, third.memory_id]) {
      const history = await service.memories.history({ caller: owner, agentId, memoryId: from });
      expect(history.memory_id).toBe(from);
      expect(history.truncated).toBe(false);
      expect(history.versions.map((version) => version.text)).toEqual(['The team standup is at nine every morning.', 'The team standup is at half past nine.', 'The team standup is at ten now.']);
    }
    const [v1, v2, v3] = (await service.memories.history({ caller: owner, agentId, memoryId: third.memory_id })).versions;
    expect([v1!.superseded_by, v2!.superseded_by, v3!.superseded_by]).toEqual([v2!.memory_id, v3!.memory_id, null]);
    expect(v3!.valid_to).toBeNull();
    // A memory never replaced is its own history.
    const [cat] = (await service.memories.list({ caller: owner, agentId, query: { text_contains: 'Pixel' } })).memories;
    expect((await service.memories.history({ caller: owner, agentId, memoryId: cat!.memory_id })).versions.map((version) => version.memory_id)).toEqual([cat!.memory_id]);
  });

  it('follows what learning superseded when a fact changed', async () => {
    const { service, owner } = await learningService();
    const fact = CHANGED_FACTS[0]!;
    const { agentId } = await learnChangedFact(service, owner, fact);
    const current = (await service.memories.list({ caller: owner, agentId, query: { limit: '100' } })).memories.find((memory) => memory.text.includes(fact.newValue));
    expect(current).toBeDefined();
    const history = await service.memories.history({ caller: owner, agentId, memoryId: current!.memory_id });
    expect(history.versions.length).toBeGreaterThanOrEqual(2);
    expect(history.versions.at(-1)!.memory_id).toBe(current!.memory_id);
    expect(history.versions[0]!.text).toContain(fact.oldValue);
    expect(history.versions[0]!.superseded_by).not.toBeNull();
  });

  it('hides forgotten versions unless include_expired, and lists at most the newest 100', async () => {
    const { service, owner, agentId, observeSettled } = await learningService();
    await observeSettled([say('Alice', 'The office wifi password is on the fridge.', '2024-03-10T10:00:00Z')]);
    let [memory] = (await service.memories.list({ caller: owner, agentId })).memories;
    const firstId = memory!.memory_id;
    const edited = await service.memories.update({ caller: owner, agentId, memoryId: firstId, body: { text: 'The office wifi password is in the drawer.' } });
    await service.memories.forget({ caller: owner, agentId, memoryId: firstId, body: { reason: 'old' } });
    expect((await service.memories.history({ caller: owner, agentId, memoryId: edited.memory_id })).versions.map((version) => version.memory_id)).toEqual([edited.memory_id]);
    const audit = await service.memories.history({ caller: owner, agentId, memoryId: edited.memory_id, query: { include_expired: 'true' } });
    expect(audit.versions.map((version) => version.memory_id)).toEqual([firstId, edited.memory_id]);

    let latest = edited.memory_id;
    for (let i = 0; i < MAX_HISTORY_VERSIONS; i++) latest = (await service.memories.update({ caller: owner, agentId, memoryId: latest, body: { text: `The office wifi password is in box ${i}.` } })).memory_id;
    const long = await service.memories.history({ caller: owner, agentId, memoryId: latest });
    expect(long.versions).toHaveLength(MAX_HISTORY_VERSIONS);
    expect(long.truncated).toBe(true);
    expect(long.versions.at(-1)!.memory_id).toBe(latest);
    expect(long.versions[0]!.text).toBe('The office wifi password is in box 0.');
    [memory] = (await service.memories.list({ caller: owner, agentId, query: { text_contains: 'box 98' , include_history: 'true' } })).memories;
    const exactly = await service.memories.history({ caller: owner, agentId, memoryId: memory!.memory_id });
    expect([exactly.versions.length, exactly.truncated]).toEqual([MAX_HISTORY_VERSIONS, true]);
  });

  it('answers 404 not_found for an unknown or malformed id, 404 agent_not_found for another organization, 400 for a bad query (as GET ./memories/{id})', async () => {
    const { service, owner, agentId, observeSettled } = await learningService();
    await observeSettled([say('Alice', 'My locker number is 214.', '2024-03-10T10:00:00Z')]);
    const [memory] = (await service.memories.list({ caller: owner, agentId })).memories;
    expect(await refusal(service.memories.history({ caller: owner, agentId, memoryId: 'mem_missing' }))).toMatchObject({ status: 404, code: 'not_found' });
    expect(await refusal(service.memories.history({ caller: owner, agentId, memoryId: 'not an id' }))).toMatchObject({ status: 404, code: 'not_found' });
    expect(await refusal(service.memories.history({ caller: owner, agentId: 'agent_01ARZ3NDEKTSV4RRFFQ69G5FAV', memoryId: memory!.memory_id }))).toMatchObject({ status: 404, code: 'agent_not_found' });
    expect(await refusal(service.memories.history({ caller: owner, agentId, memoryId: memory!.memory_id, query: { include_expired: 'maybe' } as never }))).toMatchObject({ status: 400, code: 'invalid_request' });
    expect(await refusal(service.memories.history({ caller: owner, agentId, memoryId: memory!.memory_id, query: { limit: '5' } as never }))).toMatchObject({ status: 400, code: 'invalid_request' });
  });
});
