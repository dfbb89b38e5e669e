import { describe, expect, it } from 'vitest';
import { learningService, turns } from '../__fixtures__/learning-service.js';

// `service.threads.turns` (issue 45): a thread's observed turns, oldest observation first, paged,
// narrowed like every thread route.

describe('a thread\'s observed turns', () => {
  it('reads every turn in order, page by page, with the total and the learning state', async () => {
    const { service, owner, agentId, threadId, observeSettled } = await learningService();
    const first = await observeSettled(turns(3, 'first'));
    const second = await observeSettled(turns(4, 'second'));
    const read: { observation_id: string; turn_index: number; text: string; learning: string }[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await service.threads.turns({ caller: owner, agentId, threadId, query: { limit: 3, ...(cursor ? { cursor } : {}) } });
      expect(page.total).toBe(7);
      expect(page.turns.length).toBeLessThanOrEqual(3);
      read.push(...page.turns);
      cursor = page.next_cursor || undefined;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(read.map((turn) => turn.text)).toEqual([...turns(3, 'first'), ...turns(4, 'second')].map((turn) => turn.content[0]!.text));
    expect(read.map((turn) => [turn.observation_id, turn.turn_index])).toEqual([
      ...[0, 1, 2].map((i) => [first.observation_id, i]),
      ...[0, 1, 2, 3].map((i) => [second.observation_id, i]),
    ]);
    expect(read.every((turn) => turn.learning === 'learned')).toBe(true);
    // Narrowed to one observation.
    const only = await service.threads.turns({ caller: owner, agentId, threadId, query: { observation_id: second.observation_id } });
    expect(only.total).toBe(4);
    expect(only.turns.map((turn) => turn.turn_index)).toEqual([0, 1, 2, 3]);
    expect(only.next_cursor).toBe('');
  });

  it('refuses a made-up cursor, an unknown observation and another person\'s thread', async () => {
    const { service, owner, caller, agentId, threadId, observeSettled } = await learningService();
    await observeSettled(turns(2));
    await expect(service.threads.turns({ caller: owner, agentId, threadId, query: { cursor: 'abc' } })).rejects.toMatchObject({ code: 'invalid_request', status: 400 });
    await expect(service.threads.turns({ caller: owner, agentId, threadId, query: { cursor: '999999.0' } })).rejects.toMatchObject({ code: 'invalid_request' });
    await expect(service.threads.turns({ caller: owner, agentId, threadId, query: { limit: 0 } })).rejects.toMatchObject({ code: 'invalid_request' });
    await expect(service.threads.turns({ caller: owner, agentId, threadId, query: { observation_id: 'obs_01ARZ3NDEKTSV4RRFFQ69G5FAV' } })).rejects.toMatchObject({ code: 'not_found' });
    await expect(service.threads.turns({ caller: owner, agentId, threadId, query: { nope: '1' } as never })).rejects.toMatchObject({ code: 'invalid_request' });
    // A thread created by one person is not found for another (as every thread route).
    const alice = await caller('alice');
    const hers = await service.threads.create({ caller: alice, agentId, body: {} });
    await observeSettled(turns(1, 'alice'), { caller: alice, threadId: hers.thread_id });
    expect((await service.threads.turns({ caller: alice, agentId, threadId: hers.thread_id })).turns).toHaveLength(1);
    await expect(service.threads.turns({ caller: await caller('bob'), agentId, threadId: hers.thread_id })).rejects.toMatchObject({ code: 'thread_not_found' });
  });
});
