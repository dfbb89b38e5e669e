import { refusal } from '../__fixtures__/refusal.js';
import { describe, expect, it } from 'vitest';
import { learningService } from '../__fixtures__/learning-service.js';
import { endUserId } from '../ids/ids.js';
import { inMemoryMemoryIndex } from '../in-memory/in-memory-memory-index.js';

/** The refusal a call ends in: its status and code (or the thrown value when it is no ServiceError). */
const say = (speaker: string, text: string, timestamp: string) => ({ speaker, timestamp, content: [{ type: 'text' as const, text }] });

/** An organization with billing on, an agent, two people's threads and a few memories in each. */
async function world() {
  const index = inMemoryMemoryIndex();
  const setup = await learningService({ index });
  const { service, agentId, organizationId, caller } = setup;
  await service.admin.configureBilling({ organizationId, enabled: true });
  await service.admin.addCredits({ organizationId, amount: '100' });
  const alice = await caller('alice@example.com');
  const bob = await caller('bob@example.com');
  const aliceThread = (await service.threads.create({ caller: alice, agentId, body: {} })).thread_id;
  const bobThread = (await service.threads.create({ caller: bob, agentId, body: {} })).thread_id;
  await setup.observeSettled([say('Alice', 'I adopted a grey cat named Pixel last spring.', '2024-03-10T10:00:00Z'), say('Alice', 'My sister lives in Lisbon near the river.', '2024-03-11T10:00:00Z')], { caller: alice, threadId: aliceThread });
  await setup.observeSettled([say('Bob', 'I am training for the Berlin marathon in September.', '2024-05-01T09:00:00Z')], { caller: bob, threadId: bobThread });
  const other = await service.admin.createOrganization({ name: 'Other' });
  const { key } = await service.admin.createKey({ organizationId: other.organizationId });
  const stranger = await service.authenticate({ authorization: `Bearer ${key}`, endUser: undefined, secFetchSite: undefined, requestId: 'req_other' });
  const strangerAgent = (await service.agents.create({ caller: stranger, body: { agent_config: { role: 'r', objective: 'o' } } })).agent_id;
  await service.idle();
  return { ...setup, index, alice, bob, aliceThread, bobThread, stranger, strangerAgent };
}

