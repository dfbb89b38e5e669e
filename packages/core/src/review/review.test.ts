import { describe, expect, it } from 'vitest';
import { learningService } from '../__fixtures__/learning-service.js';
import { refusal } from '../__fixtures__/refusal.js';
import { paraphrasingWriter } from '../__fixtures__/paraphrasing-writer.js';
import { splitLines } from '../export/format.js';
import { inMemoryStore } from '../in-memory/store/index.js';
import type { MemoryMarkStore } from '../ports/store/index.js';
import { hiddenCharacters, isInferred } from './proposals.js';

// The review queue (issue 43) on the in-memory store and index, with a writer that paraphrases one
// sentence as a model writer would (a test double behind the MemoryWriter port).

const DAY = 86_400_000;
const say = (speaker: string, text: string, timestamp: string) => ({ speaker, timestamp, content: [{ type: 'text' as const, text }] });

const paraphrasing = () => paraphrasingWriter('paraphrasing-test', (speaker, city) => `${speaker} lives in ${city}.`);

async function reviewing(mode: 'inferred' | 'all', options: { now?: () => number } = {}) {
  let now = Date.parse('2026-06-01T12:00:00Z');
  const learning = await learningService({ writer: paraphrasing(), clock: { now: options.now ?? (() => now) } });
  const { service, owner, agentId } = learning;
  await service.agents.update({ caller: owner, agentId, body: { agent_config: { role: 'assistant', objective: 'remember', review_mode: mode } } });
  const recall = async (query: string) => (await service.recall({ caller: owner, agentId, body: { query } })).memory_context;
  const texts = async () => (await service.memories.list({ caller: owner, agentId, query: { limit: '100' } })).memories.map((memory) => memory.text);
  const queue = async (state?: 'pending' | 'approved' | 'declined') => service.review.list({ caller: owner, agentId, query: state ? { state } : {} });
  return { ...learning, recall, texts, queue, advance: (ms: number) => (now += ms) };
}

