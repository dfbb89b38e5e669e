import { describe, expect, it } from 'vitest';
import { learningService } from '../__fixtures__/learning-service.js';
import type { Caller } from '../auth/caller.js';
import { isServiceError } from '../errors/index.js';
import type { ObserveInput } from '../schemas/inputs.js';
import { inMemoryStore } from '../in-memory/store/index.js';
import type { AgentRecord } from '../ports/store/index.js';
import type { ServiceContext } from '../service/context.js';
import { memoryScopeOf, readableThreadIds, sharedWith } from './memory-scope.js';

// Per-person memory (issue 42): `memory_scope` in the agent config and the one computation of whose
// memories a caller reads. The HTTP/MCP tenancy matrix against the built server is
// test/memories/memory-scope.test.ts.

const say = (speaker: string, text: string, timestamp: string) => ({ speaker, timestamp, content: [{ type: 'text' as const, text }] });

const X_SECRET = 'My secret code is xanadu4411 and my doctor is Dr Quill.';
const Y_SECRET = 'My secret code is yellowfin7720 and my doctor is Dr Bramble.';
const Y_SECRET_LATER = 'My new secret code is yucca3305.';
const SHARED = 'The office wifi secret code is sharedkiwi5533.';
/** Every piece of Y's text a leak would show. */
const Y_MARKS = ['yellowfin7720', 'Bramble', 'yucca3305'];
const QUERY = 'What is the secret code, and who is the doctor?';

async function refusal(call: Promise<unknown>): Promise<{ status: number; code: string }> {
  try {
    await call;
  } catch (error) {
    if (isServiceError(error)) return { status: error.status, code: error.code };
    throw error;
  }
  throw new Error('the call succeeded');
}

/** An agent with the given scope; X, Y and a thread of no person (the organization's), each taught. */
async function world(memoryScope?: 'agent' | 'end_user') {
  const setup = await learningService();
  const { service, caller, owner } = setup;
  const created = await service.agents.create({ caller: owner, body: { agent_config: { role: 'support', objective: 'help customers', ...(memoryScope ? { memory_scope: memoryScope } : {}) } } });
  await service.idle();
  const agentId = created.agent_id;
  const x = await caller('x@example.com');
  const y = await caller('y@example.com');
  const threadOf = async (who: Caller) => (await service.threads.create({ caller: who, agentId, body: {} })).thread_id;
  const [xThread, yThread, sharedThread] = [await threadOf(x), await threadOf(y), await threadOf(owner)];
  const observe = async (who: Caller, threadId: string, observations: ObserveInput['observations']) => {
    await service.observe({ caller: who, agentId, threadId, body: { observations } });
    await service.idle();
  };
  await observe(x, xThread, [say('x', X_SECRET, '2024-03-01T10:00:00Z')]);
  await observe(y, yThread, [say('y', Y_SECRET, '2024-03-01T11:00:00Z')]);
  await observe(y, yThread, [say('y', Y_SECRET_LATER, '2024-04-01T11:00:00Z')]);
  await observe(owner, sharedThread, [say('admin', SHARED, '2024-03-02T10:00:00Z')]);
  return { ...setup, agentId, x, y, xThread, yThread, sharedThread };
}

/** Everything each read path hands X for the query, as one string. */
async function whatXReads(w: Awaited<ReturnType<typeof world>>): Promise<Record<string, string>> {
  const { service, agentId, x, xThread } = w;
  const events: unknown[] = [];
  for await (const event of await service.chatStream({ caller: x, agentId, threadId: xThread, body: { turn_id: 's1', message: QUERY } })) events.push(event);
  const reads = {
    recall: await service.recall({ caller: x, agentId, body: { query: QUERY } }),
    recallAsOf: await service.recall({ caller: x, agentId, body: { query: QUERY, as_of: '2024-03-15T00:00:00Z' } }),
    retrieve: (await service.retrieve({ caller: x, agentId, query: QUERY })).memoryContext,
    chat: await service.chat({ caller: x, agentId, threadId: xThread, body: { turn_id: 'c1', message: QUERY } }),
    chatAsOf: await service.chat({ caller: x, agentId, threadId: xThread, body: { turn_id: 'c2', message: QUERY, as_of: '2024-03-15T00:00:00Z' } }),
    stream: events,
    search: await service.memories.search({ caller: x, agentId, body: { query: QUERY, limit: 100 } }),
    searchAsOf: await service.memories.search({ caller: x, agentId, body: { query: QUERY, limit: 100, as_of: '2024-03-15T00:00:00Z' } }),
    list: await service.memories.list({ caller: x, agentId, query: { limit: '100', include_history: 'true' } }),
    // Last: these two learn the message (and the answer) in X's thread.
    respond: await service.observeAndRespond({ caller: x, agentId, threadId: xThread, body: { turn_id: 'r1', message: QUERY } }),
    enrich: await service.observeAndEnrich({ caller: x, agentId, threadId: xThread, body: { turn_id: 'e1', message: QUERY } }),
  };
  await service.idle();
  return Object.fromEntries(Object.entries(reads).map(([route, value]) => [route, JSON.stringify(value)]));
}