describe('memories.list', () => {
  it('lists newest first with filters, pages with a cursor that covers every memory once', async () => {
    const { service, owner, agentId, aliceThread } = await world();
    const all = await service.memories.list({ caller: owner, agentId, query: { limit: '100' } });
    expect(all.memories.length).toBeGreaterThanOrEqual(3);
    const learned = all.memories.map((memory) => memory.learned_at);
    expect([...learned].sort().reverse()).toEqual(learned);

    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await service.memories.list({ caller: owner, agentId, query: { limit: '1', ...(cursor ? { cursor } : {}) } });
      expect(page.memories.length).toBeLessThanOrEqual(1);
      seen.push(...page.memories.map((memory) => memory.memory_id));
      cursor = page.next_cursor ?? undefined;
    } while (cursor);
    expect(seen).toEqual(all.memories.map((memory) => memory.memory_id));

    const inThread = await service.memories.list({ caller: owner, agentId, query: { thread_id: aliceThread } });
    expect(inThread.memories.length).toBeGreaterThan(0);
    expect(inThread.memories.every((memory) => memory.source.thread_id === aliceThread)).toBe(true);
    const byText = await service.memories.list({ caller: owner, agentId, query: { text_contains: 'PIXEL' } });
    expect(byText.memories.map((memory) => memory.text).join(' ')).toContain('Pixel');
    expect(byText.memories.every((memory) => memory.text.toLowerCase().includes('pixel'))).toBe(true);
    const bySpeaker = await service.memories.list({ caller: owner, agentId, query: { speaker: 'Bob' } });
    expect(bySpeaker.memories.length).toBeGreaterThan(0);
    expect(bySpeaker.memories.every((memory) => memory.speaker === 'Bob')).toBe(true);
    const occurred = await service.memories.list({ caller: owner, agentId, query: { occurred_after: '2024-04-01T00:00:00Z' } });
    expect(occurred.memories.every((memory) => memory.occurred_at! >= '2024-04-01')).toBe(true);
    expect(occurred.memories.some((memory) => memory.speaker === 'Bob')).toBe(true);
  });

  it('refuses bad input with the spec error shape: 400 for limit, 422 for the rest', async () => {
    const { service, owner, agentId, strangerAgent, stranger } = await world();
    expect(await refusal(service.memories.list({ caller: owner, agentId, query: { limit: '0' } }))).toMatchObject({ status: 400, code: 'invalid_request' });
    expect(await refusal(service.memories.list({ caller: owner, agentId, query: { limit: '101' } }))).toMatchObject({ status: 400, code: 'invalid_request' });
    expect(await refusal(service.memories.list({ caller: owner, agentId, query: { colour: 'red' } as never }))).toMatchObject({ status: 422, code: 'invalid_request' });
    expect(await refusal(service.memories.list({ caller: owner, agentId, query: { learned_after: 'yesterday' } }))).toMatchObject({ status: 422, code: 'invalid_request' });
    expect(await refusal(service.memories.list({ caller: owner, agentId, query: { thread_id: 'thread_nope' } }))).toMatchObject({ status: 422, code: 'invalid_request' });
    expect(await refusal(service.memories.list({ caller: owner, agentId, query: { cursor: 'garbage!' } }))).toMatchObject({ status: 422, code: 'invalid_request' });

    const first = await service.memories.list({ caller: owner, agentId, query: { limit: '1' } });
    const cursor = first.next_cursor!;
    expect(cursor).toEqual(expect.any(String));
    // The same cursor with other filters, or on another agent: 422 with a sentence.
    const otherFilters = await refusal(service.memories.list({ caller: owner, agentId, query: { limit: '1', cursor, speaker: 'Bob' } }));
    expect(otherFilters).toMatchObject({ status: 422, code: 'invalid_request' });
    expect(otherFilters.message).toMatch(/cursor/);
    const secondAgent = (await service.agents.create({ caller: owner, body: { agent_config: { role: 'r', objective: 'o' } } })).agent_id;
    await service.idle();
    expect(await refusal(service.memories.list({ caller: owner, agentId: secondAgent, query: { cursor } }))).toMatchObject({ status: 422, code: 'invalid_request' });
    expect(await refusal(service.memories.list({ caller: stranger, agentId: strangerAgent, query: { cursor } }))).toMatchObject({ status: 422, code: 'invalid_request' });
  });
});

describe('memories validity and people', () => {
  it('lists and searches current memories unless include_history or as_of asks for what was true before', async () => {
    const { service, owner, agentId, index } = await world();
    const [old] = (await service.memories.list({ caller: owner, agentId, query: { text_contains: 'Lisbon' } })).memories;
    const [newer] = (await service.memories.list({ caller: owner, agentId, query: { text_contains: 'Pixel' } })).memories;
    await index.update({ agentId, patches: [{ id: old!.memory_id, validTo: '2024-06-01T00:00:00.000Z', supersededBy: newer!.memory_id }] });

    expect((await service.memories.list({ caller: owner, agentId, query: { text_contains: 'Lisbon' } })).memories).toEqual([]);
    const history = await service.memories.list({ caller: owner, agentId, query: { text_contains: 'Lisbon', include_history: 'true' } });
    expect(history.memories[0]).toMatchObject({ memory_id: old!.memory_id, valid_to: '2024-06-01T00:00:00.000Z', superseded_by: newer!.memory_id });

    const query = 'Where does the sister live, Lisbon?';
    const now = await service.memories.search({ caller: owner, agentId, body: { query } });
    expect(now.hits.map((hit) => hit.memory.memory_id)).not.toContain(old!.memory_id);
    const then = await service.memories.search({ caller: owner, agentId, body: { query, as_of: '2024-04-01T00:00:00Z' } });
    expect(then.hits[0]!.memory.memory_id).toBe(old!.memory_id);
  });

  it("filters by end_user_id: that person's threads only", async () => {
    const { service, owner, agentId, organizationId, bobThread } = await world();
    const bobs = await service.memories.list({ caller: owner, agentId, query: { end_user_id: endUserId(organizationId, 'bob@example.com') } });
    expect(bobs.memories.length).toBeGreaterThan(0);
    expect(bobs.memories.every((memory) => memory.source.thread_id === bobThread)).toBe(true);
    const nobody = await service.memories.list({ caller: owner, agentId, query: { end_user_id: endUserId(organizationId, 'nobody') } });
    expect(nobody).toEqual({ agent_id: agentId, memories: [], next_cursor: null });
  });
});

