import { expect } from 'vitest';
import { EmbedderMismatchError, type EmbedderFingerprint, type MemoryIndex, type MemoryRecord } from '../../../ports/memory-index.js';
import { AGENT, DIMENSIONS, FINGERPRINT, OTHER_AGENT, ORG, T0, axis, documentSource, memory } from './fixtures.js';
import type { MemoryIndexCase } from './types.js';

/** Fewer dimensions than the suite's vectors (like 384 -> 256). */
const SMALLER: EmbedderFingerprint = { id: 'reembed-target-v1:8', dimensions: 8 };
/** More dimensions than the suite's vectors (like 384 -> 1536). */
const LARGER: EmbedderFingerprint = { id: 'reembed-target-v1:40', dimensions: 40 };

/** Unit vector along `axis` in `dimensions`. */
function along(dimensions: number, index: number): Float32Array {
  const vector = new Float32Array(dimensions);
  vector[index % dimensions] = 1;
  return vector;
}

/**
 * Three records of `AGENT` (one superseded: history), one of `OTHER_AGENT`. Under the suite's
 * embedder the first is nearest `axis(0)`; the target vectors put the *last* one of `AGENT` nearest
 * `along(d, 0)`, so a search after the switch shows which generation ranked it.
 */
async function seed(index: MemoryIndex): Promise<{ records: MemoryRecord[]; ids: string[] }> {
  const records = [
    memory({ text: 'Alice moved to Berlin in March', vector: axis(0) }),
    memory({ text: 'Alice lived in Lisbon before', vector: axis(1), validTo: '2026-02-01T00:00:00.000Z', supersededBy: null }),
    memory({ text: 'Alice plays the cello on Sundays', vector: axis(2), source: documentSource('src_01JCONFREEMBED0000000000001') }),
    memory({ agentId: OTHER_AGENT, organizationId: ORG, text: 'Bob keeps bees in Ghent', vector: axis(0) }),
  ];
  await index.upsert({ records, embedder: FINGERPRINT });
  return { records, ids: records.map((record) => record.id).sort() };
}

/** The target vector the seeded record `id` gets: the last of `AGENT` along axis 0, the rest elsewhere. */
function targetVector(records: MemoryRecord[], id: string, dimensions: number): Float32Array {
  const position = records.findIndex((record) => record.id === id);
  return along(dimensions, position === 2 ? 0 : position + 3);
}

/** Re-embeds every pending record in pages of `page` (the way the service's runner does). */
async function reembedAll(index: MemoryIndex, records: MemoryRecord[], to: EmbedderFingerprint, page = 2): Promise<number> {
  let written = 0;
  let after: string | null = null;
  for (;;) {
    const pending = await index.reembedPending({ limit: page, after });
    if (pending.length === 0) return written;
    await index.writeReembedded({ target: to, vectors: pending.map(({ id }) => ({ id, vector: targetVector(records, id, to.dimensions) })) });
    written += pending.length;
    after = pending.at(-1)!.id;
  }
}

/**
 * Re-embedding (issue 39): a target generation beside the current one, pending records in id
 * order, progress, the atomic switch (to fewer and to more dimensions), writes during a re-embed,
 * a switch back, a change of target and, when persistent, a resume after reopening.
 */
