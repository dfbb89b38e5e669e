import { expect } from 'vitest';
import type { MemoryIndex, MemoryRecord } from '../../../ports/memory-index.js';
import { AGENT, FINGERPRINT, T0, axis, ids, memory } from './fixtures.js';
import type { MemoryIndexCase } from './types.js';

const upsert = (index: MemoryIndex, ...records: MemoryRecord[]) => index.upsert({ records, embedder: FINGERPRINT });

/** T0 plus `minutes`, as an ISO date-time. */
const at = (minutes: number) => new Date(Date.parse(T0) + minutes * 60_000).toISOString();

/** Every id `list` returns for the agent (one large page). */
const listed = async (index: MemoryIndex, now?: string) =>
  (await index.list({ agentId: AGENT, limit: 1000, cursor: null, ...(now === undefined ? {} : { now }) })).records.map((record) => record.id).sort();

/** Both channels' ids of a search that matches every fixture record (same words, same vector). */
const searched = async (index: MemoryIndex, now?: string) => {
  const result = await index.search({ agentId: AGENT, text: 'Ana trial', vector: axis(3), limit: 10, ...(now === undefined ? {} : { now }) });
  return { lexical: ids(result.lexical).sort(), semantic: ids(result.semantic).sort() };
};

/**
 * Expiry (issue 42): `expiresAt` round-trips; `search` and `list` given `now` leave out records with
 * `expiresAt <= now` (at that instant, both channels), and without `now` show them (audit);
 * `update` sets and clears it; `copyAgent` keeps it.
 */
export function expiryCases(test: MemoryIndexCase): void {
  const fixture = () => {
    const never = memory({ text: 'Ana trial never ends', vector: axis(3), createdAt: at(1) });
    const later = memory({ text: 'Ana trial ends later', vector: axis(3), createdAt: at(2), expiresAt: at(60) });
    const earlier = memory({ text: 'Ana trial ended earlier', vector: axis(3), createdAt: at(3), expiresAt: at(30) });
    return { never, later, earlier };
  };

  test('expiry: expiresAt round-trips through get, search and list (null by default)', async ({ index }) => {
    const { never, later } = fixture();
    await upsert(index, never, later);
    const found = await index.get({ agentId: AGENT, ids: [never.id, later.id] });
    expect(found.find((record) => record.id === never.id)?.expiresAt).toBeNull();
    expect(Date.parse(found.find((record) => record.id === later.id)?.expiresAt ?? '')).toBe(Date.parse(at(60)));
    const hits = await index.search({ agentId: AGENT, text: 'Ana trial', vector: axis(3), limit: 10 });
    const hit = [...hits.lexical, ...hits.semantic].find((candidate) => candidate.record.id === later.id);
    expect(Date.parse(hit?.record.expiresAt ?? '')).toBe(Date.parse(at(60)));
    const page = await index.list({ agentId: AGENT, limit: 10, cursor: null });
    expect(Date.parse(page.records.find((record) => record.id === later.id)?.expiresAt ?? '')).toBe(Date.parse(at(60)));
  });

  test('expiry: search and list given now leave out records expired at that instant; without now they show', async ({ index }) => {
    const { never, later, earlier } = fixture();
    await upsert(index, never, later, earlier);
    const all = [never.id, later.id, earlier.id].sort();
    expect(await searched(index)).toEqual({ lexical: all, semantic: all });
    expect(await listed(index)).toEqual(all);
    expect(await searched(index, at(29))).toEqual({ lexical: all, semantic: all });
    const live = [never.id, later.id].sort();
    // expiresAt <= now: gone at the very instant.
    expect(await searched(index, at(30))).toEqual({ lexical: live, semantic: live });
    expect(await listed(index, at(30))).toEqual(live);
    expect(await searched(index, at(120))).toEqual({ lexical: [never.id], semantic: [never.id] });
    expect(await listed(index, at(120))).toEqual([never.id]);
  });

  test('expiry: list given expiredBefore returns only records expired at or before it (retention), with the other filters and text', async ({ index }) => {
    const { never, later, earlier } = fixture();
    await upsert(index, never, later, earlier);
    const expired = async (before: string, extra: { textContains?: string } = {}) =>
      (await index.list({ agentId: AGENT, limit: 1000, cursor: null, includeHistory: true, expiredBefore: before, ...extra })).records.map((record) => record.id).sort();
    expect(await expired(at(29))).toEqual([]);
    expect(await expired(at(30))).toEqual([earlier.id]);
    expect(await expired(at(60))).toEqual([later.id, earlier.id].sort());
    expect(await expired(at(600), { textContains: 'ended' })).toEqual([earlier.id]);
    expect(await expired(at(600), { textContains: 'never' })).toEqual([]);
  });

  test('expiry: update sets and clears expiresAt, and search and list follow it at once', async ({ index }) => {
    const { never, later } = fixture();
    await upsert(index, never, later);
    await index.update({ agentId: AGENT, patches: [{ id: never.id, expiresAt: at(5) }, { id: later.id, expiresAt: null }] });
    const [got] = await index.get({ agentId: AGENT, ids: [never.id] });
    expect(Date.parse(got?.expiresAt ?? '')).toBe(Date.parse(at(5)));
    expect((await searched(index, at(10))).lexical).toEqual([later.id]);
    expect((await searched(index, at(10))).semantic).toEqual([later.id]);
    expect(await listed(index, at(10))).toEqual([later.id]);
    await index.update({ agentId: AGENT, patches: [{ id: never.id, expiresAt: null }] });
    expect(await listed(index, at(10))).toEqual([never.id, later.id].sort());
    // A patch without expiresAt leaves it as it is.
    await index.update({ agentId: AGENT, patches: [{ id: later.id, expiresAt: at(7) }] });
    await index.update({ agentId: AGENT, patches: [{ id: later.id, suspicious: true }] });
    expect(await listed(index, at(10))).toEqual([never.id]);
  });
}
