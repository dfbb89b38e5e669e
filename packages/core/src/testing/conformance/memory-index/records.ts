import { expect } from 'vitest';
import { EmbedderMismatchError, type MemoryHitRecord, type MemoryIndex, type MemoryRecord } from '../../../ports/memory-index.js';
import {
  AGENT,
  FINGERPRINT,
  ORG,
  OTHER_AGENT,
  OTHER_FINGERPRINT,
  atCosine,
  axis,
  documentSource,
  ids,
  memory,
  memoryId,
  turnSource,
} from './fixtures.js';
import type { MemoryIndexCase } from './types.js';

const upsert = (index: MemoryIndex, ...records: MemoryRecord[]) => index.upsert({ records, embedder: FINGERPRINT });

function expectSameRecord(actual: MemoryRecord | undefined, expected: MemoryRecord): void {
  expect(actual).toBeDefined();
  const { vector, ...rest } = actual!;
  const { vector: expectedVector, ...expectedRest } = expected;
  expect(rest).toEqual(expectedRest);
  expect(vector).toBeInstanceOf(Float32Array);
  expect(vector.length).toBe(expectedVector.length);
  for (let i = 0; i < vector.length; i++) expect(vector[i]).toBeCloseTo(expectedVector[i]!, 5);
}

/** A search hit's record: every field of the stored record but the vector, which it does not carry. */
function expectSameHitRecord(actual: MemoryHitRecord | undefined, expected: MemoryRecord): void {
  expect(actual).toBeDefined();
  expect('vector' in actual!).toBe(false);
  const { vector: _vector, ...expectedRest } = expected;
  expect(actual).toEqual(expectedRest);
}