describe('memories.get', () => {
  it('shows text, dates, the turn it came from, the job and writer, and the credits its learning cost', async () => {
    const { service, owner, agentId, aliceThread } = await world();
    const [listed] = (await service.memories.list({ caller: owner, agentId, query: { text_contains: 'Pixel' } })).memories;
    const memory = await service.memories.get({ caller: owner, agentId, memoryId: listed!.memory_id });
    expect(memory).toMatchObject({
      memory_id: listed!.memory_id,
      agent_id: agentId,
      speaker: 'Alice',
      valid_to: null,
      superseded_by: null,
      suspicious: false,
      expires_at: null,
      source: { kind: 'turn', thread_id: aliceThread, turn_index: 0 },
      writer: expect.any(String),
    });
    expect(memory.text).toContain('Pixel');
    expect(memory.job_id).toBe(memory.source.observation_id);
    expect(memory.learned_at).toEqual(expect.any(String));
    expect(Number(memory.learning_credits)).toBeGreaterThan(0);
    // The default writer keeps the turn verbatim: the span is where the memory sits in the turn.
    expect(memory.span).not.toBeNull();
    expect('I adopted a grey cat named Pixel last spring.'.slice(memory.span!.start, memory.span!.end)).toBe(memory.text);
  });
});

describe('memories.search', () => {
  it("ranks as chat's retrieval does and explains every hit's score by signal", async () => {
    const { service, owner, agentId } = await world();
    const query = 'What is the name of the cat Alice adopted?';
    const result = await service.memories.search({ caller: owner, agentId, body: { query, limit: 5 } });
    const retrieved = await service.retrieve({ caller: owner, agentId, query });
    expect(result.hits.map((hit) => hit.memory.memory_id)).toEqual(retrieved.ranked.slice(0, 5).map((item) => item.record.id));
    expect(result.memory_context).toBe(retrieved.memoryContext);
    expect(result.hits[0]!.memory.text).toContain('Pixel');
    for (const [i, hit] of result.hits.entries()) {
      expect(hit.rank).toBe(i + 1);
      const sum = Object.values(hit.signals).reduce((total, value) => total + value, 0);
      expect(sum).toBeCloseTo(hit.score, 10);
    }
    expect(result.hits[0]!.signals.full_text).toBeGreaterThan(0);
    expect(result.hits[0]!.in_memory_context).toBe(true);
  });

  it('refuses a bad body with 422', async () => {
    const { service, owner, agentId } = await world();
    for (const body of [{}, { query: '' }, { query: 'x', limit: 0 }, { query: 'x', limit: 101 }, { query: 'x', as_of: 'soon' }, { query: 'x', extra: 1 }]) {
      expect(await refusal(service.memories.search({ caller: owner, agentId, body: body as never }))).toMatchObject({ status: 422, code: 'invalid_request' });
    }
  });
});

