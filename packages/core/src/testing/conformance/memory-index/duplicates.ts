import { expect } from 'vitest';
import { duplicateKey } from '../../../memory/duplicates.js';
import type { MemoryIndex, MemoryRecord } from '../../../ports/memory-index.js';
import { AGENT, FINGERPRINT, OTHER_AGENT, documentSource, memory, turnSource } from './fixtures.js';
import type { MemoryIndexCase } from './types.js';

const upsert = (index: MemoryIndex, ...records: MemoryRecord[]) => index.upsert({ records, embedder: FINGERPRINT });
const keyOf = (record: MemoryRecord) => duplicateKey(record)!;

/** The ids `findDuplicates` returns for the keys of `records`, sorted. */
async function found(index: MemoryIndex, agentId: string, records: MemoryRecord[]): Promise<string[]> {
  expect(index.findDuplicates, 'this index does not implement findDuplicates').toBeTypeOf('function');
  const hits = await index.findDuplicates!({ agentId, keys: records.map(keyOf) });
  return hits.map((hit) => hit.id).sort();
}

/**
 * Near-duplicates (issue 33): `findDuplicates` finds the agent's current records by the duplicate
 * key the index stores with each record (core's `duplicateKey`), whole records without vectors;
 * history, other agents' records, document pieces and short replies are never returned; the key
 * follows copies and goes with deletes; `update` keeps it.
 */
export function duplicateCases(test: MemoryIndexCase): void {
  test('duplicates: findDuplicates finds current records of the agent by duplicate key, in one call', async ({ index }) => {
    const sister = memory({ text: 'My sister lives in Lisbon now.', speaker: 'Dana' });
    const again = memory({ text: 'my sister lives in LISBON now!', speaker: 'Dana', source: turnSource(undefined, 'obs_01JCONF0000000000000000009', 2) });
    const sam = memory({ text: 'My sister lives in Lisbon now.', speaker: 'Sam' });
    const kitten = memory({ text: 'We adopted a grey kitten yesterday', speaker: 'Dana' });
    const old = memory({ text: 'We adopted a grey kitten yesterday', speaker: 'Dana', validTo: '2026-02-01T00:00:00.000Z' });
    const other = memory({ text: 'My sister lives in Lisbon now.', speaker: 'Dana', agentId: OTHER_AGENT });
    const piece = memory({ text: 'My sister lives in Lisbon now.', speaker: 'Dana', source: documentSource('src_01JCONF0000000000000000000D') });
    const short = memory({ text: 'Thanks a lot!', speaker: 'Dana' });
    await upsert(index, sister, again, sam, kitten, old, other, piece, short);
    expect(duplicateKey(piece)).toBeNull();
    expect(duplicateKey(short)).toBeNull();
    expect(await found(index, AGENT, [sister])).toEqual([sister.id, again.id].sort());
    expect(await found(index, AGENT, [sister, kitten, sam])).toEqual([sister.id, again.id, sam.id, kitten.id].sort());
    expect(await found(index, AGENT, [])).toEqual([]);
    expect(await found(index, OTHER_AGENT, [sister])).toEqual([other.id]);
    const [hit] = await index.findDuplicates!({ agentId: AGENT, keys: [keyOf(kitten)] });
    const { vector: _vector, ...withoutVector } = kitten;
    expect(hit).toEqual(withoutVector);
  });

  test('duplicates: the key survives update, follows copyAgent and goes with deleteBy and supersession', async ({ index }) => {
    const sister = memory({ text: 'My sister lives in Lisbon now.', speaker: 'Dana' });
    await upsert(index, sister);
    await index.update({ agentId: AGENT, patches: [{ id: sister.id, alsoFrom: [turnSource(undefined, 'obs_01JCONF0000000000000000009', 1)] }] });
    const [updated] = await index.findDuplicates!({ agentId: AGENT, keys: [keyOf(sister)] });
    expect(updated?.alsoFrom).toEqual([turnSource(undefined, 'obs_01JCONF0000000000000000009', 1)]);
    let n = 0;
    await index.copyAgent({ fromAgentId: AGENT, toAgentId: OTHER_AGENT, toOrganizationId: sister.organizationId, newId: () => `mem_01JCONFCOPY${String(++n).padStart(15, '0')}` });
    expect(await found(index, OTHER_AGENT, [sister])).toEqual(['mem_01JCONFCOPY000000000000001']);
    await index.update({ agentId: AGENT, patches: [{ id: sister.id, validTo: '2026-02-01T00:00:00.000Z' }] });
    expect(await found(index, AGENT, [sister])).toEqual([]);
    await index.update({ agentId: AGENT, patches: [{ id: sister.id, validTo: null }] });
    expect(await found(index, AGENT, [sister])).toEqual([sister.id]);
    await index.deleteBy({ agentId: AGENT, ids: [sister.id] });
    expect(await found(index, AGENT, [sister])).toEqual([]);
  });

  test('persistence: duplicate keys are found through another instance', async ({ index, reopen }) => {
    const sister = memory({ text: 'My sister lives in Lisbon now.', speaker: 'Dana' });
    await upsert(index, sister);
    expect(await found(await reopen!(), AGENT, [sister])).toEqual([sister.id]);
  });
}