export function reembedCases(test: MemoryIndexCase): void {
  test('reembed: an empty index has nothing to re-embed', async ({ index }) => {
    await index.beginReembed({ target: SMALLER });
    expect(await index.reembedProgress()).toBeNull();
    expect(await index.reembedPending({ limit: 10 })).toEqual([]);
    expect(await index.embedder()).toBeNull();
  });

  for (const to of [SMALLER, LARGER]) {
    test(`reembed: every record of every agent, history too, moves to ${to.dimensions} dimensions at the switch`, async ({ index }) => {
      const { records, ids } = await seed(index);
      expect(await index.reembedProgress()).toBeNull();
      await index.beginReembed({ target: to });
      expect(await index.reembedProgress()).toEqual({ from: FINGERPRINT, to, done: 0, total: 4 });

      // Pending: every agent, history included, id ascending, with the text to embed; paged by `after`.
      const first = await index.reembedPending({ limit: 3 });
      expect(first.map((entry) => entry.id)).toEqual(ids.slice(0, 3));
      const byId = new Map(records.map((record) => [record.id, record]));
      for (const entry of first) expect(entry).toEqual({ id: entry.id, agentId: byId.get(entry.id)!.agentId, text: byId.get(entry.id)!.text });
      expect((await index.reembedPending({ limit: 3, after: ids[2] })).map((entry) => entry.id)).toEqual(ids.slice(3));

      // Half written: still the current generation everywhere, and the switch is refused.
      await index.writeReembedded({ target: to, vectors: first.slice(0, 2).map(({ id }) => ({ id, vector: targetVector(records, id, to.dimensions) })) });
      expect(await index.reembedProgress()).toEqual({ from: FINGERPRINT, to, done: 2, total: 4 });
      expect((await index.reembedPending({ limit: 10 })).map((entry) => entry.id)).toEqual(ids.slice(2));
      expect(await index.embedder()).toEqual(FINGERPRINT);
      const during = await index.search({ agentId: AGENT, text: '', vector: axis(0), limit: 3 });
      expect(during.semantic[0]?.record.id).toBe(records[0]!.id);
      expect((await index.get({ agentId: AGENT, ids: [records[0]!.id] }))[0]!.vector).toEqual(axis(0));
      expect(await index.finishReembed({ target: to })).toBe(false);
      expect(await index.embedder()).toEqual(FINGERPRINT);

      expect(await reembedAll(index, records, to)).toBe(2);
      expect(await index.reembedProgress()).toEqual({ from: FINGERPRINT, to, done: 4, total: 4 });
      expect(await index.finishReembed({ target: to })).toBe(true);

      expect(await index.embedder()).toEqual(to);
      expect(await index.reembedProgress()).toBeNull();
      expect(await index.reembedPending({ limit: 10 })).toEqual([]);
      const after = await index.search({ agentId: AGENT, text: '', vector: along(to.dimensions, 0), limit: 3 });
      expect(after.semantic[0]?.record.id).toBe(records[2]!.id);
      expect(after.semantic[0]?.score).toBeCloseTo(1, 5);
      // History keeps its new vector too.
      const history = await index.get({ agentId: AGENT, ids: [records[1]!.id] });
      expect(history[0]!.vector).toEqual(targetVector(records, records[1]!.id, to.dimensions));
      expect(history[0]!.validTo).toBe(records[1]!.validTo);
      const other = await index.search({ agentId: OTHER_AGENT, text: 'bees', vector: targetVector(records, records[3]!.id, to.dimensions), limit: 3 });
      expect(other.semantic.map((hit) => hit.record.id)).toEqual([records[3]!.id]);
      expect(other.lexical.map((hit) => hit.record.id)).toEqual([records[3]!.id]);

      // Upserts now take the target and refuse the old fingerprint.
      await expect(index.upsert({ records: [memory({ vector: axis(0) })], embedder: FINGERPRINT })).rejects.toBeInstanceOf(EmbedderMismatchError);
      const fresh = memory({ text: 'Alice adopted a kitten called Mochi', vector: along(to.dimensions, 1) });
      await index.upsert({ records: [fresh], embedder: to });
      const found = await index.search({ agentId: AGENT, text: 'kitten', vector: along(to.dimensions, 1), limit: 1 });
      expect(found.semantic[0]?.record.id).toBe(fresh.id);
      expect(found.lexical[0]?.record.id).toBe(fresh.id);
    });
  }

  test('reembed: writes during a re-embed are pending; the target cannot be upserted; deletes take their vectors', async ({ index }) => {
    const { records } = await seed(index);
    await index.beginReembed({ target: SMALLER });
    await reembedAll(index, records, SMALLER);
    expect(await index.reembedProgress()).toMatchObject({ done: 4, total: 4 });

    await expect(index.upsert({ records: [memory({ vector: along(SMALLER.dimensions, 0) })], embedder: SMALLER })).rejects.toBeInstanceOf(EmbedderMismatchError);
    // A new record and a replaced one (same id, new text) need target vectors again.
    const added = memory({ text: 'Alice started learning Portuguese', vector: axis(3) });
    const replaced = { ...records[0]!, text: 'Alice moved to Hamburg in April' };
    await index.upsert({ records: [added, replaced], embedder: FINGERPRINT });
    expect(await index.reembedProgress()).toMatchObject({ done: 3, total: 5 });
    const pending = await index.reembedPending({ limit: 10 });
    expect(pending.map((entry) => entry.id)).toEqual([replaced.id, added.id].sort());
    expect(pending.find((entry) => entry.id === replaced.id)?.text).toBe('Alice moved to Hamburg in April');
    expect(await index.finishReembed({ target: SMALLER })).toBe(false);

    // Deleting a done record and a pending one takes both out of the counts.
    await index.deleteBy({ agentId: AGENT, ids: [records[2]!.id, added.id] });
    expect(await index.reembedProgress()).toMatchObject({ done: 2, total: 3 });
    // A copied agent counts, and its records are re-embedded before the switch.
    const copied = await index.copyAgent({ fromAgentId: OTHER_AGENT, toAgentId: 'agent_01JCONFREEMBEDCOPY0000001', toOrganizationId: ORG, newId: () => `mem_01JCONFZCOPY${String(Math.random()).slice(2, 14).padEnd(12, '0')}` });
    expect(copied.copied).toBe(1);
    const progress = await index.reembedProgress();
    expect(progress?.total).toBe(4);
    // The patch of an update leaves the target vector alone.
    await index.update({ agentId: AGENT, patches: [{ id: records[1]!.id, suspicious: true }] });
    let after: string | null = null;
    for (;;) {
      const page = await index.reembedPending({ limit: 1, after });
      if (page.length === 0) break;
      await index.writeReembedded({ target: SMALLER, vectors: page.map(({ id }) => ({ id, vector: along(SMALLER.dimensions, 5) })) });
      after = page[0]!.id;
    }
    expect(await index.reembedProgress()).toMatchObject({ done: 4, total: 4 });
    expect(await index.finishReembed({ target: SMALLER })).toBe(true);
    const [history] = await index.get({ agentId: AGENT, ids: [records[1]!.id] });
    expect(history!.suspicious).toBe(true);
    expect(history!.vector).toEqual(targetVector(records, records[1]!.id, SMALLER.dimensions));
    expect(await index.stats({ agentId: AGENT })).toEqual({ count: 2 });
    const [moved] = await index.get({ agentId: AGENT, ids: [replaced.id] });
    expect(moved!.text).toBe('Alice moved to Hamburg in April');
    expect(moved!.vector).toEqual(along(SMALLER.dimensions, 5));
  });

  test('reembed: vectors of another target or of other dimensions are refused; unknown ids are ignored', async ({ index }) => {
    const { records } = await seed(index);
    await expect(index.writeReembedded({ target: SMALLER, vectors: [{ id: records[0]!.id, vector: along(8, 0) }] })).rejects.toBeInstanceOf(EmbedderMismatchError);
    await index.beginReembed({ target: SMALLER });
    await expect(index.writeReembedded({ target: LARGER, vectors: [{ id: records[0]!.id, vector: along(40, 0) }] })).rejects.toBeInstanceOf(EmbedderMismatchError);
    await expect(
      index.writeReembedded({ target: SMALLER, vectors: [{ id: records[0]!.id, vector: along(8, 0) }, { id: records[1]!.id, vector: along(DIMENSIONS, 0) }] }),
    ).rejects.toBeInstanceOf(RangeError);
    expect(await index.reembedProgress()).toMatchObject({ done: 0, total: 4 });
    await index.writeReembedded({ target: SMALLER, vectors: [{ id: 'mem_01JCONFNOSUCHRECORD000000001', vector: along(8, 0) }, { id: records[0]!.id, vector: along(8, 0) }] });
    // Written twice: the later vector wins, counted once.
    await index.writeReembedded({ target: SMALLER, vectors: [{ id: records[0]!.id, vector: along(8, 1) }] });
    expect(await index.reembedProgress()).toMatchObject({ done: 1, total: 4 });
    expect(await index.finishReembed({ target: LARGER })).toBe(false);
  });

  test('reembed: a switch back to the current embedder ends the re-embed; another target starts over', async ({ index }) => {
    const { records } = await seed(index);
    await index.beginReembed({ target: SMALLER });
    await index.writeReembedded({ target: SMALLER, vectors: [{ id: records[0]!.id, vector: along(8, 0) }] });
    // The same target again: a resume, nothing lost.
    await index.beginReembed({ target: SMALLER });
    expect(await index.reembedProgress()).toMatchObject({ to: SMALLER, done: 1, total: 4 });
    // Another target: its vectors start from nothing.
    await index.beginReembed({ target: LARGER });
    expect(await index.reembedProgress()).toEqual({ from: FINGERPRINT, to: LARGER, done: 0, total: 4 });
    expect(await index.finishReembed({ target: SMALLER })).toBe(false);
    // Back to the current one: no re-embed, the current generation untouched, upserts as before.
    await index.beginReembed({ target: FINGERPRINT });
    expect(await index.reembedProgress()).toBeNull();
    expect(await index.reembedPending({ limit: 10 })).toEqual([]);
    expect(await index.embedder()).toEqual(FINGERPRINT);
    const { semantic } = await index.search({ agentId: AGENT, text: '', vector: axis(0), limit: 1 });
    expect(semantic[0]?.record.id).toBe(records[0]!.id);
    await index.upsert({ records: [memory({ text: 'Alice bought a bicycle', vector: axis(4), createdAt: T0 })], embedder: FINGERPRINT });
    expect(await index.stats({ agentId: AGENT })).toEqual({ count: 4 });
    // And a re-embed begun afterwards starts from nothing.
    await index.beginReembed({ target: SMALLER });
    expect(await index.reembedProgress()).toMatchObject({ done: 0, total: 5 });
  });

  test('persistence: a re-embed resumes where it stopped in a second instance, and its switch persists', async ({ index, reopen }) => {
    const { records, ids } = await seed(index);
    await index.beginReembed({ target: LARGER });
    await index.writeReembedded({ target: LARGER, vectors: ids.slice(0, 2).map((id) => ({ id, vector: targetVector(records, id, LARGER.dimensions) })) });
    const second = await reopen!();
    expect(await second.reembedProgress()).toEqual({ from: FINGERPRINT, to: LARGER, done: 2, total: 4 });
    expect((await second.reembedPending({ limit: 10 })).map((entry) => entry.id)).toEqual(ids.slice(2));
    await second.beginReembed({ target: LARGER });
    expect(await reembedAll(second, records, LARGER)).toBe(2);
    expect(await second.finishReembed({ target: LARGER })).toBe(true);
    const third = await reopen!();
    expect(await third.embedder()).toEqual(LARGER);
    expect(await third.reembedProgress()).toBeNull();
    const { semantic } = await third.search({ agentId: AGENT, text: '', vector: along(LARGER.dimensions, 0), limit: 1 });
    expect(semantic[0]?.record.id).toBe(records[2]!.id);
  });
}
