import { describe, expect, it } from 'vitest';
import { createMemoryService } from '../create-memory-service.js';
import { inMemoryStore } from '../in-memory/store/index.js';
import { silentLogger } from '../service/logger.js';
import { RATE_LIMITED_OPERATIONS } from '../ports/limit-overrides.js';
import { DEFAULT_RATE_LIMITS, resolveRateLimits } from './rate-limits.js';

const T0 = Date.parse('2026-01-01T00:00:00.000Z');

async function setup(limits: Parameters<ReturnType<typeof createMemoryService>['admin']['createOrganization']>[0]['limits'] = {}) {
  let now = T0;
  const service = createMemoryService({ store: inMemoryStore(), clock: { now: () => now }, logger: silentLogger });
  await service.start();
  const org = await service.admin.createOrganization({ name: 'Acme', limits });
  const { key } = await service.admin.createKey({ organizationId: org.organizationId });
  const caller = (endUser?: string) => service.authenticate({ authorization: `Bearer ${key}`, endUser, secFetchSite: undefined, requestId: 'req_t' });
  return {
    service,
    caller,
    advance: (ms: number) => {
      now += ms;
    },
    now: () => now,
  };
}

describe('request-rate windows', () => {
  it('holds the spec table for every operation', () => {
    expect(RATE_LIMITED_OPERATIONS).toHaveLength(6);
    expect(DEFAULT_RATE_LIMITS.thread_create).toEqual({ subject: { limit: 5, windowSeconds: 10 }, organization: { limit: 30, windowSeconds: 10 } });
    expect(DEFAULT_RATE_LIMITS.observe_file.subject).toEqual({ limit: 1, windowSeconds: 10 });
    expect(resolveRateLimits({ chat: { subject: { limit: 3, windowSeconds: 5 } } }).chat).toEqual({
      subject: { limit: 3, windowSeconds: 5 },
      organization: { limit: 120, windowSeconds: 60 },
    });
  });

  it('admits the N-th request of a subject, refuses the N+1-th with details user, and frees a place as the window slides', async () => {
    const { service, caller, advance, now } = await setup();
    const alice = await caller('alice');
    for (let i = 1; i <= 5; i++) {
      const decision = await service.limits.take({ caller: alice, operation: 'thread_create' });
      expect(decision).toMatchObject({ allowed: true, status: { limit: 5, remaining: 5 - i, resetAt: T0 + 10_000 } });
      advance(1000);
    }
    const refused = await service.limits.take({ caller: alice, operation: 'thread_create' });
    expect(refused.allowed).toBe(false);
    if (refused.allowed) return;
    expect(refused.error).toMatchObject({ code: 'rate_limit_exceeded', status: 429, details: 'user', retryAfter: 5 });
    expect(refused.status).toEqual({ limit: 5, remaining: 0, resetAt: now() + 5000, retryAfterSeconds: 5 });
    // The refusal counted nothing: once the first request leaves the window, exactly one place is free.
    advance(5000);
    expect((await service.limits.take({ caller: alice, operation: 'thread_create' })).allowed).toBe(true);
    expect((await service.limits.take({ caller: alice, operation: 'thread_create' })).allowed).toBe(false);
  });

  it('counts subjects apart, and the organization ceiling across subjects (details organization)', async () => {
    const { service, caller } = await setup({ rateLimits: { chat: { subject: { limit: 2, windowSeconds: 60 }, organization: { limit: 3, windowSeconds: 60 } } } });
    const [alice, bob, carol, backend] = await Promise.all([caller('alice'), caller('bob'), caller('carol'), caller()]);
    expect((await service.limits.take({ caller: alice, operation: 'chat' })).allowed).toBe(true);
    expect((await service.limits.take({ caller: alice, operation: 'chat' })).allowed).toBe(true);
    const aliceOut = await service.limits.take({ caller: alice, operation: 'chat' });
    expect(aliceOut.allowed === false && aliceOut.error.details).toBe('user');
    // Bob has his own window; he takes the organization's last place.
    const bobFirst = await service.limits.take({ caller: bob, operation: 'chat' });
    expect(bobFirst).toMatchObject({ allowed: true, status: { limit: 3, remaining: 0 } });
    const carolOut = await service.limits.take({ caller: carol, operation: 'chat' });
    expect(carolOut.allowed === false && carolOut.error.details).toBe('organization');
    const backendOut = await service.limits.take({ caller: backend, operation: 'chat' });
    expect(backendOut.allowed === false && backendOut.error.details).toBe('organization');
    // Another operation's windows are untouched.
    expect((await service.limits.take({ caller: carol, operation: 'observe' })).allowed).toBe(true);
  });

  it('holds at most 2 answers per subject and 4 per organization (Retry-After 5); a stream holds its place until closed', async () => {
    const { service, caller } = await setup();
    const backend = await caller();
    const agent = await service.agents.create({ caller: backend, body: { agent_config: { role: 'assistant', objective: 'remember' } } });
    await service.idle();
    const threads = new Map<string, string>();
    const open = async (who: string) => {
      const person = await caller(who);
      if (!threads.has(who)) threads.set(who, (await service.threads.create({ caller: person, agentId: agent.agent_id, body: {} })).thread_id);
      return service.chatStream({ caller: person, agentId: agent.agent_id, threadId: threads.get(who)!, body: { turn_id: 't', message: 'hello there' } });
    };
    const a1 = await open('a');
    const a2 = await open('a');
    await expect(open('a')).rejects.toMatchObject({ code: 'rate_limit_exceeded', details: 'user', retryAfter: 5 });
    const b1 = await open('b');
    const b2 = await open('b');
    await expect(open('c')).rejects.toMatchObject({ code: 'rate_limit_exceeded', details: 'organization', retryAfter: 5 });
    // Closing a stream (the client left) gives its place back.
    await a1[Symbol.asyncIterator]().return?.();
    const c1 = await open('c');
    for (const stream of [a2, b1, b2, c1]) for await (const _event of stream) void _event;
    await expect(open('a')).resolves.toBeDefined();
  });
});