describe('memory_scope in the agent config', () => {
  it('is absent unless set (the spec config), validated, returned, and kept by a PATCH that omits it', async () => {
    const { service, owner } = await learningService();
    const plain = await service.agents.create({ caller: owner, body: { agent_config: { role: 'r', objective: 'o' } } });
    expect(plain.agent_config).toEqual({ role: 'r', objective: 'o' });
    expect(await refusal(service.agents.create({ caller: owner, body: { agent_config: { role: 'r', objective: 'o', memory_scope: 'person' } } as never }))).toEqual({ status: 422, code: 'invalid_request' });

    const scoped = await service.agents.create({ caller: owner, body: { agent_config: { role: 'r', objective: 'o', memory_scope: 'end_user' } } });
    await service.idle();
    expect(scoped.agent_config.memory_scope).toBe('end_user');
    expect((await service.agents.get({ caller: owner, agentId: scoped.agent_id })).agent_config.memory_scope).toBe('end_user');
    expect((await service.agents.list({ caller: owner })).find((agent) => agent.agent_id === scoped.agent_id)!.agent_config.memory_scope).toBe('end_user');

    // A client that does not know the extension changes the role: the narrowing stays.
    const renamed = await service.agents.update({ caller: owner, agentId: scoped.agent_id, body: { agent_config: { role: 'r2', objective: 'o2' } } });
    expect(renamed.agent_config).toEqual({ role: 'r2', objective: 'o2', memory_scope: 'end_user' });
    const widened = await service.agents.update({ caller: owner, agentId: scoped.agent_id, body: { agent_config: { role: 'r2', objective: 'o2', memory_scope: 'agent' } } });
    expect(widened.agent_config.memory_scope).toBe('agent');
    const narrowed = await service.agents.update({ caller: owner, agentId: plain.agent_id, body: { agent_config: { role: 'r', objective: 'o', memory_scope: 'end_user' } } });
    expect(narrowed.agent_config.memory_scope).toBe('end_user');
    expect(await refusal(service.agents.update({ caller: owner, agentId: plain.agent_id, body: { agent_config: { role: 'r', objective: 'o', memory_scope: '' } } as never }))).toEqual({ status: 422, code: 'invalid_request' });
  });
});

