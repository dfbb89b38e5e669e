import { describe, expect, it } from 'vitest';
import { createSemaphore } from './semaphore.js';

describe('createSemaphore', () => {
  it('grants slots up to the limit, then in FIFO order as they are released', async () => {
    const semaphore = createSemaphore(2);
    const order: string[] = [];
    const first = await semaphore.acquire();
    const second = await semaphore.acquire();
    const third = semaphore.acquire().then((release) => (order.push('third'), release));
    const fourth = semaphore.acquire().then((release) => (order.push('fourth'), release));
    expect(semaphore.active).toBe(2);
    expect(semaphore.waiting).toBe(2);
    first();
    first(); // releasing twice frees one slot only
    (await third)();
    second();
    (await fourth)();
    expect(order).toEqual(['third', 'fourth']);
    expect(semaphore.active).toBe(0);
  });

  it('drops an aborted waiter from the queue', async () => {
    const semaphore = createSemaphore(1);
    const release = await semaphore.acquire();
    const controller = new AbortController();
    const waiting = semaphore.acquire(controller.signal);
    controller.abort();
    await expect(waiting).rejects.toMatchObject({ name: 'AbortError' });
    expect(semaphore.waiting).toBe(0);
    release();
    expect(semaphore.active).toBe(0);
  });
});
