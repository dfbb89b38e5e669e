import { expect } from 'vitest';
import type { MemoryHitRecord, MemoryIndex, MemoryListRequest, MemoryRecord, MemorySourceRef } from '../../../ports/memory-index.js';
import { AGENT, FINGERPRINT, ORG, OTHER_AGENT, T0, atCosine, axis, documentSource, ids, memory, turnSource } from './fixtures.js';
import type { MemoryIndexCase } from './types.js';

const upsert = (index: MemoryIndex, ...records: MemoryRecord[]) => index.upsert({ records, embedder: FINGERPRINT });

/** T0 plus `minutes`, as an ISO date-time. */
const at = (minutes: number) => new Date(Date.parse(T0) + minutes * 60_000).toISOString();

/** A record without its vector: what hits and list pages carry. */
const hitOf = (record: MemoryRecord): MemoryHitRecord => {
  const { vector: _vector, ...rest } = record;
  return rest;
};

/** Every page of `list` for the request, following cursors; fails on a page over the limit. */
async function listAll(index: MemoryIndex, request: Omit<MemoryListRequest, 'cursor'>): Promise<MemoryHitRecord[]> {
  const all: MemoryHitRecord[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 1000; page++) {
    const result: Awaited<ReturnType<MemoryIndex['list']>> = await index.list({ ...request, cursor });
    expect(result.records.length).toBeLessThanOrEqual(request.limit);
    all.push(...result.records);
    if (result.nextCursor === null) return all;
    expect(result.records.length).toBe(request.limit);
    cursor = result.nextCursor;
  }
  throw new Error('list did not end');
}

/** The ids of the agent's records `list` returns for these filters (all pages, large limit). */
const listed = async (index: MemoryIndex, filters: Omit<MemoryListRequest, 'agentId' | 'limit'> = {}) =>
  (await listAll(index, { agentId: AGENT, limit: 1000, ...filters })).map((record) => record.id);

/** Records' ids newest first, as `list` orders them: createdAt desc, then id desc. */
const newestFirst = (records: readonly MemoryRecord[]) =>
  [...records]
    .sort((a, b) => (a.createdAt !== b.createdAt ? (a.createdAt < b.createdAt ? 1 : -1) : a.id < b.id ? 1 : a.id > b.id ? -1 : 0))
    .map((record) => record.id);

/**
 * The memory record v2: provenance, alsoFrom, validity and the suspicious flag round-trip; search
 * filters (current / asOf, threadIds) inside the index; `list` with every filter and cursor paging;
 * `update`; `deleteBy({ threadIds })`; `copyAgent` keeping the new fields.
 */
