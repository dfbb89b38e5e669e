// Memory expiry (issue 42) through the service with a clock the test moves: an expired memory is
// gone from recall, list, get and search at that instant; include_expired shows it for audit.
import { refusal } from '../__fixtures__/refusal.js';
import { describe, expect, it } from 'vitest';
import { learningService } from '../__fixtures__/learning-service.js';
import { inMemoryMemoryIndex } from '../in-memory/in-memory-memory-index.js';

const say = (text: string, timestamp: string) => ({ speaker: 'Alice', timestamp, content: [{ type: 'text' as const, text }] });
const T0 = Date.parse('2026-01-01T00:00:00.000Z');

/** A service whose clock the test sets, with a few facts learned. */
async function world() {
  let now = T0;
  const setup = await learningService({ index: inMemoryMemoryIndex(), clock: { now: () => now } });
  await setup.observeSettled([
    say('My gym locker code is 4821 this month.', '2025-12-30T10:00:00Z'),
    say('I adopted a grey cat named Pixel last spring.', '2025-12-30T10:01:00Z'),
    say('My sister lives in Lisbon near the river.', '2025-12-30T10:02:00Z'),
    say('My trial of the Zephyr editor runs this week.', '2025-12-30T10:03:00Z'),
    say('I park on level 3 of the Orchard garage this week.', '2025-12-30T10:04:00Z'),
  ]);
  const { memories } = await setup.service.memories.list({ caller: setup.owner, agentId: setup.agentId, query: { limit: '100' } });
  const idOf = (word: string) => memories.find((memory) => memory.text.includes(word))!.memory_id;
  return { ...setup, idOf, at: (ms: number) => (now = T0 + ms) };
}

