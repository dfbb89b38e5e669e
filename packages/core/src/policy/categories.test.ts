// Categories, the policy version and memory-level rules of an agent's extraction policy (issue 44)
// through the service: every memory gets at most one listed category (never one outside the
// list), an exclude rule naming a category keeps such memories out and the receipt says so, each
// memory records the policy version that kept it, and export/import carry both.
import { describe, expect, it } from 'vitest';
import { learningService } from '../__fixtures__/learning-service.js';
import { refusal } from '../__fixtures__/refusal.js';
import { splitLines } from '../export/format.js';
import { inMemoryMemoryIndex } from '../in-memory/in-memory-memory-index.js';
import type { MemoryWriter, MemoryWriteRequest } from '../ports/memory-writer.js';
import { keywordCategory, listedCategory, nearestCategory } from './categories.js';

const said = (speaker: string, text: string) => ({ speaker, timestamp: '2026-01-01T10:00:00Z', content: [{ type: 'text' as const, text }] });

const CATEGORIES = [
  { name: 'preference', description: 'what a person likes or prefers', keywords: ['prefer', 'like', 'love'] },
  { name: 'smalltalk', keywords: ['weather', 'weekend'] },
  { name: 'work-schedule' },
];

async function world(extraction_policy: Record<string, unknown>, writer?: MemoryWriter) {
  const setup = await learningService({ index: inMemoryMemoryIndex(), ...(writer ? { writer } : {}) });
  const updated = await setup.service.agents.update({ caller: setup.owner, agentId: setup.agentId, body: { agent_config: { role: 'assistant', objective: 'remember', extraction_policy } } });
  const observe = async (observations: ReturnType<typeof said>[]) => {
    const accepted = await setup.service.observe({ caller: setup.owner, agentId: setup.agentId, threadId: setup.threadId, body: { observations } });
    await setup.service.idle();
    return setup.service.observationReceipt({ caller: setup.owner, agentId: setup.agentId, threadId: setup.threadId, observationId: accepted.observation_id });
  };
  const memories = async () =>
    (await setup.service.memories.list({ caller: setup.owner, agentId: setup.agentId, query: { limit: '100' } })).memories
      .map((memory) => ({ text: memory.text, category: memory.category, policy_version: memory.policy_version }))
      .sort((a, b) => (a.text < b.text ? -1 : 1));
  return { ...setup, observe, memories, version: updated.agent_config.extraction_policy?.version };
}

