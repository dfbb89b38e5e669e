// Forgetting's bookkeeping (issue 42) through the service: the options are checked, and a memory's
// mark (its forget reason) goes when the thread it was learned in is deleted.
import { describe, expect, it } from 'vitest';
import { createMemoryService } from '../create-memory-service.js';
import { inMemoryStore } from '../in-memory/store/index.js';
import { inMemoryMemoryIndex } from '../in-memory/in-memory-memory-index.js';
import { learningService } from '../__fixtures__/learning-service.js';
import { silentLogger } from '../service/logger.js';

const say = (text: string) => ({ speaker: 'Alice', timestamp: '2026-01-01T10:00:00Z', content: [{ type: 'text' as const, text }] });

describe('memory lifecycle', () => {
  it('refuses a restore window or sweep interval out of range when the service is built', () => {
    for (const memoryLifecycle of [{ expiredRetentionDays: -1 }, { expiredRetentionDays: 36501 }, { restoreWindowDays: 0 }, { restoreWindowDays: -1 }, { restoreWindowDays: 3651 }, { restoreWindowDays: Number.NaN }, { sweepIntervalMs: 999 }, { sweepIntervalMs: 1.5e3 + 0.5 }]) {
      expect(() => createMemoryService({ store: inMemoryStore(), logger: silentLogger, memoryLifecycle }), JSON.stringify(memoryLifecycle)).toThrow(/memoryLifecycle\.(restoreWindowDays|sweepIntervalMs|expiredRetentionDays)/);
    }
    expect(() => createMemoryService({ store: inMemoryStore(), logger: silentLogger, memoryLifecycle: { restoreWindowDays: 3650, sweepIntervalMs: 1000 } })).not.toThrow();
  });

  it('with a retention, the sweep erases memories expired that long ago (on every index), and leaves forgotten ones to their window', async () => {
    const DAY = 86_400_000;
    let now = Date.parse('2026-01-01T00:00:00Z');
    const { service, owner, agentId, observeSettled } = await learningService({ index: inMemoryMemoryIndex(), clock: { now: () => now }, memoryLifecycle: { expiredRetentionDays: 30, restoreWindowDays: 60 } });
    await observeSettled([say('My locker number at the gym is 4417.'), say('My sister lives in Lisbon.'), say('My dentist is Dr Okafor.')]);
    const { memories } = await service.memories.list({ caller: owner, agentId });
    const idOf = (word: string) => memories.find((memory) => memory.text.includes(word))!.memory_id;
    await service.memories.update({ caller: owner, agentId, memoryId: idOf('locker'), body: { expires_at: new Date(now + DAY).toISOString() } });
    await service.memories.forget({ caller: owner, agentId, memoryId: idOf('dentist'), body: { reason: 'asked to' } });
    const kept = async () => (await service.memories.list({ caller: owner, agentId, query: { include_expired: 'true' } })).memories.map((memory) => memory.text.split(' ')[1]).sort();
    now += 30 * DAY;
    expect(await service.sweepMemories()).toEqual({ erased: 0 });
    expect(await kept()).toEqual(['dentist', 'locker', 'sister']);
    now += DAY;
    expect(await service.sweepMemories()).toEqual({ erased: 1 });
    expect(await kept()).toEqual(['dentist', 'sister']);
    now += 29 * DAY;
    expect(await service.sweepMemories()).toEqual({ erased: 1 });
    expect(await kept()).toEqual(['sister']);
  });

  it('a forgotten memory’s mark, reason included, goes with its thread', async () => {
    const store = inMemoryStore();
    const { service, owner, agentId, threadId, observeSettled } = await learningService({ store, index: inMemoryMemoryIndex() });
    await observeSettled([say('My locker number at the gym is 4417.')]);
    const [memory] = (await service.memories.list({ caller: owner, agentId })).memories;
    await service.memories.forget({ caller: owner, agentId, memoryId: memory!.memory_id, body: { reason: 'locker 4417 is private' } });
    expect(await store.memoryMarks.get({ agentId, memoryIds: [memory!.memory_id] })).toHaveLength(1);
    await service.threads.delete({ caller: owner, agentId, threadId });
    await service.idle();
    expect(await store.memoryMarks.get({ agentId, memoryIds: [memory!.memory_id] })).toEqual([]);
  });
});
