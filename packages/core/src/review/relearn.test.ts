import { describe, expect, it } from 'vitest';
import { refusal } from '../__fixtures__/refusal.js';
import { createMemoryService } from '../create-memory-service.js';
import { inMemoryMemoryIndex } from '../in-memory/in-memory-memory-index.js';
import { inMemoryStore } from '../in-memory/store/index.js';
import { defaultMemoryWriter } from '../memory/default-memory-writer.js';
import type { MemoryWriter } from '../ports/memory-writer.js';
import type { MemoryIndex } from '../ports/memory-index.js';
import { silentLogger } from '../service/logger.js';
import { paraphrasingWriter } from '../__fixtures__/paraphrasing-writer.js';

// Re-learning (issue 43): turns learned by one writer, learned again by the next service's writer
// (a test double behind the MemoryWriter port that paraphrases one sentence), each changed memory
// proposed pending review.

const say = (speaker: string, text: string, timestamp: string) => ({ speaker, timestamp, content: [{ type: 'text' as const, text }] });

const paraphrasing = () => paraphrasingWriter('paraphrasing-test-v2', (speaker, city) => `${speaker} lives in ${city} since March.`);

/** The in-memory index, whose next `upsert` after `failing.arm()` throws once (a database that goes away for a moment). */
function flakyIndex() {
  const inner = inMemoryMemoryIndex();
  const control = { armed: false, failures: 0 };
  const index = new Proxy(inner, {
    get: (target, name, receiver) =>
      name === 'upsert'
        ? async (request: Parameters<MemoryIndex['upsert']>[0]) => {
            if (control.armed) {
              control.armed = false;
              control.failures += 1;
              throw new Error('the database went away');
            }
            return inner.upsert(request);
          }
        : Reflect.get(target, name, receiver),
  });
  return { index, control };
}

async function learnedThenRelearning(writer: MemoryWriter = paraphrasing(), options: { failNextUpsert?: boolean } = {}) {
  const store = inMemoryStore();
  const { index, control } = flakyIndex();
  const first = createMemoryService({ store, index, logger: silentLogger });
  await first.start();
  const org = await first.admin.createOrganization({ name: 'Acme' });
  let owner = await first.as(org.organizationId);
  const { agent_id: agentId } = await first.agents.create({ caller: owner, body: { agent_config: { role: 'assistant', objective: 'remember' } } });
  await first.idle();
  const threads: string[] = [];
  const lines = [
    [say('Alice', 'Big news: I moved to Berlin in March.', '2026-03-10T10:00:00Z')],
    [say('Alice', 'My gym locker number is 4417.', '2026-03-11T10:00:00Z')],
    [say('Bob', 'I play the cello on Sundays.', '2026-03-12T10:00:00Z')],
  ];
  const { thread_id: threadId } = await first.threads.create({ caller: owner, agentId, body: {} });
  threads.push(threadId);
  for (const observations of lines) {
    await first.observe({ caller: owner, agentId, threadId, body: { observations } });
    await first.idle();
  }
  await first.stop();
  const service = createMemoryService({ store, index, logger: silentLogger, writer });
  await service.start();
  owner = await service.as(org.organizationId);
  control.armed = options.failNextUpsert === true;
  return { service, owner, agentId, threadId, organizationId: org.organizationId, index: control };
}

