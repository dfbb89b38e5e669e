import { expect } from 'vitest';
import type { MemoryIndex, MemoryRecord } from '../../../ports/memory-index.js';
import { AGENT, FINGERPRINT, OTHER_AGENT, axis, ids, memory, turnSource } from './fixtures.js';
import type { MemoryIndexCase } from './types.js';

const upsert = (index: MemoryIndex, ...records: MemoryRecord[]) => index.upsert({ records, embedder: FINGERPRINT });
const lexical = async (index: MemoryIndex, text: string, agentId = AGENT) => (await index.search({ agentId, text, vector: null, limit: 10 })).lexical;

/** `rewriteKeywords` (issue 41): a deleted memory's words leave its neighbours' keywords. */
export function keywordCases(test: MemoryIndexCase): void {
  test('rewriteKeywords: a word only the old keywords held no longer matches; the text and the new keywords do', async ({ index }) => {
    const neighbour = memory({ text: 'Ana booked the flights', keywords: 'Ana 2026-01-01 booked flights Ana said zanzibarite tickets', vector: axis(4) });
    const other = memory({ text: 'Ben likes zanzibarite tea', vector: axis(5) });
    await upsert(index, neighbour, other);
    expect(ids(await lexical(index, 'zanzibarite')).sort()).toEqual([neighbour.id, other.id].sort());
    await index.rewriteKeywords({ agentId: AGENT, records: [{ id: neighbour.id, keywords: 'Ana 2026-01-01 booked flights tickets' }] });
    expect(ids(await lexical(index, 'zanzibarite'))).toEqual([other.id]);
    expect(ids(await lexical(index, 'tickets'))).toEqual([neighbour.id]);
    expect(ids(await lexical(index, 'flights'))).toEqual([neighbour.id]);
    // Every other field stays as it was; the vector channel still finds it.
    const [stored] = await index.get({ agentId: AGENT, ids: [neighbour.id] });
    const { vector, ...rest } = stored!;
    const { vector: _given, ...given } = neighbour;
    expect(rest).toEqual({ ...given, keywords: 'Ana 2026-01-01 booked flights tickets' });
    expect(Array.from(vector)).toEqual(Array.from(neighbour.vector));
    expect(ids((await index.search({ agentId: AGENT, text: '', vector: axis(4), limit: 1 })).semantic)).toEqual([neighbour.id]);
    expect((await index.list({ agentId: AGENT, limit: 10 })).records.find((record) => record.id === neighbour.id)?.keywords).toBe('Ana 2026-01-01 booked flights tickets');
  });

  test('rewriteKeywords: ids of another agent and unknown ids are ignored', async ({ index }) => {
    const theirs = memory({ agentId: OTHER_AGENT, keywords: 'quokkaberry' });
    await upsert(index, theirs);
    await index.rewriteKeywords({ agentId: AGENT, records: [{ id: theirs.id, keywords: '' }, { id: 'mem_UNKNOWN', keywords: 'x' }] });
    expect(ids(await lexical(index, 'quokkaberry', OTHER_AGENT))).toEqual([theirs.id]);
    expect(await index.stats({ agentId: AGENT })).toEqual({ count: 0 });
    await index.rewriteKeywords({ agentId: AGENT, records: [] });
  });

  test('rewriteKeywords: full-text scores are those of records written with the new keywords', async ({ index }) => {
    // The same three records under two agents: one rewritten, one written so from the start.
    const texts = ['Ana painted the fence', 'Ana painted a sunset over the fence', 'Ben fixed the fence'];
    const source = (i: number) => turnSource('thread_01JCONF000000000000000009', 'obs_01JCONF0000000000000000009', i);
    const rewritten = texts.map((text, i) => memory({ text, keywords: `fence fence ${i === 1 ? 'glimmerquartz glimmerquartz neighbour words' : 'paint'}`, source: source(i) }));
    const fresh = texts.map((text, i) => memory({ agentId: OTHER_AGENT, text, keywords: `fence fence ${i === 1 ? '' : 'paint'}`.trim(), source: source(i) }));
    await upsert(index, ...rewritten, ...fresh);
    await index.rewriteKeywords({ agentId: AGENT, records: [{ id: rewritten[1]!.id, keywords: 'fence fence' }] });
    expect(await lexical(index, 'glimmerquartz')).toEqual([]);
    for (const query of ['fence', 'painted sunset', 'paint fence Ben']) {
      const [a, b] = [await lexical(index, query), await lexical(index, query, OTHER_AGENT)];
      expect(a.map((hit) => hit.record.text), query).toEqual(b.map((hit) => hit.record.text));
      a.forEach((hit, i) => expect(hit.score, query).toBeCloseTo(b[i]!.score, 4));
    }
  });

  test('persistence: rewritten keywords stay rewritten when the index is opened again', async ({ index, reopen }) => {
    const record = memory({ keywords: 'ombrellino cables' });
    await upsert(index, record);
    await index.rewriteKeywords({ agentId: AGENT, records: [{ id: record.id, keywords: 'cables' }] });
    const second = await reopen!();
    expect(ids(await lexical(second, 'ombrellino'))).toEqual([]);
    expect(ids(await lexical(second, 'cables'))).toEqual([record.id]);
  });
}
