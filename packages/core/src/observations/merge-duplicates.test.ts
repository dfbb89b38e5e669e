import { describe, expect, it } from 'vitest';
import { learningService } from '../__fixtures__/learning-service.js';
import { inMemoryMemoryIndex } from '../in-memory/in-memory-memory-index.js';
import { duplicateKey, normaliseForDuplicates } from '../memory/duplicates.js';
import type { MemoryRecord } from '../ports/memory-index.js';
import type { JobRecord } from '../ports/store/index.js';
import type { ServiceContext } from '../service/context.js';
import { silentLogger } from '../service/logger.js';
import { planMerges } from './merge-duplicates.js';

const say = (text: string, timestamp: string, speaker = 'Dana') => ({ speaker, timestamp, content: [{ type: 'text' as const, text }] });
const turn = (text: string, speaker: string | null = 'Dana') => ({ text, speaker, source: { kind: 'turn' as const, threadId: 'thr_a', observationId: 'obs_a', turnIndex: 0 } });

describe('duplicateKey', () => {
  it('is the same for case, punctuation, spacing and contractions, and differs by speaker and words', () => {
    expect(normaliseForDuplicates("I DON'T  like   cold coffee!!")).toBe('i do not like cold coffee');
    expect(duplicateKey(turn("I don't like cold coffee."))).toBe(duplicateKey(turn('i do not like cold coffee')));
    expect(duplicateKey(turn('I don’t like cold coffee'))).toBe(duplicateKey(turn("I don't like cold coffee")));
    expect(duplicateKey(turn("I don't like cold coffee.", 'Sam'))).not.toBe(duplicateKey(turn("I don't like cold coffee.")));
    expect(duplicateKey(turn('I do like cold coffee.'))).not.toBe(duplicateKey(turn('I do not like cold coffee.')));
  });

  it('is null for short replies and for document pieces', () => {
    expect(duplicateKey(turn('Thanks!'))).toBeNull();
    expect(duplicateKey(turn('Yes, sure thing.'))).toBeNull();
    const piece = { text: 'The warranty lasts two full years.', speaker: 'manual.pdf', source: { kind: 'document' as const, threadId: 'thr_a', observationId: 'obs_a', turnIndex: 0, sourceId: 'src_a', page: 1, filename: 'manual.pdf' } };
    expect(duplicateKey(piece)).toBeNull();
  });
});

describe('learning merges near-duplicate turns', () => {
  it('cites every turn from one memory, across jobs and inside one batch, and the receipt says merged', async () => {
    const { service, owner: caller, agentId, threadId, observeSettled } = await learningService();
    const receiptOf = (observationId: string) => service.observationReceipt({ caller, agentId, threadId, observationId });
    const first = await observeSettled([say('My sister lives in Lisbon now.', '2024-01-01T10:00:00Z'), say('Thanks!', '2024-01-01T10:01:00Z')]);
    const second = await observeSettled([
      say('my sister lives in lisbon now', '2024-02-01T10:00:00Z'),
      say('Thanks!', '2024-02-01T10:01:00Z'),
      say('We adopted a grey kitten yesterday.', '2024-02-01T10:02:00Z'),
      say('We adopted a grey kitten yesterday!', '2024-02-01T10:03:00Z'),
      say('My sister lives in Lisbon now.', '2024-02-01T10:04:00Z', 'Sam'),
    ]);
    const sister = `mem_${first.observation_id.slice(4)}_0_0`;
    const kitten = `mem_${second.observation_id.slice(4)}_2_0`;
    const one = await receiptOf(first.observation_id);
    expect(one.turns.map((t) => t.outcome)).toEqual(['learned', 'learned']);
    const two = await receiptOf(second.observation_id);
    expect(two.turns.map((t) => [t.outcome, t.memory_ids])).toEqual([
      ['merged', [sister]],
      // Too short to be a statement: learned on its own (its neighbours' words find it).
      ['learned', [`mem_${second.observation_id.slice(4)}_1_0`]],
      ['learned', [kitten]],
      ['merged', [kitten]],
      // Another speaker's words are another memory.
      ['learned', [`mem_${second.observation_id.slice(4)}_4_0`]],
    ]);
    const source = (observationId: string, turnIndex: number) => ({ kind: 'turn', thread_id: threadId, observation_id: observationId, turn_index: turnIndex });
    expect((await service.memories.get({ caller, agentId, memoryId: sister })).also_from).toEqual([source(second.observation_id, 0)]);
    expect((await service.memories.get({ caller, agentId, memoryId: kitten })).also_from).toEqual([source(second.observation_id, 3)]);
    // Stored once: Dana's two turns are one memory, Sam's the other.
    const listed = await service.memories.list({ caller, agentId, query: { text_contains: 'lisbon' } });
    expect(listed.memories.map((memory) => [memory.speaker, memory.memory_id]).sort()).toEqual([['Dana', sister], ['Sam', `mem_${second.observation_id.slice(4)}_4_0`]]);
    const found = await service.memories.search({ caller, agentId, body: { query: 'Where does my sister live?' } });
    expect(found.hits[0]!.memory).toMatchObject({ memory_id: sister, also_from: [source(second.observation_id, 0)] });
  });

  it('merges across threads of the same person only', async () => {
    const { service, caller, agentId, observeSettled } = await learningService();
    const eve = await caller('eve@example.test');
    const bob = await caller('bob@example.test');
    const threadOf = async (who: typeof eve) => (await service.threads.create({ caller: who, agentId, body: {} })).thread_id;
    const [eve1, eve2, bob1] = [await threadOf(eve), await threadOf(eve), await threadOf(bob)];
    const line = (n: number) => [say('I keep my spare key under the blue flowerpot.', `2024-01-0${n}T10:00:00Z`)];
    const first = await observeSettled(line(1), { caller: eve, threadId: eve1 });
    const again = await observeSettled(line(2), { caller: eve, threadId: eve2 });
    const other = await observeSettled(line(3), { caller: bob, threadId: bob1 });
    const outcome = async (who: typeof eve, threadId: string, observationId: string) => (await service.observationReceipt({ caller: who, agentId, threadId, observationId })).turns[0];
    expect(await outcome(eve, eve2, again.observation_id)).toMatchObject({ outcome: 'merged', memory_ids: [`mem_${first.observation_id.slice(4)}_0_0`] });
    // Bob's recall is narrowed to his threads: his turn stays his own memory.
    expect(await outcome(bob, bob1, other.observation_id)).toMatchObject({ outcome: 'learned', memory_ids: [`mem_${other.observation_id.slice(4)}_0_0`] });
  });

  it('does not merge into a superseded memory nor across the suspicious flag', async () => {
    const { service, owner: caller, agentId, threadId, observeSettled } = await learningService();
    const first = await observeSettled([say('I live in Paris.', '2024-01-01T10:00:00Z'), say('I work at Acme Corp.', '2024-01-02T10:00:00Z')]);
    await observeSettled([say('I live in Rome now.', '2024-02-01T10:00:00Z')]);
    const third = await observeSettled([say('I work at Acme Corp!', '2024-03-01T10:00:00Z')]);
    const receipt = await service.observationReceipt({ caller, agentId, threadId, observationId: third.observation_id });
    expect(receipt.turns[0]).toMatchObject({ outcome: 'merged', memory_ids: [`mem_${first.observation_id.slice(4)}_1_0`] });
    const fourth = await observeSettled([say('I live in Paris.', '2024-04-01T10:00:00Z')]);
    const again = await service.observationReceipt({ caller, agentId, threadId, observationId: fourth.observation_id });
    // "I live in Paris." was superseded by Rome: history is never a merge target.
    expect(again.turns[0]!.outcome).toBe('learned');
  });
});

