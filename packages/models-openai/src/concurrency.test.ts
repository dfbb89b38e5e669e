import pLimit from 'p-limit';
import { describe, expect, it } from 'vitest';
import { acquireSlot } from './concurrency.js';

const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

describe('acquireSlot', () => {
  it('grants slots up to the limit, then in FIFO order as they are released', async () => {
    const limit = pLimit(2);
    const order: string[] = [];
    const first = await acquireSlot(limit);
    const second = await acquireSlot(limit);
    const third = acquireSlot(limit).then((release) => (order.push('third'), release));
    const fourth = acquireSlot(limit).then((release) => (order.push('fourth'), release));
    await settle();
    expect(limit.activeCount).toBe(2);
    expect(limit.pendingCount).toBe(2);
    first();
    first(); // releasing twice frees one slot only
    (await third)();
    second();
    (await fourth)();
    expect(order).toEqual(['third', 'fourth']);
    await settle();
    expect(limit.activeCount).toBe(0);
  });

  it('rejects an aborted waiter at once, and its turn passes the slot straight on', async () => {
    const limit = pLimit(1);
    const release = await acquireSlot(limit);
    const controller = new AbortController();
    const aborted = acquireSlot(limit, controller.signal);
    const next = acquireSlot(limit);
    controller.abort();
    await expect(aborted).rejects.toMatchObject({ name: 'AbortError' });
    await expect(acquireSlot(limit, AbortSignal.abort())).rejects.toMatchObject({ name: 'AbortError' });
    release();
    (await next)();
    await settle();
    expect(limit.activeCount).toBe(0);
    expect(limit.pendingCount).toBe(0);
  });
});
