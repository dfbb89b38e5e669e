import { randomBytes } from 'node:crypto';
import { createMemoryService, silentLogger } from '@memory-agents/core';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { postgresUrl } from '@memory-agents/core/testing';
import { postgresStore } from './postgres-store.js';

const databaseUrl = postgresUrl('limits and credits across processes on PostgreSQL');
const T0 = Date.parse('2026-01-01T00:00:00.000Z');

/**
 * Two services on one PostgreSQL schema stand for two server processes: request windows, answer
 * places and the credit balance are kept in the database, so the limits hold across both.
 */
describe.skipIf(!databaseUrl)('limits and credits across processes sharing PostgreSQL', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    while (cleanups.length > 0) await cleanups.pop()!();
  });

  async function twoProcesses() {
    const schema = `ma_shared_${randomBytes(6).toString('hex')}`;
    const services = [0, 1].map(() =>
      createMemoryService({ store: postgresStore({ connectionString: databaseUrl!, schema }), clock: { now: () => T0 }, logger: silentLogger }),
    );
    for (const service of services) await service.start();
    cleanups.push(async () => {
      for (const service of services) await service.stop();
      const client = new pg.Client({ connectionString: databaseUrl });
      await client.connect();
      await client.query(`DROP SCHEMA ${schema} CASCADE`);
      await client.end();
    });
    const [a, b] = services as [ReturnType<typeof createMemoryService>, ReturnType<typeof createMemoryService>];
    const org = await a.admin.createOrganization({ name: 'Shared', credits: '0.02' });
    const { key } = await a.admin.createKey({ organizationId: org.organizationId });
    const caller = (service: typeof a, endUser?: string) =>
      service.authenticate({ authorization: `Bearer ${key}`, endUser, secFetchSite: undefined, requestId: 'req_shared' });
    return { a, b, caller };
  }

  it('counts one request window across both processes', async () => {
    const { a, b, caller } = await twoProcesses();
    const [onA, onB] = [await caller(a, 'alice'), await caller(b, 'alice')];
    const decisions = [];
    for (let i = 0; i < 5; i++) decisions.push(await (i % 2 === 0 ? a : b).limits.take({ caller: i % 2 === 0 ? onA : onB, operation: 'thread_create' }));
    expect(decisions.every((decision) => decision.allowed)).toBe(true);
    const sixth = await b.limits.take({ caller: onB, operation: 'thread_create' });
    expect(sixth.allowed).toBe(false);
    if (!sixth.allowed) expect(sixth.error).toMatchObject({ code: 'rate_limit_exceeded', details: 'user' });
    // Concurrent requests from both processes: exactly the window's places are admitted.
    const bob = [await caller(a, 'bob'), await caller(b, 'bob')];
    const raced = await Promise.all(Array.from({ length: 12 }, (_, i) => (i % 2 === 0 ? a : b).limits.take({ caller: bob[i % 2]!, operation: 'thread_create' })));
    expect(raced.filter((decision) => decision.allowed)).toHaveLength(5);
  });

  it('holds at most 2 answers per subject across both processes', async () => {
    const { a, b, caller } = await twoProcesses();
    const agentCaller = await caller(a, 'carol');
    const agent = await a.agents.create({ caller: agentCaller, body: { agent_config: { role: 'assistant', objective: 'remember' } } });
    await a.idle();
    const thread = await a.threads.create({ caller: agentCaller, agentId: agent.agent_id, body: {} });
    await a.admin.addCredits({ organizationId: agentCaller.organizationId, amount: '100' });
    const open = async (service: typeof a) => service.chatStream({ caller: await caller(service, 'carol'), agentId: agent.agent_id, threadId: thread.thread_id, body: { turn_id: 't', message: 'hi', answer_length: 'brief' } });
    const first = await open(a);
    const second = await open(b);
    await expect(open(a)).rejects.toMatchObject({ code: 'rate_limit_exceeded', retryAfter: 5 });
    await expect(open(b)).rejects.toMatchObject({ code: 'rate_limit_exceeded', retryAfter: 5 });
    await first[Symbol.asyncIterator]().return?.();
    const third = await open(b);
    for (const stream of [second, third]) for await (const _event of stream) void _event;
  });

  it('never overdraws a small balance with answers racing in both processes', async () => {
    const { a, b, caller } = await twoProcesses();
    const owner = await caller(a);
    const agent = await a.agents.create({ caller: owner, body: { agent_config: { role: 'assistant', objective: 'remember' } } });
    await a.idle();
    const threads = await Promise.all(['p1', 'p2', 'p3', 'p4'].map(async (person) => ({ person, thread: (await a.threads.create({ caller: await caller(a, person), agentId: agent.agent_id, body: {} })).thread_id })));
    // 0.02 credits: a brief answer reserves 1 input word + 150 output words = 0.301 > 0.02, so top up to
    // exactly cover two reservations (0.602), then race four answers from two processes.
    await a.admin.addCredits({ organizationId: owner.organizationId, amount: '0.582' });
    // Streams hold their charge until read, so the race is decided by the reservations alone.
    const results = await Promise.allSettled(
      threads.map(({ person, thread }, i) =>
        (async () => {
          const service = i % 2 === 0 ? a : b;
          return service.chatStream({ caller: await caller(service, person), agentId: agent.agent_id, threadId: thread, body: { turn_id: 't', message: 'hi', answer_length: 'brief' } });
        })(),
      ),
    );
    const refused = results.filter((result) => result.status === 'rejected');
    expect(refused).toHaveLength(2);
    for (const result of refused) expect((result as PromiseRejectedResult).reason).toMatchObject({ code: 'payment_required' });
    expect((await a.billing({ caller: owner, query: {} })).balance).toBe('0');
    for (const result of results) if (result.status === 'fulfilled') for await (const _event of result.value) void _event;
    const billing = await a.billing({ caller: owner, query: { limit: '100' } });
    expect(Number(billing.balance)).toBeGreaterThan(0);
  });
});
