import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { listPage, type MemoryHitRecord, type MemoryIndex, type MemoryListRequest, type MemoryRecord } from '@memory-agents/core/adapter';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { lancedbMemoryIndex } from './lancedb-memory-index.js';
import { ListCache, type AgentList, type ListEntry } from './list-cache.js';
import { toRow } from './rows.js';

const embedder = { id: 'test:4', dimensions: 4 };
const AGENT = 'agent_list_a';
const OTHER = 'agent_list_b';
const T0 = Date.parse('2026-03-01T00:00:00.000Z');

let seed = 7;
const random = () => (seed = (seed * 16807) % 2147483647) / 2147483647;

let counter = 0;
/** A record of `agentId`; createdAt on a coarse grid so ties (broken by id) are common. */
function record(agentId: string, overrides: Partial<MemoryRecord> = {}): MemoryRecord {
  const n = ++counter;
  const createdAt = new Date(T0 + Math.floor(random() * 40) * 60_000).toISOString();
  const thread = `thread_${Math.floor(random() * 3)}`;
  const isDocument = random() < 0.2;
  return {
    id: `mem_${String(Math.floor(random() * 1e6)).padStart(7, '0')}_${n}`,
    organizationId: 'org_1',
    agentId,
    text: `memory ${n} about ${random() < 0.5 ? 'kayaks' : 'gardens'}`,
    keywords: '',
    vector: Float32Array.from([1, random(), random(), 0]),
    speaker: random() < 0.5 ? 'Ana' : null,
    occurredAt: random() < 0.7 ? new Date(T0 - Math.floor(random() * 100) * 3_600_000).toISOString() : null,
    source: isDocument
      ? { kind: 'document', threadId: thread, observationId: `obs_${n % 7}`, turnIndex: 0, sourceId: `src_${n % 2}`, page: 1, filename: 'a.pdf' }
      : { kind: 'turn', threadId: thread, observationId: `obs_${n % 7}`, turnIndex: n % 5 },
    createdAt,
    provenance: { writer: 'test', jobId: null, span: null },
    alsoFrom: [],
    validFrom: createdAt,
    validTo: null,
    supersededBy: null,
    suspicious: false, expiresAt: null,
    ...overrides,
  };
}

const hitOf = ({ vector: _vector, ...rest }: MemoryRecord): MemoryHitRecord => rest;

/** Every page of a list request, following cursors. */
async function listAll(index: MemoryIndex, request: Omit<MemoryListRequest, 'cursor'>): Promise<MemoryHitRecord[]> {
  const all: MemoryHitRecord[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 1000; page++) {
    const result: Awaited<ReturnType<MemoryIndex['list']>> = await index.list({ ...request, cursor });
    all.push(...result.records);
    if (result.nextCursor === null) return all;
    cursor = result.nextCursor;
  }
  throw new Error('list did not end');
}

/** The same request over the records the test knows are stored (core's reference `listPage`). */
function expected(model: Map<string, MemoryRecord>, request: Omit<MemoryListRequest, 'cursor' | 'limit'>): MemoryHitRecord[] {
  return listPage([...model.values()].map(hitOf), { ...request, limit: 100_000 }).records;
}

const FILTERS: Omit<MemoryListRequest, 'agentId' | 'limit' | 'cursor'>[] = [
  {},
  { includeHistory: true },
  { threadIds: ['thread_1', 'thread_2'] },
  { sourceId: 'src_1', includeHistory: true },
  { observationId: 'obs_3' },
  { speaker: 'Ana' },
  { learnedAfter: new Date(T0 + 10 * 60_000).toISOString(), learnedBefore: new Date(T0 + 30 * 60_000).toISOString() },
  { occurredAfter: new Date(T0 - 50 * 3_600_000).toISOString(), includeHistory: true },
  { occurredBefore: new Date(T0 - 20 * 3_600_000).toISOString() },
];

