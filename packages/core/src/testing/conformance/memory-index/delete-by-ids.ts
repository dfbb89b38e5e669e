import { expect } from 'vitest';
import type { MemoryIndex, MemoryRecord } from '../../../ports/memory-index.js';
import { AGENT, FINGERPRINT, OTHER_AGENT, axis, ids, memory, turnSource } from './fixtures.js';
import type { MemoryIndexCase } from './types.js';

const upsert = (index: MemoryIndex, ...records: MemoryRecord[]) => index.upsert({ records, embedder: FINGERPRINT });

/** `deleteBy({ ids })`: how an LLM writer's superseded memories leave the index. */
export function deleteByIdsCases(test: MemoryIndexCase): void {
  test('deleteBy: ids remove exactly the listed records of the agent', async ({ index }) => {
    const superseded = memory({ text: 'Ana lives in Porto', vector: axis(3) });
    const alsoSuperseded = memory({ text: 'Ana works in Porto', vector: axis(3) });
    const kept = memory({ text: 'Ana lives in Lisbon', vector: axis(3) });
    await upsert(index, superseded, alsoSuperseded, kept);
    await index.deleteBy({ agentId: AGENT, ids: [superseded.id, alsoSuperseded.id, 'mem_UNKNOWN'] });
    expect((await index.get({ agentId: AGENT, ids: [superseded.id, alsoSuperseded.id, kept.id] })).map((record) => record.id)).toEqual([kept.id]);
    expect(await index.stats({ agentId: AGENT })).toEqual({ count: 1 });
    const result = await index.search({ agentId: AGENT, text: 'Ana Porto', vector: axis(3), limit: 5 });
    expect(ids(result.lexical)).toEqual([kept.id]);
    expect(ids(result.semantic)).toEqual([kept.id]);
  });

  test('deleteBy: ids never remove records of another agent', async ({ index }) => {
    const theirs = memory({ agentId: OTHER_AGENT });
    await upsert(index, theirs);
    await index.deleteBy({ agentId: AGENT, ids: [theirs.id] });
    expect(await index.get({ agentId: OTHER_AGENT, ids: [theirs.id] })).toHaveLength(1);
  });

  test('deleteBy: an empty id list removes nothing', async ({ index }) => {
    await upsert(index, memory(), memory());
    await index.deleteBy({ agentId: AGENT, ids: [] });
    expect(await index.stats({ agentId: AGENT })).toEqual({ count: 2 });
  });

  test('deleteBy: ids combine with the other fields', async ({ index }) => {
    const inA = memory({ source: turnSource('thread_A', 'obs_A1') });
    const inB = memory({ source: turnSource('thread_B', 'obs_B1') });
    await upsert(index, inA, inB);
    await index.deleteBy({ agentId: AGENT, threadId: 'thread_A', ids: [inA.id, inB.id] });
    expect((await index.get({ agentId: AGENT, ids: [inA.id, inB.id] })).map((record) => record.id)).toEqual([inB.id]);
  });

  test('persistence: records deleted by id stay deleted when the index is opened again', async ({ index, reopen }) => {
    const gone = memory();
    const kept = memory();
    await upsert(index, gone, kept);
    await index.deleteBy({ agentId: AGENT, ids: [gone.id] });
    const second = await reopen!();
    expect((await second.get({ agentId: AGENT, ids: [gone.id, kept.id] })).map((record) => record.id)).toEqual([kept.id]);
  });
}