describe('readableThreadIds: whose memories a caller reads', () => {
  const AGENT = 'agent_00000000000000000000000000000001';
  const agentWith = (memoryScope?: 'agent' | 'end_user') =>
    ({ id: AGENT, organizationId: 'org_1', config: { role: 'r', objective: 'o', ...(memoryScope ? { memory_scope: memoryScope } : {}) } }) as AgentRecord;
  const who = (endUserId: string | null) => ({ organizationId: 'org_1', endUserId }) as Caller;
  async function contextWithThreads() {
    const store = inMemoryStore();
    const thread = (id: string, endUserId: string | null) => ({ id, agentId: AGENT, organizationId: 'org_1', endUserId, status: 'ready' as const, title: '', metadata: {}, createdAt: `2024-01-0${id.slice(-1)}T00:00:00Z`, updatedAt: '2024-01-01T00:00:00Z' });
    for (const record of [thread('thread_x1', 'eu_x'), thread('thread_y2', 'eu_y'), thread('thread_n3', null), thread('thread_x4', 'eu_x')]) await store.threads.insert({ thread: record });
    return { store } as unknown as ServiceContext;
  }
  const sorted = (ids: string[] | undefined) => (ids === undefined ? undefined : [...ids].sort());

  it('end_user: a person reads their own threads and the threads of no person, never another person\'s', async () => {
    const context = await contextWithThreads();
    for (const purpose of ['answer', 'inspect'] as const) {
      expect(sorted(await readableThreadIds(context, who('eu_x'), agentWith('end_user'), purpose))).toEqual(['thread_n3', 'thread_x1', 'thread_x4']);
      expect(sorted(await readableThreadIds(context, who('eu_y'), agentWith('end_user'), purpose))).toEqual(['thread_n3', 'thread_y2']);
      // A person with no thread yet still reads what was learned with no person.
      expect(sorted(await readableThreadIds(context, who('eu_new'), agentWith('end_user'), purpose))).toEqual(['thread_n3']);
    }
  });

  it('the organization (no X-SP-End-User) reads every memory under either scope, outside a thread', async () => {
    const context = await contextWithThreads();
    for (const scope of [undefined, 'agent', 'end_user'] as const) {
      for (const purpose of ['answer', 'inspect'] as const) expect(await readableThreadIds(context, who(null), agentWith(scope), purpose)).toBeUndefined();
    }
  });

  it("end_user: answering in a thread draws on what the thread's person reads, whoever asks (the answer is recorded there)", async () => {
    const context = await contextWithThreads();
    const scoped = agentWith('end_user');
    expect(sorted(await readableThreadIds(context, who(null), scoped, 'answer', { endUserId: 'eu_x' }))).toEqual(['thread_n3', 'thread_x1', 'thread_x4']);
    expect(sorted(await readableThreadIds(context, who(null), scoped, 'answer', { endUserId: null }))).toEqual(['thread_n3']);
    expect(sorted(await readableThreadIds(context, who('eu_x'), scoped, 'answer', { endUserId: 'eu_x' }))).toEqual(['thread_n3', 'thread_x1', 'thread_x4']);
    // The spec's agent scope: the thread changes nothing.
    expect(await readableThreadIds(context, who(null), agentWith('agent'), 'answer', { endUserId: null })).toBeUndefined();
    expect(await readableThreadIds(context, who('eu_x'), agentWith(undefined), 'answer', { endUserId: 'eu_x' })).toBeUndefined();
  });

  it('agent (the default, the spec): answering reads every memory; the memories API a person\'s own threads', async () => {
    const context = await contextWithThreads();
    for (const scope of [undefined, 'agent'] as const) {
      expect(memoryScopeOf(agentWith(scope))).toBe('agent');
      expect(await readableThreadIds(context, who('eu_x'), agentWith(scope), 'answer')).toBeUndefined();
      expect(sorted(await readableThreadIds(context, who('eu_x'), agentWith(scope), 'inspect'))).toEqual(['thread_x1', 'thread_x4']);
    }
    expect(memoryScopeOf(agentWith('end_user'))).toBe('end_user');
  });

  it('sharedWith: a thread of no person is shared with everyone; a person\'s thread with that person only', () => {
    expect(sharedWith({ endUserId: null }, 'eu_x')).toBe(true);
    expect(sharedWith({ endUserId: null }, null)).toBe(true);
    expect(sharedWith({ endUserId: 'eu_x' }, 'eu_x')).toBe(true);
    expect(sharedWith({ endUserId: 'eu_y' }, 'eu_x')).toBe(false);
    expect(sharedWith({ endUserId: 'eu_y' }, null)).toBe(false);
  });
});