/** Lists every agent of the model with every filter (pages of 17) and compares with the reference. */
async function expectListsMatch(index: MemoryIndex, model: Map<string, MemoryRecord>, agents: readonly string[]): Promise<void> {
  for (const agentId of agents) {
    const mine = new Map([...model].filter(([, stored]) => stored.agentId === agentId));
    for (const filters of FILTERS) {
      expect(await listAll(index, { agentId, limit: 17, ...filters }), `${agentId} ${JSON.stringify(filters)}`).toEqual(expected(mine, { agentId, ...filters }));
    }
  }
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function directory(): Promise<string> {
  const path = await mkdtemp(join(tmpdir(), 'memory-agents-lancedb-list-'));
  cleanups.push(() => rm(path, { recursive: true, force: true }));
  return path;
}

function open(uri: string): MemoryIndex {
  const index = lancedbMemoryIndex({ uri, settleAfterIdleMs: null, indexBuildsInChildProcess: false });
  cleanups.unshift(() => index.close());
  return index;
}

async function upsert(index: MemoryIndex, model: Map<string, MemoryRecord>, records: MemoryRecord[], newIds = false): Promise<void> {
  await index.upsert({ records, embedder, newIds });
  for (const stored of records) model.set(stored.id, stored);
}

describe('lancedb list: the in-memory list order', () => {
  it('lists, then sees exactly what each write of the instance changed, without rebuilding for its own upserts, updates and copies', async () => {
    const uri = await directory();
    const index = open(uri);
    const model = new Map<string, MemoryRecord>();
    await upsert(index, model, [...Array.from({ length: 240 }, () => record(AGENT)), ...Array.from({ length: 60 }, () => record(OTHER))]);
    // Index builds after the first write commit table versions of their own; let them finish.
    await (index as ReturnType<typeof lancedbMemoryIndex>).settle();
    await expectListsMatch(index, model, [AGENT, OTHER]);

    const builds = vi.spyOn(ListCache.prototype, 'set');
    // New records: a few (inserted one by one) and many (merged), as plain appends and as merges.
    await upsert(index, model, Array.from({ length: 3 }, () => record(AGENT)), true);
    await upsert(index, model, Array.from({ length: 40 }, () => record(AGENT)));
    await expectListsMatch(index, model, [AGENT, OTHER]);
    // Replacing records: another createdAt and thread; one record of the other agent moves to this one.
    const [first, second] = [...model.values()].filter((stored) => stored.agentId === AGENT);
    const moved = [...model.values()].find((stored) => stored.agentId === OTHER)!;
    await upsert(index, model, [
      { ...first!, createdAt: new Date(T0 + 99 * 60_000).toISOString(), source: { kind: 'turn', threadId: 'thread_2', observationId: 'obs_9', turnIndex: 0 } },
      { ...second!, createdAt: new Date(T0 - 99 * 60_000).toISOString(), speaker: 'Ben' },
      { ...moved, agentId: AGENT },
    ]);
    await expectListsMatch(index, model, [AGENT, OTHER]);
    // Superseding: gone from the default list, still in the history.
    const superseded = [...model.values()].filter((stored) => stored.agentId === AGENT).slice(5, 12);
    await index.update({ agentId: AGENT, patches: superseded.map((stored) => ({ id: stored.id, validTo: new Date(T0 + 50 * 60_000).toISOString(), supersededBy: first!.id })) });
    for (const stored of superseded) model.set(stored.id, { ...stored, validTo: new Date(T0 + 50 * 60_000).toISOString(), supersededBy: first!.id });
    await expectListsMatch(index, model, [AGENT, OTHER]);
    // A copy lands in a third agent the cache does not know yet (built once), and changes no other list.
    let copies = 0;
    await index.copyAgent({ fromAgentId: OTHER, toAgentId: 'agent_list_c', toOrganizationId: 'org_2', newId: () => `mem_copy_${String(++copies).padStart(4, '0')}` });
    const copied = await listAll(index, { agentId: 'agent_list_c', limit: 1000, includeHistory: true });
    expect(copied).toHaveLength([...model.values()].filter((stored) => stored.agentId === OTHER).length);
    await expectListsMatch(index, model, [AGENT, OTHER]);
    // Only the copy's agent was read from the table; the other lists followed the writes.
    expect(builds.mock.calls.map(([agentId]) => agentId)).toEqual(['agent_list_c']);

    // Deletions of every kind (a large share rebuilds the full-text index: a commit of its own).
    const agentRecords = () => [...model.values()].filter((stored) => stored.agentId === AGENT);
    const byIds = agentRecords().slice(0, 4).map((stored) => stored.id);
    await index.deleteBy({ agentId: AGENT, ids: [...byIds, moved.id.replace('mem_', 'mem_missing_')] });
    for (const id of byIds) model.delete(id);
    await index.deleteBy({ agentId: AGENT, threadId: 'thread_0' });
    for (const stored of agentRecords()) if (stored.source.threadId === 'thread_0') model.delete(stored.id);
    await index.deleteBy({ agentId: AGENT, observationId: 'obs_2', sourceId: 'src_0' });
    for (const stored of agentRecords()) if (stored.source.observationId === 'obs_2' && stored.source.kind === 'document' && stored.source.sourceId === 'src_0') model.delete(stored.id);
    await index.deleteBy({ agentId: AGENT, threadIds: ['thread_2'], observationId: 'obs_5' });
    for (const stored of agentRecords()) if (stored.source.threadId === 'thread_2' && stored.source.observationId === 'obs_5') model.delete(stored.id);
    await expectListsMatch(index, model, [AGENT, OTHER]);
    // A fresh instance (lists read from the table) agrees.
    const fresh = open(uri);
    for (const filters of FILTERS) expect(await listAll(fresh, { agentId: AGENT, limit: 50, ...filters })).toEqual(await listAll(index, { agentId: AGENT, limit: 23, ...filters }));
  });

  it('sees writes another instance made on the same directory (the table version moved)', async () => {
    const uri = await directory();
    const reader = open(uri);
    const writer = open(uri);
    const model = new Map<string, MemoryRecord>();
    await upsert(writer, model, Array.from({ length: 120 }, () => record(AGENT)));
    await (writer as ReturnType<typeof lancedbMemoryIndex>).settle();
    await expectListsMatch(reader, model, [AGENT]);

    await upsert(writer, model, Array.from({ length: 2 }, () => record(AGENT)), true);
    await expectListsMatch(reader, model, [AGENT]);
    const [a, b] = [...model.values()];
    await writer.update({ agentId: AGENT, patches: [{ id: a!.id, validTo: new Date(T0).toISOString() }] });
    model.set(a!.id, { ...a!, validTo: new Date(T0).toISOString() });
    await writer.deleteBy({ agentId: AGENT, ids: [b!.id] });
    model.delete(b!.id);
    await expectListsMatch(reader, model, [AGENT]);
    // The reader's own write after the other's: its list missed a version, so it is read again.
    await upsert(reader, model, [record(AGENT)]);
    await upsert(writer, model, [{ ...[...model.values()][5]!, createdAt: new Date(T0 + 500 * 60_000).toISOString() }]);
    await upsert(reader, model, [record(AGENT)]);
    await expectListsMatch(reader, model, [AGENT]);
    await expectListsMatch(writer, model, [AGENT]);
  });
});

describe('ListCache', () => {
  const entry = (id: string, at: number): ListEntry => ({ id, at, current: true, threadId: 't', sourceId: null, observationId: 'o', speaker: null, occurred: null, key: null, expires: null });
  const listOf = (version: number, entries: ListEntry[]): AgentList => ({ version, entries, byId: new Map(entries.map((item) => [item.id, item])) });
  const row = (agentId: string, id: string, at: number) => ({ ...toRow(record(agentId, { id, createdAt: new Date(at).toISOString() })) });

  it('follows a commit made right after its version, drops a list that missed one, keeps one built later', () => {
    const cache = new ListCache(1000);
    cache.set('a', listOf(5, [entry('m1', 1), entry('m3', 3)]));
    cache.set('b', listOf(7, [entry('n1', 1)]));
    cache.noteUpsert(6, [row('a', 'm2', 2), row('b', 'n0', 0)]);
    expect(cache.get('a', 6)!.entries.map((item) => item.id)).toEqual(['m1', 'm2', 'm3']);
    // b was built at version 7, after the commit: unchanged.
    expect(cache.get('b', 7)!.entries.map((item) => item.id)).toEqual(['n1']);
    cache.noteDelete(7, 'a', (item) => item.id === 'm1');
    expect(cache.get('a', 7)!.entries.map((item) => item.id)).toEqual(['m2', 'm3']);
    // Version 8 was somebody else's: the commit of 9 cannot be applied, the lists are dropped.
    cache.noteUpsert(9, [row('a', 'm4', 4)]);
    expect(cache.get('a', 9)).toBeNull();
    expect(cache.get('b', 9)).toBeNull();
    expect(cache.size).toBe(0);
  });

  it('moves a record between agents and replaces it in place of its old position', () => {
    const cache = new ListCache(1000);
    cache.set('a', listOf(1, [entry('m1', 1), entry('m2', 2)]));
    cache.set('b', listOf(1, [entry('n1', 1)]));
    cache.noteUpsert(2, [row('b', 'm1', 5)]);
    expect(cache.get('a', 2)!.entries.map((item) => item.id)).toEqual(['m2']);
    expect(cache.get('b', 2)!.entries.map((item) => [item.id, item.at])).toEqual([['n1', 1], ['m1', 5]]);
  });

  it('steps over versions of its own index builds, but not over a version another writer slipped in', async () => {
    const cache = new ListCache(1000);
    let tableVersion = 5;
    const table = { version: async () => tableVersion };
    cache.set('a', listOf(5, [entry('m1', 1)]));
    // An index build (one commit) with one of the instance's own writes in the middle of it.
    await cache.noData(table, 1, async () => {
      tableVersion = 7;
      cache.noteUpsert(7, [row('a', 'm2', 2)]);
    });
    expect(cache.get('a', 7)).toBeNull(); // the write came before the build was known: dropped
    cache.set('a', listOf(7, [entry('m1', 1), entry('m2', 2)]));
    await cache.noData(table, 1, async () => {
      tableVersion = 8;
    });
    expect(cache.get('a', 8)!.entries.map((item) => item.id)).toEqual(['m1', 'm2']);
    await cache.noData(table, 4, async () => {
      tableVersion = 12;
    });
    cache.noteUpsert(13, [row('a', 'm3', 3)]);
    expect(cache.get('a', 13)!.entries.map((item) => item.id)).toEqual(['m1', 'm2', 'm3']);
    // A build of one commit during which another process committed too: two versions, unexplained.
    await cache.noData(table, 1, async () => {
      tableVersion = 15;
    });
    expect(cache.get('a', 15)).toBeNull();
  });

  it('keeps at most its record budget, dropping the least recently listed agents', () => {
    const cache = new ListCache(5);
    cache.set('a', listOf(1, [entry('a1', 1), entry('a2', 2)]));
    cache.set('b', listOf(1, [entry('b1', 1), entry('b2', 2)]));
    expect(cache.get('a', 1)).not.toBeNull();
    cache.set('c', listOf(1, [entry('c1', 1), entry('c2', 2)]));
    expect(cache.get('b', 1)).toBeNull();
    expect(cache.get('a', 1)).not.toBeNull();
    expect(cache.size).toBe(4);
    // An agent over the whole budget is not kept.
    cache.set('d', listOf(1, Array.from({ length: 6 }, (_, i) => entry(`d${i}`, i))));
    expect(cache.get('d', 1)).toBeNull();
  });
});