describe('extraction policy: categories, memory rules and the policy version', () => {
  it('gives each memory the first listed category its words name, or none; an exclude rule naming a category drops its memories and the receipt says so', async () => {
    const { observe, memories } = await world({ categories: CATEGORIES, exclude: [{ categories: ['smalltalk'] }] });
    const receipt = await observe([
      said('ana', 'I prefer tea over coffee.'),
      said('ana', 'The weather was lovely this weekend.'),
      said('ana', 'My work schedule changes in May.'),
      said('ana', 'The staging server is called heron.'),
    ]);
    expect(await memories()).toEqual([
      { text: 'I prefer tea over coffee.', category: 'preference', policy_version: 1 },
      { text: 'My work schedule changes in May.', category: 'work-schedule', policy_version: 1 },
      { text: 'The staging server is called heron.', category: null, policy_version: 1 },
    ]);
    expect(receipt.turns.map((turn) => [turn.outcome, turn.memory_ids.length, turn.dropped])).toEqual([
      ['learned', 1, []],
      ['learned', 0, [{ category: 'smalltalk', rule: 'extraction_policy.exclude[0] (category smalltalk)' }]],
      ['learned', 1, []],
      ['learned', 1, []],
    ]);
  });

  it('lists the memories of one category (?category=), paging through the index until a page is full', async () => {
    const { service, owner, agentId, observe } = await world({ categories: CATEGORIES });
    await observe([
      said('ana', 'I prefer tea.'),
      ...Array.from({ length: 6 }, (_, i) => said('ana', `Server ${i} is called heron${i}.`)),
      said('ana', 'I love hiking.'),
      said('ana', 'I like jazz.'),
    ]);
    const list = (query: Record<string, string>) => service.memories.list({ caller: owner, agentId, query });
    const first = await list({ category: 'preference', limit: '2' });
    expect(first.memories.map((memory) => memory.category)).toEqual(['preference', 'preference']);
    expect(first.next_cursor).not.toBeNull();
    const rest = await list({ category: 'preference', limit: '2', cursor: first.next_cursor! });
    expect([...first.memories, ...rest.memories].map((memory) => memory.text).sort()).toEqual(['I like jazz.', 'I love hiking.', 'I prefer tea.']);
    expect(rest.next_cursor).toBeNull();
    expect((await list({ category: 'health' })).memories).toEqual([]);
    expect(await refusal(list({ category: 'Not A Name' }))).toMatchObject({ status: 422, code: 'invalid_request' });
    // A cursor of one category's listing is not another filter's.
    expect(await refusal(list({ category: 'smalltalk', cursor: first.next_cursor! }))).toMatchObject({ code: 'invalid_request' });
  });

  it('with only_categories, or include rules naming categories, keeps only memories of those categories', async () => {
    const only = await world({ categories: CATEGORIES, only_categories: true });
    const receipt = await only.observe([said('ana', 'I love hiking.'), said('ana', 'The server is called heron.')]);
    expect((await only.memories()).map((memory) => memory.text)).toEqual(['I love hiking.']);
    expect(receipt.turns[1]!.dropped).toEqual([{ category: null, rule: 'extraction_policy.only_categories (the memory fits none of the categories)' }]);
    const included = await world({ categories: CATEGORIES, include: [{ categories: ['preference'] }, { speakers: ['boss'] }] });
    await included.observe([said('ana', 'I love hiking.'), said('ana', 'The weather is grey.'), said('boss', 'Standup moves to ten.')]);
    expect((await included.memories()).map((memory) => memory.text)).toEqual(['I love hiking.', 'Standup moves to ten.']);
  });

  it('tells the writer the list, keeps a proposed category the list holds and never stores one outside it', async () => {
    const requests: MemoryWriteRequest[] = [];
    const proposals = ['preference', 'Politics', null, 'smalltalk'];
    const writer: MemoryWriter = {
      specificationVersion: 'v1',
      id: 'proposing',
      async write(request) {
        requests.push(request);
        return {
          outcomes: request.turns.map((turn) => ({
            turnIndex: turn.turnIndex,
            ok: true as const,
            memories: [{ text: turn.text, keywords: '', speaker: turn.speaker, occurredAt: turn.timestamp, source: turn.source, category: proposals[turn.turnIndex] }],
          })),
        };
      },
    };
    const { observe, memories } = await world({ categories: CATEGORIES, instructions: 'Only remember preferences.', language: 'de' }, writer);
    await observe([said('ana', 'Tea, always.'), said('ana', 'Vote for the blue party.'), said('ana', 'The weather is fine.'), said('ana', 'Nice weekend?')]);
    expect(requests[0]!.policy).toEqual({ categories: CATEGORIES, instructions: 'Only remember preferences.', language: 'de' });
    // The writer's word counts, even where the keyword rule would say otherwise (turn 2 says "weather").
    expect((await memories()).map((memory) => [memory.text, memory.category])).toEqual([
      ['Nice weekend?', 'smalltalk'],
      ['Tea, always.', 'preference'],
      ['The weather is fine.', null],
      ['Vote for the blue party.', null],
    ]);
    const strict = await world({ categories: CATEGORIES, only_categories: true }, writer);
    requests.length = 0;
    const receipt = await strict.observe([said('ana', 'Tea, always.'), said('ana', 'Vote for the blue party.')]);
    expect((await strict.memories()).map((memory) => memory.text)).toEqual(['Tea, always.']);
    expect(receipt.turns[1]!.dropped).toEqual([{ category: null, rule: 'extraction_policy.only_categories (the memory fits none of the categories)' }]);
  });

  it('versions the policy: 1 when first given, the same while unchanged, +1 on each change; a version sent is ignored; memories record theirs', async () => {
    const { service, owner, agentId, observe, memories } = await world({ redact: ['email'] });
    const config = (extraction_policy?: Record<string, unknown>) => ({ agent_config: { role: 'assistant', objective: 'remember', ...(extraction_policy ? { extraction_policy } : {}) } });
    const version = async (body: ReturnType<typeof config>) => (await service.agents.update({ caller: owner, agentId, body })).agent_config.extraction_policy?.version;
    expect((await service.agents.get({ caller: owner, agentId })).agent_config.extraction_policy).toEqual({ redact: ['email'], version: 1 });
    expect(await version(config({ redact: ['email'], version: 40 }))).toBe(1);
    expect(await version(config())).toBe(1);
    await observe([said('ana', 'First fact.')]);
    expect(await version(config({ redact: ['email'], exclude: [{ keywords: ['secret'] }] }))).toBe(2);
    expect(await version(config({ exclude: [{ keywords: ['secret'] }], redact: ['email'] }))).toBe(2);
    await observe([said('ana', 'Second fact.')]);
    expect(await memories()).toEqual([
      { text: 'First fact.', category: null, policy_version: 1 },
      { text: 'Second fact.', category: null, policy_version: 2 },
    ]);
    const created = await service.agents.create({ caller: owner, body: config({ categories: CATEGORIES, version: 9 }) });
    expect(created.agent_config.extraction_policy?.version).toBe(1);
    const plain = await service.agents.create({ caller: owner, body: config() });
    expect(plain.agent_config.extraction_policy).toBeUndefined();
  });

  it('refuses a rule naming a category the policy does not list (422 invalid_request)', async () => {
    const { service, owner } = await world({});
    const refused = await refusal(service.agents.create({ caller: owner, body: { agent_config: { role: 'r', objective: 'o', extraction_policy: { categories: CATEGORIES, exclude: [{ categories: ['gossip'] }] } } } }));
    expect(refused).toMatchObject({ status: 422, code: 'invalid_request' });
    expect(refused.message).toContain('extraction_policy.exclude[0].categories names gossip');
    for (const extraction_policy of [{ categories: [{ name: 'Bad Name' }] }, { categories: [{ name: 'a' }, { name: 'a' }] }, { instructions: 'x'.repeat(4001) }, { language: 'not a tag!' }]) {
      expect(await refusal(service.agents.create({ caller: owner, body: { agent_config: { role: 'r', objective: 'o', extraction_policy } } as never }))).toMatchObject({ status: 422, code: 'invalid_request' });
    }
  });

  it('export and import carry the policy, and each memory its category and policy version', async () => {
    const { service, owner, agentId, observe, memories } = await world({ categories: CATEGORIES });
    await observe([said('ana', 'I prefer tea over coffee.'), said('ana', 'The server is called heron.')]);
    let text = '';
    for await (const line of service.admin.exportAgent({ agentId })) text += line;
    const target = await service.admin.createOrganization({ name: 'Other' });
    const { agentId: copy } = await service.admin.importAgent({ organizationId: target.organizationId, open: () => splitLines([text]) });
    const caller = await service.as(target.organizationId);
    const copied = await service.memories.list({ caller, agentId: copy, query: {} });
    expect(copied.memories.map((memory) => [memory.text, memory.category, memory.policy_version]).sort()).toEqual((await memories()).map((memory) => [memory.text, memory.category, memory.policy_version]));
    expect((await service.agents.get({ caller, agentId: copy })).agent_config.extraction_policy).toEqual((await service.agents.get({ caller: owner, agentId })).agent_config.extraction_policy);
  });
});