describe('every read path of an end_user agent, through the service', () => {
  it('gives X their own memories and the shared ones, never a byte of Y\'s; the organization reads all', async () => {
    const w = await world('end_user');
    const reads = await whatXReads(w);
    for (const [route, text] of Object.entries(reads)) {
      for (const mark of Y_MARKS) expect(text, `${route} leaks ${mark}`).not.toContain(mark);
    }
    for (const route of ['recall', 'retrieve', 'chat', 'stream', 'respond', 'enrich', 'search', 'list']) {
      expect(reads[route], route).toContain('xanadu4411');
      expect(reads[route], route).toContain('sharedkiwi5533');
    }
    expect(reads.recallAsOf).toContain('xanadu4411');
    // The organization reads every memory, Y's history included.
    const { service, agentId, owner } = w;
    const org = JSON.stringify([
      await service.recall({ caller: owner, agentId, body: { query: QUERY, max_context_chars: 100_000 } }),
      await service.recall({ caller: owner, agentId, body: { query: QUERY, as_of: '2024-03-15T00:00:00Z' } }),
      await service.memories.list({ caller: owner, agentId, query: { limit: '100' } }),
    ]);
    for (const mark of ['xanadu4411', 'sharedkiwi5533', 'yellowfin7720', 'yucca3305']) expect(org).toContain(mark);
  });

  it("the organization answering in a thread of no person draws only on shared memories, so the answer it records there carries no person's", async () => {
    const { service, agentId, owner, sharedThread, xThread } = await world('end_user');
    const shared = JSON.stringify([
      await service.chat({ caller: owner, agentId, threadId: sharedThread, body: { turn_id: 'o1', message: QUERY } }),
      await service.observeAndRespond({ caller: owner, agentId, threadId: sharedThread, body: { turn_id: 'o2', message: QUERY } }),
    ]);
    expect(shared).toContain('sharedkiwi5533');
    for (const mark of ['xanadu4411', ...Y_MARKS]) expect(shared).not.toContain(mark);
    const inX = JSON.stringify(await service.chat({ caller: owner, agentId, threadId: xThread, body: { turn_id: 'o3', message: QUERY } }));
    expect(inX).toContain('xanadu4411');
    for (const mark of Y_MARKS) expect(inX).not.toContain(mark);
  });

  it('memories get: X reads a shared memory but not Y\'s (404 as unknown), and deletes only their own', async () => {
    const { service, agentId, owner, x, xThread, yThread, sharedThread } = await world('end_user');
    const all = (await service.memories.list({ caller: owner, agentId, query: { limit: '100' } })).memories;
    const of = (threadId: string) => all.find((memory) => memory.source.thread_id === threadId)!.memory_id;
    expect((await service.memories.get({ caller: x, agentId, memoryId: of(sharedThread) })).text).toContain('sharedkiwi5533');
    expect(await refusal(service.memories.get({ caller: x, agentId, memoryId: of(yThread) }))).toEqual({ status: 404, code: 'not_found' });
    expect(await refusal(service.memories.delete({ caller: x, agentId, memoryId: of(yThread) }))).toEqual({ status: 404, code: 'not_found' });
    expect(await refusal(service.memories.delete({ caller: x, agentId, memoryId: of(sharedThread) }))).toEqual({ status: 404, code: 'not_found' });
    await service.memories.delete({ caller: x, agentId, memoryId: of(xThread) });
  });

  it('agent scope (the default) keeps the spec: X\'s answers draw on Y\'s memories; the memories API shows X only their own', async () => {
    for (const scope of [undefined, 'agent'] as const) {
      const reads = await whatXReads(await world(scope));
      // Y's current code (the later turn replaced the first).
      expect(reads.recall, `recall, ${scope ?? 'default'}`).toContain('yucca3305');
      expect(reads.chat, `chat, ${scope ?? 'default'}`).toContain('yucca3305');
      expect(reads.recallAsOf, `recall as_of, ${scope ?? 'default'}`).toContain('yellowfin7720');
      expect(reads.search, `search, ${scope ?? 'default'}`).not.toContain('yucca3305');
      expect(reads.search).not.toContain('sharedkiwi5533');
      expect(reads.list).not.toContain('sharedkiwi5533');
      expect(reads.list).toContain('xanadu4411');
    }
  });
});

describe('learning on an end_user agent', () => {
  it("one person's statement never supersedes another person's fact (the writer looks up the same person's memories only)", async () => {
    for (const scope of ['agent', 'end_user'] as const) {
      const { service, caller, owner } = await learningService();
      const agentId = (await service.agents.create({ caller: owner, body: { agent_config: { role: 'r', objective: 'o', memory_scope: scope } } })).agent_id;
      await service.idle();
      const x = await caller('x@example.com');
      const y = await caller('y@example.com');
      const xThread = (await service.threads.create({ caller: x, agentId, body: {} })).thread_id;
      const yThread = (await service.threads.create({ caller: y, agentId, body: {} })).thread_id;
      await service.observe({ caller: x, agentId, threadId: xThread, body: { observations: [say('user', 'My locker code is 1111.', '2024-03-01T10:00:00Z')] } });
      await service.idle();
      await service.observe({ caller: y, agentId, threadId: yThread, body: { observations: [say('user', 'My new locker code is 2222.', '2024-03-05T10:00:00Z')] } });
      await service.idle();
      const xs = (await service.memories.list({ caller: x, agentId, query: { include_history: 'true' } })).memories;
      const mine = xs.find((memory) => memory.text.includes('1111'))!;
      if (scope === 'agent') expect(mine.valid_to, 'the shared default: the later statement replaced it').not.toBeNull();
      else expect(mine).toMatchObject({ valid_to: null, superseded_by: null });
    }
  });
});