describe('review.relearn', () => {
  it('proposes, pending review, each memory the current writer writes differently, replacing the turn’s current one once approved', async () => {
    const { service, owner, agentId, threadId } = await learnedThenRelearning();
    const relearned = await service.review.relearn({ caller: owner, agentId, body: { thread_id: threadId } });
    expect(relearned).toMatchObject({ agent_id: agentId, writer: 'paraphrasing-test-v2', turns_read: 3, unchanged_turns: 2, credits: '0', next_cursor: null });
    expect(relearned.proposals).toHaveLength(1);
    const [proposal] = relearned.proposals;
    const [old] = (await service.memories.list({ caller: owner, agentId, query: { text_contains: 'moved to Berlin' } })).memories;
    expect(proposal).toMatchObject({ state: 'pending', held_as: 'relearn', supersedes: [old!.memory_id], memory: { text: 'Alice lives in Berlin since March.', writer: 'paraphrasing-test-v2', source: { turn_index: 0 } } });
    // Nothing current changed yet.
    expect((await service.memories.list({ caller: owner, agentId, query: { limit: '100' } })).memories.map((memory) => memory.text).sort()).toEqual(['Big news: I moved to Berlin in March.', 'I play the cello on Sundays.', 'My gym locker number is 4417.']);
    // A second call proposes nothing twice.
    expect((await service.review.relearn({ caller: owner, agentId, body: {} })).proposals).toEqual([]);
    expect((await service.review.list({ caller: owner, agentId })).items).toHaveLength(1);

    await service.review.approve({ caller: owner, agentId, memoryId: proposal!.memory.memory_id });
    const texts = (await service.memories.list({ caller: owner, agentId, query: { limit: '100' } })).memories.map((memory) => memory.text).sort();
    expect(texts).toEqual(['Alice lives in Berlin since March.', 'I play the cello on Sundays.', 'My gym locker number is 4417.']);
    expect((await service.memories.get({ caller: owner, agentId, memoryId: old!.memory_id })).superseded_by).toBe(proposal!.memory.memory_id);
    // Learned again by the same writer now: the turn reads as its current memory does.
    const again = await service.review.relearn({ caller: owner, agentId, body: {} });
    expect(again).toMatchObject({ unchanged_turns: 3, proposals: [] });
  });

  it('a call cut off after the marks, before the memories, proposes them on the next call', async () => {
    const { service, owner, agentId, index } = await learnedThenRelearning(paraphrasing(), { failNextUpsert: true });
    await expect(service.review.relearn({ caller: owner, agentId, body: {} })).rejects.toThrow('the database went away');
    expect((await service.review.list({ caller: owner, agentId })).items).toEqual([]);
    const again = await service.review.relearn({ caller: owner, agentId, body: {} });
    expect(again.proposals.map((item) => item.memory.text)).toEqual(['Alice lives in Berlin since March.']);
    expect((await service.review.list({ caller: owner, agentId })).items).toHaveLength(1);
    expect(index.failures).toBe(1);
  });

  it('does not learn again a turn a person forgot a memory of', async () => {
    const { service, owner, agentId } = await learnedThenRelearning();
    const [berlin] = (await service.memories.list({ caller: owner, agentId, query: { text_contains: 'moved to Berlin' } })).memories;
    await service.memories.forget({ caller: owner, agentId, memoryId: berlin!.memory_id, body: { reason: 'Alice asked' } });
    expect(await service.review.relearn({ caller: owner, agentId, body: {} })).toMatchObject({ turns_read: 3, unchanged_turns: 2, proposals: [] });
  });

  it('with the writer that learned them, every turn is unchanged and nothing is proposed, also for memories waiting in the queue', async () => {
    const { service, owner, agentId, threadId } = await learnedThenRelearning(defaultMemoryWriter());
    expect(await service.review.relearn({ caller: owner, agentId, body: {} })).toMatchObject({ turns_read: 3, unchanged_turns: 3, proposals: [] });
    await service.agents.update({ caller: owner, agentId, body: { agent_config: { role: 'assistant', objective: 'remember', review_mode: 'all' } } });
    await service.observe({ caller: owner, agentId, threadId, body: { observations: [say('Alice', 'My dentist is Dr Okafor on Elm Street.', '2026-03-13T10:00:00Z')] } });
    await service.idle();
    const [waiting] = (await service.review.list({ caller: owner, agentId })).items;
    await service.review.edit({ caller: owner, agentId, memoryId: waiting!.memory.memory_id, body: { text: 'Alice’s dentist: Dr Okafor, Elm Street.' } });
    expect(await service.review.relearn({ caller: owner, agentId, body: {} })).toMatchObject({ turns_read: 4, unchanged_turns: 4, proposals: [] });
  });

  it('reads whole jobs up to max_turns and continues from next_cursor; refuses a bad cursor, an unknown thread, bad bodies and a person', async () => {
    const { service, owner, agentId, organizationId } = await learnedThenRelearning();
    const first = await service.review.relearn({ caller: owner, agentId, body: { max_turns: 1 } });
    expect(first).toMatchObject({ turns_read: 1, proposals: [{ memory: { text: 'Alice lives in Berlin since March.' } }] });
    expect(first.next_cursor).not.toBeNull();
    const second = await service.review.relearn({ caller: owner, agentId, body: { max_turns: 2000, cursor: first.next_cursor! } });
    expect(second).toMatchObject({ turns_read: 2, unchanged_turns: 2, next_cursor: null });
    expect(await refusal(service.review.relearn({ caller: owner, agentId, body: { cursor: 'obs_nope' } }))).toMatchObject({ status: 422, code: 'invalid_request' });
    expect(await refusal(service.review.relearn({ caller: owner, agentId, body: { thread_id: 'thread_01ARZ3NDEKTSV4RRFFQ69G5FAV' } }))).toMatchObject({ status: 404, code: 'thread_not_found' });
    for (const body of [{ max_turns: 0 }, { max_turns: 2001 }, { thread: 'x' }]) {
      expect(await refusal(service.review.relearn({ caller: owner, agentId, body }))).toMatchObject({ status: 422 });
    }
    expect(await refusal(service.review.relearn({ caller: await service.as(organizationId, { endUser: 'eu_0123456789abcdef0123456789abcdef' }), agentId, body: {} }))).toMatchObject({ status: 403, code: 'forbidden' });
  });
});