describe('memory expiry', () => {
  it('an expired memory leaves recall, list, get and search at that instant; include_expired shows it; clearing brings it back', async () => {
    const { service, owner, agentId, idOf, at } = await world();
    const locker = idOf('locker');
    const patched = await service.memories.update({ caller: owner, agentId, memoryId: locker, body: { expires_at: '2026-01-01T00:01:00+00:00' } });
    expect(patched.expires_at).toBe('2026-01-01T00:01:00.000Z');
    const recallText = async () => (await service.recall({ caller: owner, agentId, body: { query: 'What is my gym locker code?' } })).memory_context;
    const listed = async (query: Record<string, string> = {}) => (await service.memories.list({ caller: owner, agentId, query: { limit: '100', ...query } })).memories.map((memory) => memory.memory_id);
    const searched = async (include_expired?: boolean) =>
      (await service.memories.search({ caller: owner, agentId, body: { query: 'gym locker code', ...(include_expired === undefined ? {} : { include_expired }) } })).hits.map((hit) => hit.memory.memory_id);

    at(59_999);
    expect(await recallText()).toContain('4821');
    expect(await listed()).toContain(locker);
    expect(await searched()).toContain(locker);

    at(60_000);
    expect(await recallText()).not.toContain('4821');
    expect(await listed()).not.toContain(locker);
    expect(await searched()).not.toContain(locker);
    expect(await refusal(service.memories.get({ caller: owner, agentId, memoryId: locker }))).toMatchObject({ status: 404, code: 'not_found' });
    // For audit.
    expect(await listed({ include_expired: 'true' })).toContain(locker);
    expect(await searched(true)).toContain(locker);
    expect((await service.memories.get({ caller: owner, agentId, memoryId: locker, query: { include_expired: 'true' } })).expires_at).toBe('2026-01-01T00:01:00.000Z');

    await service.memories.update({ caller: owner, agentId, memoryId: locker, body: { expires_at: null } });
    expect(await recallText()).toContain('4821');
    expect((await service.memories.get({ caller: owner, agentId, memoryId: locker })).expires_at).toBeNull();
  });

  it('the default writer gives a turn that bounds what it says an expiry, read against the turn time; the memory goes then', async () => {
    let now = Date.parse('2026-03-02T12:00:00Z');
    const setup = await learningService({ index: inMemoryMemoryIndex(), clock: { now: () => now } });
    await setup.observeSettled([say('The office door code is 5521 and it is valid until Friday.', '2026-03-02T10:00:00Z'), say('We waited until Friday for the parcel.', '2026-03-02T10:01:00Z')]);
    const { memories } = await setup.service.memories.list({ caller: setup.owner, agentId: setup.agentId });
    expect(Object.fromEntries(memories.map((memory) => [memory.text.slice(0, 14), memory.expires_at]))).toEqual({ 'The office doo': '2026-03-07T00:00:00.000Z', 'We waited unti': null });
    const recalled = async () => (await setup.service.recall({ caller: setup.owner, agentId: setup.agentId, body: { query: 'What is the office door code?' } })).memory_context;
    expect(await recalled()).toContain('5521');
    now = Date.parse('2026-03-07T00:00:00Z');
    expect(await recalled()).not.toContain('5521');
  });

  it('an observation with expires_at gives its memories that expiry (over one the writer reads); a bad one is 422', async () => {
    let now = Date.parse('2026-03-02T12:00:00Z');
    const setup = await learningService({ index: inMemoryMemoryIndex(), clock: { now: () => now } });
    await setup.observeSettled([
      { ...say('My hotel room is 512.', '2026-03-02T10:00:00Z'), expires_at: '2026-03-05T11:00:00+01:00' },
      { ...say('The code is valid until Friday.', '2026-03-02T10:01:00Z'), expires_at: '2026-03-04T00:00:00Z' },
      say('My sister lives in Lisbon.', '2026-03-02T10:02:00Z'),
    ]);
    const { memories } = await setup.service.memories.list({ caller: setup.owner, agentId: setup.agentId });
    expect(Object.fromEntries(memories.map((memory) => [memory.text.slice(0, 9), memory.expires_at]))).toEqual({
      'My hotel ': '2026-03-05T10:00:00.000Z',
      'The code ': '2026-03-04T00:00:00.000Z',
      'My sister': null,
    });
    now = Date.parse('2026-03-05T10:00:00Z');
    const left = (await setup.service.memories.list({ caller: setup.owner, agentId: setup.agentId })).memories.map((memory) => memory.text);
    expect(left).toEqual(['My sister lives in Lisbon.']);
    for (const expires_at of ['Friday', '2026-03-05', 12]) {
      const refused = await refusal(setup.service.observe({ caller: setup.owner, agentId: setup.agentId, threadId: setup.threadId, body: { observations: [{ ...say('x', '2026-03-02T10:00:00Z'), expires_at } as never] } }));
      expect(refused, String(expires_at)).toMatchObject({ status: 422, code: 'invalid_request' });
    }
  });

  it('refuses a bad PATCH body with invalid_request and a sentence naming expires_at; an unknown memory is 404', async () => {
    const { service, owner, agentId, idOf } = await world();
    const memoryId = idOf('Pixel');
    for (const body of [{ expires_at: 'next Friday' }, { expires_at: 12 }, {}, { expires_at: null, colour: 'x' }]) {
      const refused = await refusal(service.memories.update({ caller: owner, agentId, memoryId, body: body as never }));
      expect(refused).toMatchObject({ status: 422, code: 'invalid_request' });
    }
    expect((await refusal(service.memories.update({ caller: owner, agentId, memoryId, body: { expires_at: 'next Friday' } }))).message).toContain('expires_at');
    expect(await refusal(service.memories.update({ caller: owner, agentId, memoryId: 'mem_00000000000000000000000000', body: { expires_at: null } }))).toMatchObject({ status: 404, code: 'not_found' });
  });

  it('stale-hit@5 is 0 on a fixture of expired and forgotten memories, and would not be without expiry and forgetting', async () => {
    const { service, owner, agentId, idOf, at } = await world();
    // Each question is answered by a memory that expires or is forgotten; top 5 of the memories search is "top k".
    const expiring = [
      { question: 'What is my gym locker code?', word: 'locker' },
      { question: 'Which editor am I trialling?', word: 'Zephyr' },
      { question: 'Where do I park my car?', word: 'Orchard' },
    ];
    const forgetting = [
      { question: 'What is the name of my cat?', word: 'Pixel' },
      { question: 'Where does my sister live?', word: 'Lisbon' },
    ];
    const fixture = [...expiring, ...forgetting];
    for (const { word } of expiring) await service.memories.update({ caller: owner, agentId, memoryId: idOf(word), body: { expires_at: '2026-01-08T00:00:00Z' } });
    const gone = new Set(fixture.map(({ word }) => idOf(word)));
    const staleHitAt5 = async () => {
      let stale = 0;
      for (const { question } of fixture) {
        const { hits } = await service.memories.search({ caller: owner, agentId, body: { query: question, limit: 5 } });
        const recalled = await service.recall({ caller: owner, agentId, body: { query: question } });
        // The memory context recall gives (what chat would see) counts too.
        const inContext = fixture.some(({ word }) => recalled.memory_context.includes(word));
        if (hits.some((hit) => gone.has(hit.memory.memory_id)) || inContext) stale++;
      }
      return stale / fixture.length;
    };
    // Before they expire or are forgotten, the questions do find them: the measure can see a stale hit.
    expect(await staleHitAt5()).toBe(1);
    at(7 * 24 * 3600_000);
    for (const { word } of forgetting) await service.memories.forget({ caller: owner, agentId, memoryId: idOf(word), body: { reason: 'asked to' } });
    const measured = await staleHitAt5();
    console.info(`stale-hit@5 on ${fixture.length} questions after expiry and forgetting: ${measured}`);
    expect(measured).toBe(0);
  });
});