describe('memories.delete', () => {
  it('removes one memory: it is no longer got, listed or retrieved', async () => {
    const { service, owner, agentId } = await world();
    const [target] = (await service.memories.list({ caller: owner, agentId, query: { text_contains: 'Lisbon' } })).memories;
    await service.memories.delete({ caller: owner, agentId, memoryId: target!.memory_id });
    expect(await refusal(service.memories.get({ caller: owner, agentId, memoryId: target!.memory_id }))).toMatchObject({ status: 404, code: 'not_found' });
    expect((await service.memories.list({ caller: owner, agentId, query: { text_contains: 'Lisbon' } })).memories).toEqual([]);
    const search = await service.memories.search({ caller: owner, agentId, body: { query: 'Where does the sister live? Lisbon' } });
    expect(search.hits.map((hit) => hit.memory.memory_id)).not.toContain(target!.memory_id);
    expect(await refusal(service.memories.delete({ caller: owner, agentId, memoryId: target!.memory_id }))).toMatchObject({ status: 404, code: 'not_found' });
  });
});

describe('memories tenancy', () => {
  it("answers 404 with no hint for another organization's ids and another person's memories", async () => {
    const { service, owner, agentId, alice, bob, aliceThread, stranger, strangerAgent } = await world();
    const [aliceMemory] = (await service.memories.list({ caller: alice, agentId, query: { text_contains: 'Pixel' } })).memories;
    const memoryId = aliceMemory!.memory_id;

    // Another organization: our agent does not exist for it, and our memory is not in its agent.
    const agentNotFound = { status: 404, code: 'agent_not_found' };
    expect(await refusal(service.memories.list({ caller: stranger, agentId }))).toMatchObject(agentNotFound);
    expect(await refusal(service.memories.get({ caller: stranger, agentId, memoryId }))).toMatchObject(agentNotFound);
    expect(await refusal(service.memories.search({ caller: stranger, agentId, body: { query: 'cat' } }))).toMatchObject(agentNotFound);
    expect(await refusal(service.memories.delete({ caller: stranger, agentId, memoryId }))).toMatchObject(agentNotFound);
    const unknown = await refusal(service.memories.get({ caller: stranger, agentId: strangerAgent, memoryId: 'mem_00000000000000000000000000' }));
    const foreign = await refusal(service.memories.get({ caller: stranger, agentId: strangerAgent, memoryId }));
    expect({ ...foreign, message: foreign.message.replace(memoryId, 'mem_00000000000000000000000000') }).toEqual(unknown);
    expect(await refusal(service.memories.delete({ caller: stranger, agentId: strangerAgent, memoryId }))).toMatchObject({ status: 404, code: 'not_found' });
    expect(await refusal(service.memories.get({ caller: owner, agentId, memoryId: 'not-an-id' }))).toMatchObject({ status: 404, code: 'not_found' });

    // Another person of the same organization (X-SP-End-User): Alice's memories do not exist for Bob.
    const bobs = await service.memories.list({ caller: bob, agentId, query: { limit: '100' } });
    expect(bobs.memories.length).toBeGreaterThan(0);
    expect(bobs.memories.every((memory) => memory.speaker === 'Bob')).toBe(true);
    expect(await refusal(service.memories.get({ caller: bob, agentId, memoryId }))).toMatchObject({ status: 404, code: 'not_found' });
    expect(await refusal(service.memories.delete({ caller: bob, agentId, memoryId }))).toMatchObject({ status: 404, code: 'not_found' });
    expect(await refusal(service.memories.list({ caller: bob, agentId, query: { thread_id: aliceThread } }))).toMatchObject({ status: 404, code: 'thread_not_found' });
    const bobSearch = await service.memories.search({ caller: bob, agentId, body: { query: 'Pixel the grey cat' } });
    expect(bobSearch.hits.every((hit) => hit.memory.speaker === 'Bob')).toBe(true);
    expect(bobSearch.memory_context).not.toContain('Pixel');
    // The organization itself (no X-SP-End-User) reaches both.
    expect((await service.memories.get({ caller: owner, agentId, memoryId })).memory_id).toBe(memoryId);
    expect((await service.memories.get({ caller: alice, agentId, memoryId })).memory_id).toBe(memoryId);
  });
});
