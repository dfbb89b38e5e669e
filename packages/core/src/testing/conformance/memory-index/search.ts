import { expect } from 'vitest';
import type { MemoryHit, MemoryIndex, MemoryRecord } from '../../../ports/memory-index.js';
import { AGENT, FINGERPRINT, OTHER_AGENT, atCosine, axis, ids, memory, random, randomVector } from './fixtures.js';
import type { MemoryIndexCase } from './types.js';

const upsert = (index: MemoryIndex, ...records: MemoryRecord[]) => index.upsert({ records, embedder: FINGERPRINT });

function expectOrdered(hits: readonly MemoryHit[]): void {
  for (let i = 1; i < hits.length; i++) {
    const previous = hits[i - 1]!;
    const current = hits[i]!;
    expect(previous.score >= current.score).toBe(true);
    if (previous.score === current.score) expect(previous.record.id < current.record.id).toBe(true);
  }
}

/** The two search channels: lexical (BM25-like) and semantic (cosine). */
export function searchCases(test: MemoryIndexCase): void {
  test('lexical: returns only records sharing a query term', async ({ index }) => {
    const cat = memory({ text: 'The cat slept on the windowsill' });
    const dog = memory({ text: 'A dog barked at the mailman' });
    const bird = memory({ text: 'Birds sang at dawn' });
    await upsert(index, cat, dog, bird);
    const { lexical } = await index.search({ agentId: AGENT, text: 'cat windowsill parrot', vector: null, limit: 10 });
    expect(ids(lexical)).toEqual([cat.id]);
    const none = await index.search({ agentId: AGENT, text: 'submarine', vector: null, limit: 10 });
    expect(none.lexical).toEqual([]);
  });

  test('lexical: a record matching more query terms ranks first', async ({ index }) => {
    const common = Array.from({ length: 6 }, (_, i) => memory({ text: `We talked about the garden and weather number ${i}` }));
    const two = memory({ text: 'The zebra grazed near the garden' });
    const three = memory({ text: 'A zebra and a unicorn grazed in the garden' });
    await upsert(index, ...common, two, three);
    const { lexical } = await index.search({ agentId: AGENT, text: 'zebra unicorn garden', vector: null, limit: 10 });
    expect(lexical[0]!.record.id).toBe(three.id);
    expect(lexical[1]!.record.id).toBe(two.id);
    expect(lexical).toHaveLength(8);
    expectOrdered(lexical);
  });

  test('lexical: a rare term outweighs a common one (idf)', async ({ index }) => {
    const rare = memory({ id: 'mem_ZZZZ00000000000000000000001', text: 'the zebra slept' });
    const common = Array.from({ length: 6 }, () => memory({ text: 'the garden slept' }));
    await upsert(index, rare, ...common);
    const { lexical } = await index.search({ agentId: AGENT, text: 'zebra garden', vector: null, limit: 10 });
    expect(lexical[0]!.record.id).toBe(rare.id);
    expect(lexical).toHaveLength(7);
  });

  test('lexical: words only in keywords are matched', async ({ index }) => {
    const record = memory({ text: 'She finally got the job', keywords: 'Caroline counselor 2023-05-08' });
    await upsert(index, record, memory({ text: 'He got a new car' }));
    const { lexical } = await index.search({ agentId: AGENT, text: 'counselor', vector: null, limit: 10 });
    expect(ids(lexical)).toEqual([record.id]);
  });

  test('lexical: case and inflection do not matter', async ({ index }) => {
    const record = memory({ text: 'Caroline was Running in new SHOES' });
    await upsert(index, record, memory({ text: 'Melanie baked bread' }));
    const { lexical } = await index.search({ agentId: AGENT, text: 'run shoe', vector: null, limit: 10 });
    expect(ids(lexical)).toEqual([record.id]);
  });

  test('lexical: empty text gives no lexical hits', async ({ index }) => {
    await upsert(index, memory());
    const result = await index.search({ agentId: AGENT, text: '', vector: axis(0), limit: 10 });
    expect(result.lexical).toEqual([]);
    expect(result.semantic).toHaveLength(1);
  });

  test('lexical: query punctuation and operators are plain text', async ({ index }) => {
    const record = memory({ text: "Caroline's friend O'Brien said: 50% off & free (really)!" });
    await upsert(index, record);
    for (const text of ["O'Brien & friend | !(off)", "'; DROP TABLE x; --", 'a:b* "quoted" -not +must ~fuzzy^2', '\\ / ? < >']) {
      const result = await index.search({ agentId: AGENT, text, vector: null, limit: 10 });
      expectOrdered(result.lexical);
    }
    const { lexical } = await index.search({ agentId: AGENT, text: "O'Brien & friend | !(off)", vector: null, limit: 10 });
    expect(ids(lexical)).toEqual([record.id]);
  });

  test('semantic: ranks by cosine similarity and returns it as the score', async ({ index }) => {
    const close = memory({ vector: atCosine(0.9) });
    const middle = memory({ vector: atCosine(0.5) });
    const orthogonal = memory({ vector: axis(1) });
    const opposite = memory({ vector: atCosine(-0.4) });
    // Length must not matter for cosine: a long vector pointing the same way scores 0.7.
    const scaled = memory({ vector: atCosine(0.7).map((value) => value * 5) });
    await upsert(index, orthogonal, opposite, middle, close, scaled);
    const { semantic } = await index.search({ agentId: AGENT, text: '', vector: axis(0), limit: 10 });
    expect(ids(semantic)).toEqual([close.id, scaled.id, middle.id, orthogonal.id, opposite.id]);
    const scores = semantic.map((hit) => hit.score);
    [0.9, 0.7, 0.5, 0, -0.4].forEach((expected, i) => expect(scores[i]).toBeCloseTo(expected, 3));
  });

  test('semantic: a null vector gives no semantic hits', async ({ index }) => {
    await upsert(index, memory());
    const result = await index.search({ agentId: AGENT, text: 'hiking', vector: null, limit: 10 });
    expect(result.semantic).toEqual([]);
    expect(result.lexical).toHaveLength(1);
  });

  test('search: never returns records of another agent, even with identical text and vector', async ({ index }) => {
    const mine = memory({ text: 'The secret code is tangerine', vector: axis(9) });
    const theirs = memory({ agentId: OTHER_AGENT, text: 'The secret code is tangerine', vector: axis(9) });
    await upsert(index, mine, theirs);
    const result = await index.search({ agentId: AGENT, text: 'secret tangerine', vector: axis(9), limit: 10 });
    expect(ids(result.lexical)).toEqual([mine.id]);
    expect(ids(result.semantic)).toEqual([mine.id]);
    const nobody = await index.search({ agentId: 'agent_NOBODY', text: 'secret tangerine', vector: axis(9), limit: 10 });
    expect(nobody).toEqual({ lexical: [], semantic: [] });
  });

  test("search: another agent's many better matches do not crowd out the agent's hits", async ({ index }) => {
    const crowd = Array.from({ length: 60 }, () =>
      memory({ agentId: OTHER_AGENT, text: 'tangerine tangerine tangerine orchard', vector: axis(9) }),
    );
    const mine = memory({ text: 'one tangerine among many other words in a long sentence', vector: atCosine(0.2) });
    await upsert(index, ...crowd, mine);
    const result = await index.search({ agentId: AGENT, text: 'tangerine orchard', vector: axis(9), limit: 3 });
    expect(ids(result.lexical)).toEqual([mine.id]);
    expect(ids(result.semantic)).toEqual([mine.id]);
  });

  test('search: ties are ordered by id ascending', async ({ index }) => {
    // Inserted out of order; "mem_Z…" sorts before "mem_a…" by code unit, as in SQL COLLATE "C".
    const tied = ['mem_b0000000000000000000000001', 'mem_Z0000000000000000000000001', 'mem_a0000000000000000000000001', 'mem_A0000000000000000000000001'];
    await upsert(index, ...tied.map((id) => memory({ id, text: 'identical words about kayaks', vector: axis(11) })));
    const result = await index.search({ agentId: AGENT, text: 'kayaks', vector: axis(11), limit: 3 });
    const expected = [...tied].sort().slice(0, 3);
    expect(ids(result.lexical)).toEqual(expected);
    expect(ids(result.semantic)).toEqual(expected);
  });

  test('search: at most limit hits per channel, in score order', async ({ index }) => {
    const next = random(7);
    await upsert(index, ...Array.from({ length: 25 }, (_, i) => memory({ text: `note ${i} about the harbour and boats`, vector: randomVector(next) })));
    const result = await index.search({ agentId: AGENT, text: 'harbour boats', vector: randomVector(next), limit: 7 });
    expect(result.lexical).toHaveLength(7);
    expect(result.semantic).toHaveLength(7);
    expectOrdered(result.lexical);
    expectOrdered(result.semantic);
    const one = await index.search({ agentId: AGENT, text: 'harbour', vector: axis(0), limit: 1 });
    expect(one.lexical).toHaveLength(1);
    expect(one.semantic).toHaveLength(1);
  });

  test('search: 2,000 records still give the exact top hit on both channels', async ({ index }) => {
    const next = random(42);
    const vocabulary = Array.from({ length: 300 }, (_, i) => `word${i.toString(36)}x`);
    const records = Array.from({ length: 2000 }, (_, i) => {
      const words = new Set<string>();
      while (words.size < 8) words.add(vocabulary[Math.floor(next() * vocabulary.length)]!);
      return memory({ text: `${[...words].join(' ')} serial${i}q`, vector: randomVector(next), agentId: i % 10 === 9 ? OTHER_AGENT : AGENT });
    });
    for (let start = 0; start < records.length; start += 500) await upsert(index, ...records.slice(start, start + 500));
    expect(await index.stats({ agentId: AGENT })).toEqual({ count: 1800 });

    const target = records[1234]!;
    const query = new Float32Array(target.vector);
    for (let i = 0; i < query.length; i++) query[i]! += (next() - 0.5) * 0.02;
    // Every record has 8 distinct words; the target is the only one with its serial.
    const firstWord = target.text.split(' ')[0]!;
    const result = await index.search({ agentId: AGENT, text: `${firstWord} serial1234q`, vector: query, limit: 10 });
    expect(result.lexical[0]!.record.id).toBe(target.id);
    expect(result.semantic[0]!.record.id).toBe(target.id);
    expect(result.semantic[0]!.score).toBeGreaterThan(0.99);
    expect(result.lexical.length).toBeGreaterThan(1);
    expect(result.semantic).toHaveLength(10);
    for (const hit of [...result.lexical, ...result.semantic]) expect(hit.record.agentId).toBe(AGENT);
    expectOrdered(result.lexical);
    expectOrdered(result.semantic);
  });
}