describe('review queue', () => {
  it('holds an inferred memory out of chat, recall, search and the list until approved; undo hides it again', async () => {
    const { service, owner, agentId, observeSettled, recall, texts, queue } = await reviewing('inferred');
    await observeSettled([say('Alice', 'Big news: I moved to Berlin in March.', '2026-05-10T10:00:00Z'), say('Alice', 'My locker number at the gym is 4417.', '2026-05-10T10:01:00Z')]);
    // The verbatim memory is learned as always; the paraphrase waits.
    expect(await texts()).toEqual(['My locker number at the gym is 4417.']);
    expect(await recall('Where does Alice live? Berlin')).not.toContain('Berlin');
    expect((await service.memories.search({ caller: owner, agentId, body: { query: 'Alice lives in Berlin' } })).hits.map((hit) => hit.memory.text)).not.toContain('Alice lives in Berlin.');
    const pending = await queue();
    expect(pending).toMatchObject({ agent_id: agentId, review_mode: 'inferred', state: 'pending', next_cursor: null });
    expect(pending.items).toHaveLength(1);
    const [item] = pending.items;
    expect(item).toMatchObject({ state: 'pending', held_as: 'inferred', supersedes: [], superseded: [], decisions: [], hidden_characters: [] });
    expect(item!.memory).toMatchObject({ text: 'Alice lives in Berlin.', review_state: 'pending', expires_at: null, span: null, writer: 'paraphrasing-test' });

    const approved = await service.review.approve({ caller: owner, agentId, memoryId: item!.memory.memory_id });
    expect(approved).toMatchObject({ state: 'approved', memory: { review_state: 'approved', expires_at: null } });
    expect(approved.decisions).toEqual([{ action: 'approve', at: expect.any(String), by: owner.keyId, reason: null }]);
    expect(await texts()).toContain('Alice lives in Berlin.');
    expect(await recall('Where does Alice live? Berlin')).toContain('Alice lives in Berlin.');
    expect((await queue()).items).toEqual([]);
    expect((await queue('approved')).items.map((entry) => entry.memory.memory_id)).toEqual([item!.memory.memory_id]);

    const undone = await service.review.undo({ caller: owner, agentId, memoryId: item!.memory.memory_id });
    expect(undone.state).toBe('pending');
    expect(undone.decisions.map((decision) => decision.action)).toEqual(['approve', 'undo']);
    expect(await texts()).toEqual(['My locker number at the gym is 4417.']);
    expect(await recall('Where does Alice live? Berlin')).not.toContain('Berlin');
  });

  it('with "all", a changed fact waits: the old value stays current until the new one is approved, and undo makes it current again', async () => {
    const { service, owner, agentId, observeSettled, recall, queue } = await reviewing('all');
    await service.agents.update({ caller: owner, agentId, body: { agent_config: { role: 'assistant', objective: 'remember', review_mode: 'off' } } });
    await observeSettled([say('Alice', 'My phone number is 555 0100.', '2026-05-10T10:00:00Z')]);
    // A PATCH that omits review_mode keeps it; this one names it.
    await service.agents.update({ caller: owner, agentId, body: { agent_config: { role: 'assistant', objective: 'remember', review_mode: 'all' } } });
    await service.agents.update({ caller: owner, agentId, body: { agent_config: { role: 'assistant', objective: 'remember more' } } });
    expect((await service.agents.get({ caller: owner, agentId })).agent_config.review_mode).toBe('all');
    await observeSettled([say('Alice', 'My phone number is 555 0199 now.', '2026-05-20T10:00:00Z')]);
    expect((await recall('What is Alice’s phone number?')).split('\n')[0]).toContain('555 0100');
    const [item] = (await queue()).items;
    expect(item).toMatchObject({ held_as: 'all', memory: { text: 'My phone number is 555 0199 now.' } });
    const [old] = (await service.memories.list({ caller: owner, agentId, query: { text_contains: '0100' } })).memories;
    expect(item!.supersedes).toEqual([old!.memory_id]);

    const approved = await service.review.approve({ caller: owner, agentId, memoryId: item!.memory.memory_id });
    expect(approved.superseded).toEqual([old!.memory_id]);
    expect((await recall('What is Alice’s phone number?')).split('\n')[0]).toContain('555 0199');
    const history = await service.memories.history({ caller: owner, agentId, memoryId: item!.memory.memory_id });
    expect(history.versions.map((version) => version.memory_id)).toEqual([old!.memory_id, item!.memory.memory_id]);

    await service.review.undo({ caller: owner, agentId, memoryId: item!.memory.memory_id });
    const restored = await service.memories.get({ caller: owner, agentId, memoryId: old!.memory_id });
    expect(restored).toMatchObject({ valid_to: null, superseded_by: null });
    expect((await recall('What is Alice’s phone number?')).split('\n')[0]).toContain('555 0100');
  });

  it('an approval whose mark could not be written is shown, still listed pending, and approving again completes it (undo then restores the old fact)', async () => {
    // The store's marks area fails one write, as a database that goes away for a moment does.
    const inner = inMemoryStore();
    let failNextPut = false;
    const marks: MemoryMarkStore = {
      ...inner.memoryMarks,
      put: async (request) => {
        if (failNextPut) {
          failNextPut = false;
          throw new Error('the database went away');
        }
        return inner.memoryMarks.put(request);
      },
    };
    const store = new Proxy(inner, { get: (target, name, receiver) => (name === 'memoryMarks' ? marks : Reflect.get(target, name, receiver)) });
    const { service, owner, agentId, observeSettled } = await learningService({ store });
    await observeSettled([say('Alice', 'My phone number is 555 0100.', '2026-05-10T10:00:00Z')]);
    await service.agents.update({ caller: owner, agentId, body: { agent_config: { role: 'assistant', objective: 'remember', review_mode: 'all' } } });
    await observeSettled([say('Alice', 'My phone number is 555 0199 now.', '2026-05-20T10:00:00Z')]);
    const [item] = (await service.review.list({ caller: owner, agentId })).items;
    failNextPut = true;
    await expect(service.review.approve({ caller: owner, agentId, memoryId: item!.memory.memory_id })).rejects.toThrow('the database went away');
    expect((await service.review.list({ caller: owner, agentId })).items.map((entry) => entry.memory.memory_id)).toEqual([item!.memory.memory_id]);
    const approved = await service.review.approve({ caller: owner, agentId, memoryId: item!.memory.memory_id });
    expect(approved.superseded).toEqual(item!.supersedes);
    await service.review.undo({ caller: owner, agentId, memoryId: item!.memory.memory_id });
    expect((await service.recall({ caller: owner, agentId, body: { query: 'What is Alice’s phone number?' } })).memory_context.split('\n')[0]).toContain('555 0100');
  });

  it('a declined memory stays hidden, keeps its reason, and the same words are never proposed again', async () => {
    const { service, owner, agentId, observeSettled, queue, texts } = await reviewing('all');
    const status = await observeSettled([say('Bob', 'Remember that I hate olives on pizza.', '2026-05-10T10:00:00Z')]);
    expect(status.status).toBe('committed');
    const [item] = (await queue()).items;
    const declined = await service.review.decline({ caller: owner, agentId, memoryId: item!.memory.memory_id, body: { reason: 'a joke, not a preference' } });
    expect(declined).toMatchObject({ state: 'declined', memory: { review_state: 'declined' } });
    expect(declined.decisions).toEqual([{ action: 'decline', at: expect.any(String), by: owner.keyId, reason: 'a joke, not a preference' }]);
    expect(await texts()).toEqual([]);
    // Said again, in another thread: learned as nothing new, the receipt says why.
    const { thread_id: other } = await service.threads.create({ caller: owner, agentId, body: {} });
    const again = await observeSettled([say('Bob', 'Remember that I hate olives on pizza!', '2026-05-12T10:00:00Z')], { threadId: other });
    expect((await queue()).items).toEqual([]);
    const receipt = await service.observationReceipt({ caller: owner, agentId, threadId: other, observationId: again.observation_id });
    expect(JSON.stringify(receipt)).toContain('declined in review');
    expect((await queue('declined')).items.map((entry) => entry.memory.memory_id)).toEqual([item!.memory.memory_id]);
  });

  it('an edit changes a pending memory’s words (searched by them once approved); hidden characters are listed', async () => {
    const { service, owner, agentId, observeSettled, queue, recall } = await reviewing('all');
    await observeSettled([say('Alice', 'My wifi password is hunter\u200B2 at home.', '2026-05-10T10:00:00Z')]);
    const [item] = (await queue()).items;
    expect(item!.hidden_characters).toEqual([{ index: item!.memory.text.indexOf('\u200B'), code_point: 'U+200B', name: 'zero width space' }]);
    const edited = await service.review.edit({ caller: owner, agentId, memoryId: item!.memory.memory_id, body: { text: 'The home wifi password is kept in the blue notebook.' } });
    expect(edited).toMatchObject({ state: 'pending', hidden_characters: [], memory: { text: 'The home wifi password is kept in the blue notebook.', span: null } });
    expect(edited.decisions.map((decision) => decision.action)).toEqual(['edit']);
    expect(await recall('blue notebook wifi')).not.toContain('notebook');
    await service.review.approve({ caller: owner, agentId, memoryId: item!.memory.memory_id });
    expect(await recall('blue notebook wifi')).toContain('The home wifi password is kept in the blue notebook.');
  });

  it('refuses what does not fit: wrong state 409, not held 404, a person 403, bad bodies and queries, an undo after the window, a duplicate approval', async () => {
    const { service, owner, agentId, caller, observeSettled, queue, advance } = await reviewing('all');
    await observeSettled([say('Alice', 'The team standup is at nine every morning.', '2026-05-10T10:00:00Z')]);
    const [item] = (await queue()).items;
    const memoryId = item!.memory.memory_id;
    expect(await refusal(service.review.undo({ caller: owner, agentId, memoryId }))).toMatchObject({ status: 409, code: 'conflict' });
    expect(await refusal(service.memories.update({ caller: owner, agentId, memoryId, body: { pinned: true } }))).toMatchObject({ status: 409, code: 'conflict' });
    expect(await refusal(service.memories.forget({ caller: owner, agentId, memoryId, body: { reason: 'no' } }))).toMatchObject({ status: 409, code: 'conflict' });
    expect(await refusal(service.review.edit({ caller: owner, agentId, memoryId, body: { text: '   ' } }))).toMatchObject({ status: 422 });
    expect(await refusal(service.review.edit({ caller: owner, agentId, memoryId, body: { text: 'x'.repeat(4001) } }))).toMatchObject({ status: 422 });
    expect(await refusal(service.review.decline({ caller: owner, agentId, memoryId, body: { reason: 'x'.repeat(501) } }))).toMatchObject({ status: 422 });
    expect(await refusal(service.review.decline({ caller: owner, agentId, memoryId, body: { because: 'x' } }))).toMatchObject({ status: 422 });
    expect(await refusal(service.review.list({ caller: owner, agentId, query: { state: 'maybe' } }))).toMatchObject({ status: 400, code: 'invalid_request' });
    expect(await refusal(service.review.list({ caller: owner, agentId, query: { limit: '0' } }))).toMatchObject({ status: 400 });
    expect(await refusal(service.review.list({ caller: owner, agentId, query: { limit: '101' } }))).toMatchObject({ status: 400 });
    expect(await refusal(service.review.approve({ caller: owner, agentId, memoryId: 'mem_missing' }))).toMatchObject({ status: 404, code: 'not_found' });
    expect(await refusal(service.review.list({ caller: await caller('eu_0123456789abcdef0123456789abcdef'), agentId }))).toMatchObject({ status: 403, code: 'forbidden' });
    expect(await refusal(service.review.list({ caller: owner, agentId: 'agent_01ARZ3NDEKTSV4RRFFQ69G5FAV' }))).toMatchObject({ status: 404, code: 'agent_not_found' });

    await service.review.approve({ caller: owner, agentId, memoryId });
    expect(await refusal(service.review.approve({ caller: owner, agentId, memoryId }))).toMatchObject({ status: 409, code: 'conflict' });
    expect(await refusal(service.review.edit({ caller: owner, agentId, memoryId, body: { text: 'Later.' } }))).toMatchObject({ status: 409, code: 'conflict' });
    // A memory never held for review is not in the queue.
    await service.agents.update({ caller: owner, agentId, body: { agent_config: { role: 'assistant', objective: 'remember', review_mode: 'off' } } });
    await observeSettled([say('Alice', 'My locker number at the gym is 4417.', '2026-05-11T10:00:00Z')]);
    const [plain] = (await service.memories.list({ caller: owner, agentId, query: { text_contains: 'locker' } })).memories;
    expect(plain!.review_state).toBeNull();
    expect(await refusal(service.review.approve({ caller: owner, agentId, memoryId: plain!.memory_id }))).toMatchObject({ status: 404, code: 'not_found' });

    // The undo window is the restore window (7 days by default): its last instant is refused.
    advance(7 * DAY);
    expect(await refusal(service.review.undo({ caller: owner, agentId, memoryId }))).toMatchObject({ status: 409, code: 'conflict' });

    // Approving words a current memory already says: 409, decline it instead. (A short sentence is
    // never merged into its duplicate when learned, so it reaches the queue.)
    await service.agents.update({ caller: owner, agentId, body: { agent_config: { role: 'assistant', objective: 'remember', review_mode: 'off' } } });
    await observeSettled([say('Alice', 'Locker 4417.', '2026-05-12T10:00:00Z')]);
    await service.agents.update({ caller: owner, agentId, body: { agent_config: { role: 'assistant', objective: 'remember', review_mode: 'all' } } });
    const { thread_id: other } = await service.threads.create({ caller: owner, agentId, body: {} });
    await observeSettled([say('Alice', 'Locker 4417.', '2026-05-13T10:00:00Z')], { threadId: other });
    const again = (await queue()).items.find((entry) => entry.memory.text === 'Locker 4417.');
    expect(again).toBeDefined();
    expect(await refusal(service.review.approve({ caller: owner, agentId, memoryId: again!.memory.memory_id }))).toMatchObject({ status: 409, code: 'conflict' });
  });

  it('an export carries the queue: the copy holds the same memories pending (re-keyed), and approving there shows them', async () => {
    const { service, owner, agentId, observeSettled, queue } = await reviewing('all');
    await service.agents.update({ caller: owner, agentId, body: { agent_config: { role: 'assistant', objective: 'remember', review_mode: 'off' } } });
    await observeSettled([say('Alice', 'My phone number is 555 0100.', '2026-05-10T10:00:00Z')]);
    await service.agents.update({ caller: owner, agentId, body: { agent_config: { role: 'assistant', objective: 'remember', review_mode: 'all' } } });
    await observeSettled([say('Alice', 'My phone number is 555 0199 now.', '2026-05-20T10:00:00Z'), say('Alice', 'Remember that I hate olives on pizza.', '2026-05-20T10:01:00Z')]);
    const olives = (await queue()).items.find((item) => item.memory.text.includes('olives'))!;
    await service.review.decline({ caller: owner, agentId, memoryId: olives.memory.memory_id, body: { reason: 'a joke' } });
    const lines: string[] = [];
    for await (const line of service.admin.exportAgent({ agentId })) lines.push(line);
    const org = await service.admin.createOrganization({ name: 'Other' });
    const other = await service.as(org.organizationId);
    const { agentId: copy } = await service.admin.importAgent({ organizationId: org.organizationId, open: () => splitLines([lines.join('')]) });
    const pending = (await service.review.list({ caller: other, agentId: copy })).items;
    expect(pending.map((item) => item.memory.text)).toEqual(['My phone number is 555 0199 now.']);
    const [oldCopy] = (await service.memories.list({ caller: other, agentId: copy, query: { text_contains: '0100' } })).memories;
    expect(pending[0]!.supersedes).toEqual([oldCopy!.memory_id]);
    expect((await service.review.list({ caller: other, agentId: copy, query: { state: 'declined' } })).items[0]!.decisions).toMatchObject([{ action: 'decline', reason: 'a joke' }]);
    await service.review.approve({ caller: other, agentId: copy, memoryId: pending[0]!.memory.memory_id });
    expect((await service.recall({ caller: other, agentId: copy, body: { query: 'What is Alice’s phone number?' } })).memory_context.split('\n')[0]).toContain('555 0199');
  });

  it('maintenance leaves the queue alone: sweep_expired does not take pending or declined memories for expired ones', async () => {
    const { service, owner, agentId, observeSettled, queue } = await reviewing('all');
    await observeSettled([say('Alice', 'The team standup is at nine every morning.', '2026-05-10T10:00:00Z'), say('Bob', 'Remember that I hate olives on pizza.', '2026-05-10T10:01:00Z')]);
    const [first] = (await queue()).items;
    await service.review.decline({ caller: owner, agentId, memoryId: first!.memory.memory_id, body: {} });
    for (const kind of ['sweep_expired', 'merge_duplicates', 'supersede_history'] as const) {
      expect((await service.maintenance.plan({ caller: owner, agentId, body: { kind } })).changes).toEqual([]);
    }
    expect((await queue()).items).toHaveLength(1);
    expect((await queue('declined')).items).toHaveLength(1);
  });

  it('pages the queue oldest first at the limit’s edges', async () => {
    const { service, owner, agentId, observeSettled } = await reviewing('all');
    await observeSettled(Array.from({ length: 3 }, (_, i) => say('Alice', `My favourite number number ${i + 1} is ${1000 + i * 37}.`, `2026-05-1${i}T10:00:00Z`)));
    const one = await service.review.list({ caller: owner, agentId, query: { limit: '1' } });
    expect(one.items).toHaveLength(1);
    const rest = await service.review.list({ caller: owner, agentId, query: { limit: '100', cursor: one.next_cursor! } });
    expect(rest.items).toHaveLength(2);
    expect(rest.next_cursor).toBeNull();
    expect(new Set([...one.items, ...rest.items].map((item) => item.memory.memory_id)).size).toBe(3);
  });
});

describe('review helpers', () => {
  it('isInferred: spaces aside, a slice of the source is not inferred; other words are', () => {
    expect(isInferred('I moved to  Berlin.', 'Big news: I moved to\nBerlin. Yay')).toBe(false);
    expect(isInferred('Alice lives in Berlin.', 'Big news: I moved to Berlin.')).toBe(true);
  });
  it('hiddenCharacters lists format and control characters (bidi, zero-width, tags), not tabs or line breaks', () => {
    expect(hiddenCharacters('a\u202Eb\tc\nd\u{E0041}e\u0007')).toEqual([
      { index: 1, code_point: 'U+202E', name: 'right-to-left override' },
      { index: 7, code_point: 'U+E0041', name: 'tag character' },
      { index: 10, code_point: 'U+0007', name: 'control character' },
    ]);
    expect(hiddenCharacters('plain text')).toEqual([]);
  });
});