/** Upsert, get, deleteBy, copyAgent, stats, the embedder fingerprint and persistence. */
export function recordCases(test: MemoryIndexCase): void {
  test('upsert: both channels find a new record', async ({ index }) => {
    const record = memory({ text: 'Melanie adopted a golden retriever puppy', vector: axis(2) });
    await upsert(index, record);
    const result = await index.search({ agentId: AGENT, text: 'retriever', vector: axis(2), limit: 5 });
    expect(ids(result.lexical)).toEqual([record.id]);
    expect(ids(result.semantic)).toEqual([record.id]);
    expect(result.lexical[0]!.score).toBeGreaterThan(0);
    expect(result.semantic[0]!.score).toBeCloseTo(1, 4);
  });

  test('upsert: every field round-trips through get and search (hits without the vector)', async ({ index }) => {
    const turn = memory({ text: 'Caroline joined a pottery class', keywords: 'ceramics 2026-01-01', speaker: null, occurredAt: null });
    const document = memory({
      text: 'Quarterly revenue grew by 12 percent',
      speaker: 'report',
      vector: atCosine(0.3),
      source: documentSource('src_01JCONF00000000000000000001'),
    });
    await upsert(index, turn, document);
    const found = await index.get({ agentId: AGENT, ids: [turn.id, document.id] });
    expectSameRecord(found.find((record) => record.id === turn.id), turn);
    expectSameRecord(found.find((record) => record.id === document.id), document);
    const { lexical, semantic } = await index.search({ agentId: AGENT, text: 'revenue', vector: atCosine(0.3), limit: 5 });
    expectSameHitRecord(lexical[0]?.record, document);
    expectSameHitRecord(semantic.find((hit) => hit.record.id === document.id)?.record, document);
    expectSameHitRecord(semantic.find((hit) => hit.record.id === turn.id)?.record, turn);
  });

  test('upsert: a record with an existing id is replaced', async ({ index }) => {
    const original = memory({ text: 'Jon opened a dance studio', vector: axis(3) });
    await upsert(index, original);
    const replacement = { ...original, text: 'Jon closed his bakery', vector: axis(4) };
    await upsert(index, replacement);
    expect(await index.stats({ agentId: AGENT })).toEqual({ count: 1 });
    const old = await index.search({ agentId: AGENT, text: 'dance studio', vector: null, limit: 5 });
    expect(old.lexical).toEqual([]);
    const now = await index.search({ agentId: AGENT, text: 'bakery', vector: axis(4), limit: 5 });
    expect(ids(now.lexical)).toEqual([original.id]);
    expect(now.semantic[0]!.record.id).toBe(original.id);
    expect(now.semantic[0]!.score).toBeCloseTo(1, 4);
    const [stored] = await index.get({ agentId: AGENT, ids: [original.id] });
    expect(stored?.text).toBe('Jon closed his bakery');
  });

  test('upsert: records declared new (newIds) are found by both channels, get and stats, beside older ones', async ({ index }) => {
    const older = memory({ text: 'Caroline painted a sunrise over the lake', vector: axis(5) });
    await upsert(index, older);
    const fresh = [
      memory({ text: 'Melanie signed up for a pottery workshop', vector: axis(0) }),
      memory({ text: 'Melanie bought a kiln for the pottery', vector: atCosine(0.9) }),
    ];
    await index.upsert({ records: fresh, embedder: FINGERPRINT, newIds: true });
    expect(await index.stats({ agentId: AGENT })).toEqual({ count: 3 });
    const found = await index.get({ agentId: AGENT, ids: [...fresh.map((record) => record.id), older.id] });
    expect(found.map((record) => record.id).sort()).toEqual([...fresh.map((record) => record.id), older.id].sort());
    expectSameRecord(found.find((record) => record.id === fresh[0]!.id), fresh[0]!);
    const result = await index.search({ agentId: AGENT, text: 'pottery', vector: axis(0), limit: 5 });
    expect(ids(result.lexical).sort()).toEqual(fresh.map((record) => record.id).sort());
    expect(ids(result.semantic).slice(0, 2)).toEqual(fresh.map((record) => record.id));
    // A later plain upsert of one of them still replaces it.
    await upsert(index, { ...fresh[0]!, text: 'Melanie cancelled the pottery workshop' });
    expect(await index.stats({ agentId: AGENT })).toEqual({ count: 3 });
    const [replaced] = await index.get({ agentId: AGENT, ids: [fresh[0]!.id] });
    expect(replaced?.text).toBe('Melanie cancelled the pottery workshop');
  });

  test('upsert: newIds on an empty index creates it and records the fingerprint', async ({ index }) => {
    const record = memory({ text: 'Jon opened a dance studio', vector: axis(3) });
    await index.upsert({ records: [record], embedder: FINGERPRINT, newIds: true });
    expect(await index.embedder()).toEqual(FINGERPRINT);
    const result = await index.search({ agentId: AGENT, text: 'dance studio', vector: axis(3), limit: 5 });
    expect(ids(result.lexical)).toEqual([record.id]);
    expect(ids(result.semantic)).toEqual([record.id]);
    await expect(index.upsert({ records: [memory()], embedder: OTHER_FINGERPRINT, newIds: true })).rejects.toBeInstanceOf(EmbedderMismatchError);
  });

  test('upsert: the same id twice in one call keeps the last', async ({ index }) => {
    const first = memory({ text: 'first version about volcanoes' });
    const second = { ...first, text: 'second version about glaciers' };
    await upsert(index, first, second);
    expect(await index.stats({ agentId: AGENT })).toEqual({ count: 1 });
    const [stored] = await index.get({ agentId: AGENT, ids: [first.id] });
    expect(stored?.text).toBe('second version about glaciers');
  });

  test('upsert: an empty batch is accepted', async ({ index }) => {
    await index.upsert({ records: [], embedder: FINGERPRINT });
    expect(await index.stats({ agentId: AGENT })).toEqual({ count: 0 });
  });

  test('get: returns only records of the agent and leaves out missing ids', async ({ index }) => {
    const mine = memory();
    const theirs = memory({ agentId: OTHER_AGENT });
    await upsert(index, mine, theirs);
    const found = await index.get({ agentId: AGENT, ids: [mine.id, theirs.id, 'mem_01JCONFMISSING00000000000'] });
    expect(found.map((record) => record.id)).toEqual([mine.id]);
    expect(await index.get({ agentId: AGENT, ids: [] })).toEqual([]);
  });

  test('deleteBy: agent removes every record of that agent only', async ({ index }) => {
    await upsert(index, memory(), memory(), memory({ agentId: OTHER_AGENT }));
    await index.deleteBy({ agentId: AGENT });
    expect(await index.stats({ agentId: AGENT })).toEqual({ count: 0 });
    expect(await index.stats({ agentId: OTHER_AGENT })).toEqual({ count: 1 });
    const result = await index.search({ agentId: AGENT, text: 'hiking', vector: axis(0), limit: 5 });
    expect(result).toEqual({ lexical: [], semantic: [] });
  });

  test('deleteBy: thread, observation and source remove only matching records', async ({ index }) => {
    const inThreadA = memory({ source: turnSource('thread_A', 'obs_A1') });
    const inThreadA2 = memory({ source: turnSource('thread_A', 'obs_A2') });
    const fromDocument = memory({ source: documentSource('src_D', 'thread_B', 'obs_B1') });
    const otherDocument = memory({ source: documentSource('src_E', 'thread_B', 'obs_B1') });
    const otherAgentSameThread = memory({ agentId: OTHER_AGENT, source: turnSource('thread_A', 'obs_A1') });
    await upsert(index, inThreadA, inThreadA2, fromDocument, otherDocument, otherAgentSameThread);

    await index.deleteBy({ agentId: AGENT, observationId: 'obs_A2' });
    await index.deleteBy({ agentId: AGENT, sourceId: 'src_D' });
    let left = await index.get({ agentId: AGENT, ids: [inThreadA.id, inThreadA2.id, fromDocument.id, otherDocument.id] });
    expect(left.map((record) => record.id).sort()).toEqual([inThreadA.id, otherDocument.id].sort());

    await index.deleteBy({ agentId: AGENT, threadId: 'thread_A' });
    left = await index.get({ agentId: AGENT, ids: [inThreadA.id, otherDocument.id] });
    expect(left.map((record) => record.id)).toEqual([otherDocument.id]);
    expect(await index.get({ agentId: OTHER_AGENT, ids: [otherAgentSameThread.id] })).toHaveLength(1);
  });

  test('deleteBy: all given fields must match, and no match is not an error', async ({ index }) => {
    const record = memory({ source: documentSource('src_D', 'thread_B', 'obs_B1') });
    await upsert(index, record);
    await index.deleteBy({ agentId: AGENT, threadId: 'thread_B', sourceId: 'src_OTHER' });
    await index.deleteBy({ agentId: AGENT, threadId: 'thread_OTHER', observationId: 'obs_B1' });
    await index.deleteBy({ agentId: 'agent_NOBODY' });
    expect(await index.stats({ agentId: AGENT })).toEqual({ count: 1 });
    await index.deleteBy({ agentId: AGENT, threadId: 'thread_B', sourceId: 'src_D', observationId: 'obs_B1' });
    expect(await index.stats({ agentId: AGENT })).toEqual({ count: 0 });
  });

  test('deleteBy: deleted records are gone from both channels', async ({ index }) => {
    const keep = memory({ text: 'keep the lighthouse note', vector: axis(5), source: turnSource('thread_K') });
    const drop = memory({ text: 'drop the lighthouse note', vector: axis(5), source: turnSource('thread_D') });
    await upsert(index, keep, drop);
    await index.deleteBy({ agentId: AGENT, threadId: 'thread_D' });
    const result = await index.search({ agentId: AGENT, text: 'lighthouse', vector: axis(5), limit: 5 });
    expect(ids(result.lexical)).toEqual([keep.id]);
    expect(ids(result.semantic)).toEqual([keep.id]);
  });

  test('copyAgent: copies every record with new ids, keeping text, vectors and sources', async ({ index }) => {
    const a = memory({ text: 'Caroline painted a sunset', keywords: 'art', vector: axis(6) });
    const b = memory({ text: 'Quarterly report', vector: atCosine(0.5), source: documentSource('src_Q') });
    await upsert(index, a, b, memory({ agentId: OTHER_AGENT }));
    const target = 'agent_01JCONFCOPYTARGET00000001';
    const newIds = [memoryId(), memoryId()];
    let next = 0;
    const result = await index.copyAgent({ fromAgentId: AGENT, toAgentId: target, toOrganizationId: 'org_COPY', newId: () => newIds[next++]! });
    expect(result).toEqual({ copied: 2 });
    expect(await index.stats({ agentId: target })).toEqual({ count: 2 });
    const copies = await index.get({ agentId: target, ids: newIds });
    expect(copies).toHaveLength(2);
    for (const copy of copies) {
      const original = copy.text === a.text ? a : b;
      expectSameRecord(copy, { ...original, id: copy.id, agentId: target, organizationId: 'org_COPY' });
    }
    const search = await index.search({ agentId: target, text: 'sunset', vector: axis(6), limit: 5 });
    expect(search.lexical).toHaveLength(1);
    expect(search.lexical[0]!.record.text).toBe(a.text);
    expect(search.semantic[0]!.record.text).toBe(a.text);
  });

  test('copyAgent: the copy is independent of the original', async ({ index }) => {
    const original = memory({ text: 'Melanie plays the violin' });
    await upsert(index, original);
    const target = 'agent_01JCONFCOPYTARGET00000002';
    const copyId = memoryId();
    await index.copyAgent({ fromAgentId: AGENT, toAgentId: target, toOrganizationId: ORG, newId: () => copyId });
    await upsert(index, { ...original, text: 'Melanie plays the cello' });
    await index.deleteBy({ agentId: target });
    expect(await index.stats({ agentId: target })).toEqual({ count: 0 });
    const [stillThere] = await index.get({ agentId: AGENT, ids: [original.id] });
    expect(stillThere?.text).toBe('Melanie plays the cello');
    expect(await index.copyAgent({ fromAgentId: 'agent_NOBODY', toAgentId: target, toOrganizationId: ORG, newId: memoryId })).toEqual({ copied: 0 });
  });

  test('stats: counts only the records of the agent', async ({ index }) => {
    expect(await index.stats({ agentId: AGENT })).toEqual({ count: 0 });
    await upsert(index, memory(), memory(), memory(), memory({ agentId: OTHER_AGENT }));
    expect(await index.stats({ agentId: AGENT })).toEqual({ count: 3 });
    expect(await index.stats({ agentId: OTHER_AGENT })).toEqual({ count: 1 });
  });

  test('embedder: null while empty, the fingerprint after the first upsert', async ({ index }) => {
    expect(await index.embedder()).toBeNull();
    await upsert(index, memory());
    expect(await index.embedder()).toEqual(FINGERPRINT);
  });

  test('embedder: an upsert with another fingerprint rejects with EmbedderMismatchError and writes nothing', async ({ index }) => {
    await upsert(index, memory());
    const stranger = memory({ text: 'written by another embedder' });
    const error = await index.upsert({ records: [stranger], embedder: OTHER_FINGERPRINT }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(EmbedderMismatchError);
    expect((error as EmbedderMismatchError).recorded).toEqual(FINGERPRINT);
    expect((error as EmbedderMismatchError).given).toEqual(OTHER_FINGERPRINT);
    const otherDimensions = { id: FINGERPRINT.id, dimensions: FINGERPRINT.dimensions * 2 };
    await expect(index.upsert({ records: [], embedder: otherDimensions })).rejects.toBeInstanceOf(EmbedderMismatchError);
    expect(await index.get({ agentId: AGENT, ids: [stranger.id] })).toEqual([]);
    expect(await index.embedder()).toEqual(FINGERPRINT);
  });

  test('persistence: a second instance sees records, deletions and the fingerprint', async ({ index, reopen }) => {
    if (!reopen) throw new Error('persistence cases need `reopen`');
    const kept = memory({ text: 'Caroline moved to Sweden', vector: axis(7) });
    const deleted = memory({ text: 'Caroline moved to Norway', vector: axis(7), source: turnSource('thread_GONE') });
    const elsewhere = memory({ agentId: OTHER_AGENT, text: 'Caroline moved to Sweden', vector: axis(7) });
    await upsert(index, kept, deleted, elsewhere);
    await index.deleteBy({ agentId: AGENT, threadId: 'thread_GONE' });
    const second = await reopen();
    expect(await second.embedder()).toEqual(FINGERPRINT);
    expect(await second.stats({ agentId: AGENT })).toEqual({ count: 1 });
    expectSameRecord((await second.get({ agentId: AGENT, ids: [kept.id] }))[0], kept);
    const result = await second.search({ agentId: AGENT, text: 'moved Sweden Norway', vector: axis(7), limit: 5 });
    expect(ids(result.lexical)).toEqual([kept.id]);
    expect(ids(result.semantic)).toEqual([kept.id]);
    await expect(second.upsert({ records: [memory()], embedder: OTHER_FINGERPRINT })).rejects.toBeInstanceOf(EmbedderMismatchError);
    // Writes through the second instance are visible to it as well.
    await second.upsert({ records: [memory({ text: 'Caroline visited Oslo' })], embedder: FINGERPRINT });
    expect(await second.stats({ agentId: AGENT })).toEqual({ count: 2 });
  });
}
