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
    for (const memoryLifecycle of [{ restoreWindowDays: 0 }, { restoreWindowDays: -1 }, { restoreWindowDays: 3651 }, { restoreWindowDays: Number.NaN }, { sweepIntervalMs: 999 }, { sweepIntervalMs: 1.5e3 + 0.5 }]) {
      expect(() => createMemoryService({ store: inMemoryStore(), logger: silentLogger, memoryLifecycle }), JSON.stringify(memoryLifecycle)).toThrow(/memoryLifecycle\.(restoreWindowDays|sweepIntervalMs)/);
    }
    expect(() => createMemoryService({ store: inMemoryStore(), logger: silentLogger, memoryLifecycle: { restoreWindowDays: 3650, sweepIntervalMs: 1000 } })).not.toThrow();
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