describe('planMerges on a resumed batch', () => {
  const embedder = { id: 'test', dimensions: 2 };
  const source = (observationId: string, turnIndex: number) => ({ kind: 'turn' as const, threadId: 'thr_a', observationId, turnIndex });
  const record = (id: string, text: string, from: ReturnType<typeof source>, alsoFrom: ReturnType<typeof source>[] = []): MemoryRecord => ({
    id, organizationId: 'org_a', agentId: 'agent_a', text, keywords: '', vector: new Float32Array([1, 0]), speaker: 'Dana', occurredAt: null, source: from,
    createdAt: `2024-01-0${id.at(-3)}T00:00:00.000Z`, provenance: { writer: 'verbatim-v2', jobId: from.observationId, span: { start: 0, end: text.length } },
    alsoFrom, validFrom: null, validTo: null, supersededBy: null, suspicious: false, expiresAt: null,
  });
  const turnOf = (turnIndex: number, text: string) => ({ jobId: 'obs_b', turnIndex, speaker: 'Dana', text, timestamp: '2024-02-01T00:00:00Z', tags: [], state: 'read' as const, failureReason: null, details: {} });
  const job = { id: 'obs_b', agentId: 'agent_a', threadId: 'thr_a' } as JobRecord;

  it('never merges a turn into its own memory nor adds a source twice', async () => {
    const index = inMemoryMemoryIndex();
    const context = { index, logger: silentLogger, nowIso: () => new Date().toISOString() } as unknown as ServiceContext;
    const text = 'My sister lives in Lisbon now.';
    // The run before committed turn 0 as its own memory (merged turn 2 into it), and merged turn 1 into mem_a_1_0.
    await index.upsert({ records: [record('mem_a_1_0', 'We adopted a grey kitten.', source('obs_a', 0), [source('obs_b', 1)]), record('mem_b_2_0', text, source('obs_b', 0), [source('obs_b', 2)])], embedder });
    const batch = [record('mem_b_2_0', text, source('obs_b', 0)), record('mem_b_3_1', 'we adopted a grey kitten', source('obs_b', 1)), record('mem_b_3_2', text, source('obs_b', 2))];
    batch[1]!.speaker = 'Dana';
    const plan = await planMerges(context, job, [turnOf(0, text), turnOf(1, 'we adopted a grey kitten'), turnOf(2, text)], batch, []);
    expect(plan.records.map((r) => r.id)).toEqual(['mem_b_2_0']);
    // The rewritten own memory keeps what was merged into it.
    expect(plan.records[0]!.alsoFrom).toEqual([source('obs_b', 2)]);
    expect(plan.merges.map((merge) => [merge.turnIndex, merge.memoryId])).toEqual([[1, 'mem_a_1_0'], [2, 'mem_b_2_0']]);
    expect(Object.fromEntries(plan.alsoFrom)).toEqual({ mem_a_1_0: [source('obs_b', 1)], mem_b_2_0: [source('obs_b', 2)] });
  });
});