export function recordV2Cases(test: MemoryIndexCase): void {
  const alsoFrom: MemorySourceRef[] = [turnSource('thread_V2', 'obs_V2a', 4), documentSource('src_01JCONF0000000000000000000V')];

  const full = () =>
    memory({
      text: 'Ana moved to Lisbon in May',
      keywords: 'lisbon may',
      vector: axis(5),
      createdAt: at(10),
      occurredAt: at(-60),
      provenance: { writer: 'llm-writer-v3', jobId: 'job_01JCONF000000000000000001', span: { start: 3, end: 29 } },
      alsoFrom,
      validFrom: at(-60),
      suspicious: true,
    });

  test('record v2: provenance, alsoFrom, validity and suspicious round-trip through get, search and list', async ({ index }) => {
    const current = full();
    const superseded = memory({
      text: 'Ana lived in Porto',
      vector: axis(5),
      createdAt: at(5),
      provenance: { writer: 'verbatim-v2', jobId: null, span: null },
      validFrom: null,
      validTo: at(8),
      supersededBy: current.id,
    });
    await upsert(index, current, superseded);
    const found = await index.get({ agentId: AGENT, ids: [current.id, superseded.id] });
    for (const record of [current, superseded]) {
      const got = found.find((candidate) => candidate.id === record.id);
      expect(got && hitOf(got)).toEqual(hitOf(record));
    }
    const now = await index.search({ agentId: AGENT, text: 'Ana Lisbon Porto', vector: axis(5), limit: 5 });
    expect(now.lexical.map((hit) => hit.record)).toEqual([hitOf(current)]);
    expect(now.semantic.map((hit) => hit.record)).toEqual([hitOf(current)]);
    const then = await index.search({ agentId: AGENT, text: 'Porto', vector: null, limit: 5, asOf: at(6) });
    expect(then.lexical.map((hit) => hit.record)).toEqual([hitOf(superseded)]);
    expect((await index.list({ agentId: AGENT, limit: 10, includeHistory: true })).records).toEqual([hitOf(current), hitOf(superseded)]);
  });

  test('record v2: upserting an existing id replaces its v2 fields too', async ({ index }) => {
    const original = full();
    await upsert(index, original);
    const replacement = { ...original, provenance: { writer: 'other', jobId: null, span: null }, alsoFrom: [], suspicious: false, expiresAt: null, validFrom: null };
    await upsert(index, replacement);
    const [got] = await index.get({ agentId: AGENT, ids: [original.id] });
    expect(got && hitOf(got)).toEqual(hitOf(replacement));
  });

  test('search: only current records (validTo null) unless asOf is given', async ({ index }) => {
    const current = memory({ text: 'Ana works as a nurse', vector: axis(6), validFrom: at(0) });
    const old = memory({ text: 'Ana works as a teacher', vector: axis(6), validFrom: at(-100), validTo: at(0), supersededBy: current.id });
    await upsert(index, current, old);
    const now = await index.search({ agentId: AGENT, text: 'Ana works', vector: axis(6), limit: 5 });
    expect(ids(now.lexical)).toEqual([current.id]);
    expect(ids(now.semantic)).toEqual([current.id]);
    const before = await index.search({ agentId: AGENT, text: 'Ana works', vector: axis(6), limit: 5, asOf: at(-50) });
    expect(ids(before.lexical)).toEqual([old.id]);
    expect(ids(before.semantic)).toEqual([old.id]);
    const after = await index.search({ agentId: AGENT, text: 'Ana works', vector: axis(6), limit: 5, asOf: at(50) });
    expect(ids(after.lexical)).toEqual([current.id]);
  });

  test('search: asOf includes validFrom and excludes validTo; a null validFrom is valid since always', async ({ index }) => {
    const since = memory({ text: 'kayak trip', vector: axis(7), validFrom: at(0), validTo: at(10) });
    const always = memory({ text: 'kayak trip', vector: axis(7), validFrom: null, validTo: at(5) });
    await upsert(index, since, always);
    const search = async (asOf: string) => (await index.search({ agentId: AGENT, text: 'kayak', vector: axis(7), limit: 5, asOf })).semantic.map((hit) => hit.record.id).sort();
    expect(await search(at(-1000))).toEqual([always.id]);
    expect(await search(at(0))).toEqual([since.id, always.id].sort());
    expect(await search(at(5))).toEqual([since.id]);
    expect(await search(at(10))).toEqual([]);
    // The same instant in another notation.
    expect(await search('2026-01-01T01:00:00+01:00')).toEqual([since.id, always.id].sort());
  });

  test('search: filters apply before the limit (superseded best matches do not crowd out current ones)', async ({ index }) => {
    const superseded = Array.from({ length: 12 }, () => memory({ text: 'violin violin violin lesson', vector: axis(0), validTo: at(1) }));
    const current = [memory({ text: 'violin lesson on friday', vector: atCosine(0.9) }), memory({ text: 'a violin', vector: atCosine(0.8) })];
    await upsert(index, ...superseded, ...current);
    const result = await index.search({ agentId: AGENT, text: 'violin lesson', vector: axis(0), limit: 2 });
    expect(ids(result.lexical).sort()).toEqual(current.map((record) => record.id).sort());
    expect(ids(result.semantic)).toEqual(current.map((record) => record.id));
  });

  test('search: threadIds narrows both channels to those threads', async ({ index }) => {
    const inA = memory({ text: 'garden party', vector: axis(9), source: turnSource('thread_A', 'obs_A') });
    const inB = memory({ text: 'garden party', vector: axis(9), source: turnSource('thread_B', 'obs_B') });
    const inC = memory({ text: 'garden party', vector: axis(9), source: documentSource('src_01JCONF000000000000000000C', 'thread_C') });
    await upsert(index, inA, inB, inC);
    const search = (threadIds?: readonly string[]) => index.search({ agentId: AGENT, text: 'garden', vector: axis(9), limit: 5, ...(threadIds ? { threadIds } : {}) });
    const narrowed = await search(['thread_A', 'thread_C']);
    expect(ids(narrowed.lexical).sort()).toEqual([inA.id, inC.id].sort());
    expect(ids(narrowed.semantic).sort()).toEqual([inA.id, inC.id].sort());
    const all = await search();
    expect(ids(all.semantic).sort()).toEqual([inA.id, inB.id, inC.id].sort());
    const none = await search([]);
    expect(none).toEqual({ lexical: [], semantic: [] });
  });

  test('deleteBy: threadIds removes the records of the listed threads only', async ({ index }) => {
    const inA = memory({ source: turnSource('thread_A', 'obs_A') });
    const inB = memory({ source: turnSource('thread_B', 'obs_B') });
    const inC = memory({ source: turnSource('thread_C', 'obs_C') });
    const theirs = memory({ agentId: OTHER_AGENT, source: turnSource('thread_A', 'obs_X') });
    await upsert(index, inA, inB, inC, theirs);
    await index.deleteBy({ agentId: AGENT, threadIds: [] });
    expect(await index.stats({ agentId: AGENT })).toEqual({ count: 3 });
    await index.deleteBy({ agentId: AGENT, threadIds: ['thread_A', 'thread_B'], observationId: 'obs_B' });
    expect(await listed(index)).toEqual(newestFirst([inA, inC]));
    await index.deleteBy({ agentId: AGENT, threadIds: ['thread_A', 'thread_C'] });
    expect(await listed(index)).toEqual([]);
    expect(await index.stats({ agentId: OTHER_AGENT })).toEqual({ count: 1 });
    const result = await index.search({ agentId: AGENT, text: 'Caroline hiking', vector: axis(0), limit: 5 });
    expect(result).toEqual({ lexical: [], semantic: [] });
  });

  test('list: newest first (createdAt desc, then id desc), only the agent, only current by default', async ({ index }) => {
    const records = [
      memory({ createdAt: at(1) }),
      memory({ createdAt: at(3) }),
      memory({ createdAt: at(2) }),
      memory({ createdAt: at(2) }),
      memory({ createdAt: at(3) }),
    ];
    const superseded = memory({ createdAt: at(4), validTo: at(5) });
    await upsert(index, ...records, superseded, memory({ agentId: OTHER_AGENT, createdAt: at(9) }));
    const page = await index.list({ agentId: AGENT, limit: 10 });
    expect(page.records.map((record) => record.id)).toEqual(newestFirst(records));
    expect(page.nextCursor).toBeNull();
    expect(page.records.every((record) => !('vector' in record))).toBe(true);
    expect(await listed(index, { includeHistory: true })).toEqual(newestFirst([...records, superseded]));
    expect((await index.list({ agentId: 'agent_NOBODY', limit: 10 })).records).toEqual([]);
  });

  test('list: following cursors visits every record exactly once, pages in order', async ({ index }) => {
    // 37 records over 9 distinct createdAt values: ties on createdAt cross page boundaries.
    const records = Array.from({ length: 37 }, (_, i) => memory({ createdAt: at(i % 9), vector: axis(i) }));
    await upsert(index, ...records);
    for (const limit of [1, 5, 7, 37, 50]) {
      expect((await listAll(index, { agentId: AGENT, limit })).map((record) => record.id)).toEqual(newestFirst(records));
    }
    const first = await index.list({ agentId: AGENT, limit: 37 });
    expect(first.nextCursor).toBeNull();
  });

  test('list: a cursor stays valid while records are added before or after it', async ({ index }) => {
    const records = Array.from({ length: 10 }, (_, i) => memory({ createdAt: at(i) }));
    await upsert(index, ...records);
    const first = await index.list({ agentId: AGENT, limit: 4 });
    expect(first.records.map((record) => record.id)).toEqual(newestFirst(records).slice(0, 4));
    // A newer record lands before the cursor (not listed again), an older one after it (listed last).
    const newer = memory({ createdAt: at(100) });
    const older = memory({ createdAt: at(-100) });
    await upsert(index, newer, older);
    const rest: string[] = [];
    let cursor = first.nextCursor;
    while (cursor !== null) {
      const page = await index.list({ agentId: AGENT, limit: 4, cursor });
      rest.push(...page.records.map((record) => record.id));
      cursor = page.nextCursor;
    }
    expect(rest).toEqual([...newestFirst(records).slice(4), older.id]);
  });

  test('list: a cursor the index did not make is rejected with a RangeError', async ({ index }) => {
    await upsert(index, memory(), memory());
    await expect(index.list({ agentId: AGENT, limit: 1, cursor: 'not-a-cursor' })).rejects.toBeInstanceOf(RangeError);
    await expect(index.list({ agentId: AGENT, limit: 1, cursor: Buffer.from('{"c":1}').toString('base64url') })).rejects.toBeInstanceOf(RangeError);
  });

  test('list: each filter narrows to the matching records', async ({ index }) => {
    const src = 'src_01JCONF00000000000000000LS';
    const a = memory({ text: 'Ana bought a red BICYCLE', speaker: 'Ana', occurredAt: at(-30), createdAt: at(1), source: turnSource('thread_A', 'obs_1') });
    const b = memory({ text: 'Ben repaired the bicycle', speaker: 'Ben', occurredAt: null, createdAt: at(2), source: turnSource('thread_B', 'obs_2') });
    const c = memory({ text: 'Page two of the manual', speaker: 'manual', occurredAt: at(-10), createdAt: at(3), source: documentSource(src, 'thread_B', 'obs_3') });
    const d = memory({ text: 'Ana sold her bicycle', speaker: 'Ana', occurredAt: at(-5), createdAt: at(4), source: turnSource('thread_A', 'obs_1'), validTo: at(6) });
    await upsert(index, a, b, c, d);
    expect(await listed(index, { threadIds: ['thread_A'] })).toEqual([a.id]);
    expect(await listed(index, { threadIds: ['thread_A'], includeHistory: true })).toEqual([d.id, a.id]);
    expect(await listed(index, { threadIds: [] })).toEqual([]);
    expect(await listed(index, { sourceId: src })).toEqual([c.id]);
    expect(await listed(index, { observationId: 'obs_2' })).toEqual([b.id]);
    expect(await listed(index, { speaker: 'Ana', includeHistory: true })).toEqual([d.id, a.id]);
    expect(await listed(index, { learnedAfter: at(2) })).toEqual([c.id, b.id]);
    expect(await listed(index, { learnedBefore: at(2) })).toEqual([a.id]);
    expect(await listed(index, { learnedAfter: at(2), learnedBefore: at(3) })).toEqual([b.id]);
    expect(await listed(index, { occurredAfter: at(-10), includeHistory: true })).toEqual([d.id, c.id]);
    expect(await listed(index, { occurredBefore: at(-10) })).toEqual([a.id]);
    expect(await listed(index, { occurredAfter: at(-100) })).toEqual([c.id, a.id]);
    expect(await listed(index, { textContains: 'bicycle' })).toEqual([b.id, a.id]);
    expect(await listed(index, { textContains: 'BiCyClE', speaker: 'Ana', includeHistory: true })).toEqual([d.id, a.id]);
    expect(await listed(index, { textContains: "it's 100% _odd_" })).toEqual([]);
    // Filters and cursors together: one record a page.
    expect((await listAll(index, { agentId: AGENT, limit: 1, textContains: 'bicycle', includeHistory: true })).map((record) => record.id)).toEqual([d.id, b.id, a.id]);
  });

  test('list: textContains matches literally (no wildcards) and case-insensitively', async ({ index }) => {
    const percent = memory({ text: 'Growth was 100% in Q1_2026' });
    const plain = memory({ text: 'Growth was 1000 in Q1x2026' });
    await upsert(index, percent, plain);
    expect(await listed(index, { textContains: '100%' })).toEqual([percent.id]);
    expect(await listed(index, { textContains: 'q1_' })).toEqual([percent.id]);
    expect(await listed(index, { textContains: "o'" })).toEqual([]);
  });

  test('update: patches validity, supersededBy, suspicious and alsoFrom; absent fields stay; unknown ids are ignored', async ({ index }) => {
    const old = full();
    const other = memory({ text: 'unrelated', vector: axis(1) });
    await upsert(index, old, other);
    const replacement = memory({ text: 'Ana moved to Madrid', vector: axis(5) });
    await upsert(index, replacement);
    await index.update({
      agentId: AGENT,
      patches: [
        { id: old.id, validTo: at(20), supersededBy: replacement.id },
        { id: other.id, suspicious: true, alsoFrom: [turnSource('thread_Z', 'obs_Z', 2)] },
        { id: 'mem_UNKNOWN', validTo: at(1) },
      ],
    });
    const [gotOld] = await index.get({ agentId: AGENT, ids: [old.id] });
    expect(gotOld && hitOf(gotOld)).toEqual({ ...hitOf(old), validTo: at(20), supersededBy: replacement.id });
    const [gotOther] = await index.get({ agentId: AGENT, ids: [other.id] });
    expect(gotOther && hitOf(gotOther)).toEqual({ ...hitOf(other), suspicious: true, alsoFrom: [turnSource('thread_Z', 'obs_Z', 2)] });
    // Text and vector did not change: the record is still found by both channels where valid.
    const then = await index.search({ agentId: AGENT, text: 'Lisbon', vector: axis(5), limit: 5, asOf: at(15) });
    expect(ids(then.lexical)).toEqual([old.id]);
    expect(ids(then.semantic)).toContain(old.id);
    const now = await index.search({ agentId: AGENT, text: 'Ana moved', vector: axis(5), limit: 5 });
    expect(ids(now.lexical)).toEqual([replacement.id]);
    expect(ids(now.semantic)).toEqual([replacement.id, other.id]);
    expect(await listed(index)).toEqual(newestFirst([other, replacement]));
    // Back to current: validTo null again.
    await index.update({ agentId: AGENT, patches: [{ id: old.id, validTo: null, supersededBy: null }] });
    expect(await listed(index)).toEqual(newestFirst([old, other, replacement]));
    expect(await index.stats({ agentId: AGENT })).toEqual({ count: 3 });
  });

  test('update: never changes records of another agent, and an empty patch list is a no-op', async ({ index }) => {
    const theirs = memory({ agentId: OTHER_AGENT });
    await upsert(index, theirs);
    await index.update({ agentId: AGENT, patches: [{ id: theirs.id, validTo: at(1), suspicious: true }] });
    await index.update({ agentId: AGENT, patches: [] });
    const [got] = await index.get({ agentId: OTHER_AGENT, ids: [theirs.id] });
    expect(got && hitOf(got)).toEqual(hitOf(theirs));
  });

  test('copyAgent: copies keep provenance, validity and flags; supersededBy points at the copy of its target', async ({ index }) => {
    const current = full();
    const old = memory({ text: 'Ana lived in Porto', createdAt: at(1), validTo: at(8), supersededBy: current.id, suspicious: true });
    const dangling = memory({ text: 'Ana lived in Faro', createdAt: at(0), validTo: at(2), supersededBy: 'mem_GONE' });
    await upsert(index, current, old, dangling);
    let n = 0;
    const newIds = new Map<string, string>();
    await index.copyAgent({ fromAgentId: AGENT, toAgentId: OTHER_AGENT, toOrganizationId: ORG, newId: () => `mem_COPY${++n}` });
    const copies = await listAll(index, { agentId: OTHER_AGENT, limit: 10, includeHistory: true });
    expect(copies).toHaveLength(3);
    for (const copy of copies) {
      const original = [current, old, dangling].find((record) => record.text === copy.text)!;
      newIds.set(original.id, copy.id);
    }
    for (const copy of copies) {
      const original = [current, old, dangling].find((record) => record.text === copy.text)!;
      expect(copy).toEqual({
        ...hitOf(original),
        id: newIds.get(original.id),
        agentId: OTHER_AGENT,
        supersededBy: original.supersededBy === null ? null : (newIds.get(original.supersededBy) ?? original.supersededBy),
      });
    }
  });

  test('persistence: v2 fields and updates survive reopening the index', async ({ index, reopen }) => {
    const record = full();
    await upsert(index, record);
    await index.update({ agentId: AGENT, patches: [{ id: record.id, validTo: at(30), supersededBy: 'mem_NEXT' }] });
    const second = await reopen!();
    const [got] = await second.get({ agentId: AGENT, ids: [record.id] });
    expect(got && hitOf(got)).toEqual({ ...hitOf(record), validTo: at(30), supersededBy: 'mem_NEXT' });
    expect((await second.list({ agentId: AGENT, limit: 5 })).records).toEqual([]);
    expect((await second.list({ agentId: AGENT, limit: 5, includeHistory: true })).records.map((hit) => hit.id)).toEqual([record.id]);
  });

}