describe('categories by meaning', () => {
  it('with an embedder whose vectors carry meaning, gives the nearest category above the threshold, embedding each memory once', async () => {
    // A stand-in sentence model (the Embedder port): one axis per topic.
    const embedded: string[] = [];
    const axes = [/tea|coffee|beverage/i, /flight|hotel|journey/i];
    const embedder = {
      specificationVersion: 'v1' as const,
      id: 'topics-test:3',
      dimensions: 3,
      meaning: true,
      async embed({ texts }: { texts: readonly string[] }) {
        embedded.push(...texts);
        return { vectors: texts.map((text) => Float32Array.from([...axes.map((axis) => (axis.test(text) ? 1 : 0)), axes.some((axis) => axis.test(text)) ? 0 : 1])) };
      },
    };
    const setup = await learningService({ index: inMemoryMemoryIndex(), embedder });
    await setup.service.agents.update({
      caller: setup.owner,
      agentId: setup.agentId,
      body: { agent_config: { role: 'a', objective: 'b', extraction_policy: { categories: [{ name: 'beverage', description: 'tea and coffee' }, { name: 'journey', description: 'a flight or a hotel' }] } } },
    });
    await setup.observeSettled([said('ana', 'Ana likes oolong tea.'), said('ana', 'Her hotel is near the port.'), said('ana', 'The server is heron.')]);
    const listed = (await setup.service.memories.list({ caller: setup.owner, agentId: setup.agentId, query: {} })).memories;
    expect(listed.map((memory) => [memory.text, memory.category]).sort()).toEqual([
      ['Ana likes oolong tea.', 'beverage'],
      ['Her hotel is near the port.', 'journey'],
      ['The server is heron.', null],
    ]);
    expect(embedded.filter((text) => text === 'Ana likes oolong tea.')).toHaveLength(1);
  });
});

describe('categories: the rules', () => {
  it('a proposal counts only when listed (case aside); keywords match whole words; the nearest centroid only above the threshold', () => {
    expect(listedCategory(CATEGORIES, 'Preference')).toBe('preference');
    expect(listedCategory(CATEGORIES, 'politics')).toBeNull();
    expect(keywordCategory(CATEGORIES, 'I dislike mornings')).toBeNull();
    expect(keywordCategory(CATEGORIES, 'Her WORK schedule is new')).toBe('work-schedule');
    const centroids = [new Float32Array([1, 0, 0]), new Float32Array([0, 1, 0]), new Float32Array([0, 0, 1])];
    expect(nearestCategory(CATEGORIES, centroids, new Float32Array([0.2, 0.9, 0.1]), 0.5)).toBe('smalltalk');
    expect(nearestCategory(CATEGORIES, centroids, new Float32Array([1, 1, 1]), 0.6)).toBeNull();
  });
});
