import { expect } from 'vitest';
import type { MemoryMarkRecord, MemoryReview } from '../../../ports/store/index.js';
import type { StoreCase } from './harness.js';
import { iso, T0 } from './harness.js';
import { world } from './records.js';

function mark(organizationId: string, agentId: string, memoryId: string, overrides: Partial<MemoryMarkRecord> = {}): MemoryMarkRecord {
  return { organizationId, agentId, memoryId, threadId: 'thread_1', observationId: 'obs_1', sourceId: null, pinned: false, forgotten: null, edited: null, citedAt: null, citedCount: 0, category: null, policyVersion: null, review: null, updatedAt: iso(T0), ...overrides };
}

function review(proposedAt: number, overrides: Partial<MemoryReview> = {}): MemoryReview {
  return { state: 'pending', heldAs: 'inferred', proposedAt: iso(proposedAt), fingerprint: 'fp_a', expiresAtBefore: null, supersedes: ['mem_old'], superseded: [], decisions: [], ...overrides };
}

/** Conformance cases of the `memoryMarks` area (issue 42). */
export function memoryMarkCases(test: StoreCase) {
  test('memory marks: a review round-trips through put and recordLearned; an entry without one keeps it (issue 43)', async ({ store, reopen }) => {
    const { org, agent } = await world(store);
    const decided = review(T0 + 1, { state: 'declined', decisions: [{ action: 'decline', at: iso(T0 + 5), by: 'key_1', reason: 'not said' }] });
    await store.memoryMarks.put({ record: mark(org.id, agent.id, 'mem_a', { review: decided }) });
    const learned = (memoryId: string, reviewed: MemoryReview | null | undefined) => ({ memoryId, threadId: 'thread_1', observationId: 'obs_1', sourceId: null, category: null, policyVersion: null, ...(reviewed === undefined ? {} : { review: reviewed }) });
    await store.memoryMarks.recordLearned({ organizationId: org.id, agentId: agent.id, memories: [learned('mem_b', review(T0 + 2)), learned('mem_a', undefined)], at: iso(T0 + 10) });
    const expected = [mark(org.id, agent.id, 'mem_a', { review: decided, updatedAt: iso(T0 + 10) }), mark(org.id, agent.id, 'mem_b', { review: review(T0 + 2), updatedAt: iso(T0 + 10) })];
    expect(await store.memoryMarks.get({ agentId: agent.id, memoryIds: ['mem_a', 'mem_b'] })).toEqual(expected);
    if (reopen) expect(await (await reopen()).memoryMarks.get({ agentId: agent.id, memoryIds: ['mem_a', 'mem_b'] })).toEqual(expected);
  });

  test('memory marks: listReview pages one state of one agent, oldest proposal first (ties by id), to the end (issue 43)', async ({ store }) => {
    const { org, agent } = await world(store);
    const other = await world(store);
    for (const [id, at] of [['mem_c', 3], ['mem_a', 1], ['mem_b', 3], ['mem_d', 4]] as const) await store.memoryMarks.put({ record: mark(org.id, agent.id, id, { review: review(T0 + at) }) });
    await store.memoryMarks.put({ record: mark(org.id, agent.id, 'mem_declined', { review: review(T0 + 2, { state: 'declined' }) }) });
    await store.memoryMarks.put({ record: mark(org.id, agent.id, 'mem_plain', { pinned: true }) });
    await store.memoryMarks.put({ record: mark(other.org.id, other.agent.id, 'mem_elsewhere', { review: review(T0) }) });
    const first = await store.memoryMarks.listReview({ agentId: agent.id, state: 'pending', limit: 2 });
    expect(first.records.map((m) => m.memoryId)).toEqual(['mem_a', 'mem_b']);
    expect(first.nextCursor).not.toBeNull();
    const second = await store.memoryMarks.listReview({ agentId: agent.id, state: 'pending', limit: 2, cursor: first.nextCursor });
    expect(second.records.map((m) => m.memoryId)).toEqual(['mem_c', 'mem_d']);
    expect(second.nextCursor).toBeNull();
    expect((await store.memoryMarks.listReview({ agentId: agent.id, state: 'pending', limit: 4 })).nextCursor).toBeNull();
    expect((await store.memoryMarks.listReview({ agentId: agent.id, state: 'declined', limit: 10 })).records.map((m) => m.memoryId)).toEqual(['mem_declined']);
    expect((await store.memoryMarks.listReview({ agentId: agent.id, state: 'approved', limit: 10 })).records).toEqual([]);
  });

  test('memory marks: declinedFingerprints answers the declined ones of that agent only, each once (issue 43)', async ({ store }) => {
    const { org, agent } = await world(store);
    const other = await world(store);
    await store.memoryMarks.put({ record: mark(org.id, agent.id, 'mem_a', { review: review(T0, { state: 'declined', fingerprint: 'fp_1' }) }) });
    await store.memoryMarks.put({ record: mark(org.id, agent.id, 'mem_b', { review: review(T0, { state: 'pending', fingerprint: 'fp_2' }) }) });
    await store.memoryMarks.put({ record: mark(org.id, agent.id, 'mem_c', { review: review(T0, { state: 'approved', fingerprint: 'fp_3' }) }) });
    await store.memoryMarks.put({ record: mark(other.org.id, other.agent.id, 'mem_d', { review: review(T0, { state: 'declined', fingerprint: 'fp_4' }) }) });
    expect((await store.memoryMarks.declinedFingerprints({ agentId: agent.id, fingerprints: ['fp_1', 'fp_2', 'fp_3', 'fp_4', 'fp_1'] })).sort()).toEqual(['fp_1']);
    expect(await store.memoryMarks.declinedFingerprints({ agentId: agent.id, fingerprints: [] })).toEqual([]);
  });

  test('memory marks: put replaces, get returns the named marks in the order asked, delete removes them', async ({ store, reopen }) => {
    const { org, agent } = await world(store);
    const forgotten = { at: iso(T0 + 1), reason: 'customer asked: "wrong"', by: 'key_1', restoreUntil: iso(T0 + 7 * 86_400_000), expiresAtBefore: null };
    await store.memoryMarks.put({ record: mark(org.id, agent.id, 'mem_a', { pinned: true }) });
    await store.memoryMarks.put({ record: mark(org.id, agent.id, 'mem_b', { forgotten, edited: { at: iso(T0 + 2), by: 'key_2', fromMemoryId: 'mem_z' } }) });
    expect(await store.memoryMarks.get({ agentId: agent.id, memoryIds: ['mem_b', 'mem_none', 'mem_a'] })).toEqual([
      mark(org.id, agent.id, 'mem_b', { forgotten, edited: { at: iso(T0 + 2), by: 'key_2', fromMemoryId: 'mem_z' } }),
      mark(org.id, agent.id, 'mem_a', { pinned: true }),
    ]);
    await store.memoryMarks.put({ record: mark(org.id, agent.id, 'mem_a', { pinned: false, updatedAt: iso(T0 + 5) }) });
    expect(await store.memoryMarks.get({ agentId: agent.id, memoryIds: ['mem_a'] })).toEqual([mark(org.id, agent.id, 'mem_a', { updatedAt: iso(T0 + 5) })]);
    expect(await store.memoryMarks.get({ agentId: 'agent_other', memoryIds: ['mem_a'] })).toEqual([]);
    expect(await store.memoryMarks.get({ agentId: agent.id, memoryIds: [] })).toEqual([]);
    if (reopen) expect((await (await reopen()).memoryMarks.get({ agentId: agent.id, memoryIds: ['mem_b'] }))[0]?.forgotten).toEqual(forgotten);
    await store.memoryMarks.delete({ agentId: agent.id, memoryIds: ['mem_a', 'mem_b', 'mem_none'] });
    expect(await store.memoryMarks.get({ agentId: agent.id, memoryIds: ['mem_a', 'mem_b'] })).toEqual([]);
  });

  test('memory marks: the category and policy version a memory was learned with round-trip, and citing keeps them (issue 44)', async ({ store, reopen }) => {
    const { org, agent } = await world(store);
    await store.memoryMarks.put({ record: mark(org.id, agent.id, 'mem_a', { category: 'preference', policyVersion: 3 }) });
    await store.memoryMarks.put({ record: mark(org.id, agent.id, 'mem_b', { policyVersion: 1 }) });
    await store.memoryMarks.cite({ organizationId: org.id, agentId: agent.id, memories: [{ memoryId: 'mem_a', threadId: 'thread_1', observationId: 'obs_1', sourceId: null }], at: iso(T0 + 10) });
    const expected = [
      mark(org.id, agent.id, 'mem_a', { category: 'preference', policyVersion: 3, citedAt: iso(T0 + 10), citedCount: 1, updatedAt: iso(T0 + 10) }),
      mark(org.id, agent.id, 'mem_b', { policyVersion: 1 }),
    ];
    expect(await store.memoryMarks.get({ agentId: agent.id, memoryIds: ['mem_a', 'mem_b'] })).toEqual(expected);
    if (reopen) expect(await (await reopen()).memoryMarks.get({ agentId: agent.id, memoryIds: ['mem_a', 'mem_b'] })).toEqual(expected);
  });

  test('memory marks: recordLearned sets category and policy version in one write, creating marks as needed and keeping the other fields (issue 44)', async ({ store, reopen }) => {
    const { org, agent } = await world(store);
    await store.memoryMarks.put({ record: mark(org.id, agent.id, 'mem_a', { pinned: true, citedCount: 2, citedAt: iso(T0 + 1) }) });
    const learned = (memoryId: string, category: string | null, policyVersion: number | null) => ({ memoryId, threadId: 'thread_1', observationId: 'obs_1', sourceId: null, category, policyVersion });
    await store.memoryMarks.recordLearned({ organizationId: org.id, agentId: agent.id, memories: [learned('mem_a', 'work', 2), learned('mem_b', null, 2), learned('mem_b', 'health', 2)], at: iso(T0 + 10) });
    await store.memoryMarks.recordLearned({ organizationId: org.id, agentId: agent.id, memories: [], at: iso(T0 + 20) });
    const expected = [
      mark(org.id, agent.id, 'mem_a', { pinned: true, citedCount: 2, citedAt: iso(T0 + 1), category: 'work', policyVersion: 2, updatedAt: iso(T0 + 10) }),
      mark(org.id, agent.id, 'mem_b', { category: 'health', policyVersion: 2, updatedAt: iso(T0 + 10) }),
    ];
    expect(await store.memoryMarks.get({ agentId: agent.id, memoryIds: ['mem_a', 'mem_b'] })).toEqual(expected);
    if (reopen) expect(await (await reopen()).memoryMarks.get({ agentId: agent.id, memoryIds: ['mem_a', 'mem_b'] })).toEqual(expected);
  });

  test('memory marks: cite counts per memory (a repeated id once), keeps the other fields, creates marks as needed', async ({ store }) => {
    const { org, agent } = await world(store);
    await store.memoryMarks.put({ record: mark(org.id, agent.id, 'mem_a', { pinned: true }) });
    const source = (memoryId: string) => ({ memoryId, threadId: 'thread_1', observationId: 'obs_1', sourceId: null });
    await store.memoryMarks.cite({ organizationId: org.id, agentId: agent.id, memories: [source('mem_a'), source('mem_b'), source('mem_a')], at: iso(T0 + 10) });
    await store.memoryMarks.cite({ organizationId: org.id, agentId: agent.id, memories: [source('mem_a')], at: iso(T0 + 20) });
    await store.memoryMarks.cite({ organizationId: org.id, agentId: agent.id, memories: [], at: iso(T0 + 30) });
    const [a, b] = await store.memoryMarks.get({ agentId: agent.id, memoryIds: ['mem_a', 'mem_b'] });
    expect(a).toMatchObject({ pinned: true, citedAt: iso(T0 + 20), citedCount: 2, updatedAt: iso(T0 + 20) });
    expect(b).toEqual(mark(org.id, agent.id, 'mem_b', { citedAt: iso(T0 + 10), citedCount: 1, updatedAt: iso(T0 + 10) }));
  });

  test('memory marks: listForgottenDue spans agents, soonest first, up to the instant, within the limit', async ({ store }) => {
    const first = await world(store);
    const second = await world(store);
    const forgetting = (days: number) => ({ at: iso(T0), reason: 'r', by: 'k', restoreUntil: iso(T0 + days * 86_400_000), expiresAtBefore: iso(T0 + 99 * 86_400_000) });
    await store.memoryMarks.put({ record: mark(first.org.id, first.agent.id, 'mem_3', { forgotten: forgetting(3) }) });
    await store.memoryMarks.put({ record: mark(second.org.id, second.agent.id, 'mem_1', { forgotten: forgetting(1) }) });
    await store.memoryMarks.put({ record: mark(first.org.id, first.agent.id, 'mem_2', { forgotten: forgetting(2) }) });
    await store.memoryMarks.put({ record: mark(first.org.id, first.agent.id, 'mem_pinned', { pinned: true }) });
    const due = await store.memoryMarks.listForgottenDue({ before: iso(T0 + 2 * 86_400_000), limit: 10 });
    expect(due.map((m) => m.memoryId)).toEqual(['mem_1', 'mem_2']);
    expect(due[0]).toMatchObject({ agentId: second.agent.id, forgotten: forgetting(1) });
    expect((await store.memoryMarks.listForgottenDue({ before: iso(T0 + 9 * 86_400_000), limit: 2 })).map((m) => m.memoryId)).toEqual(['mem_1', 'mem_2']);
    expect(await store.memoryMarks.listForgottenDue({ before: iso(T0), limit: 10 })).toEqual([]);
  });

  test('memory marks: deleteBy takes the marks of a thread, an observation, a source', async ({ store }) => {
    const { org, agent } = await world(store);
    const put = (memoryId: string, threadId: string, observationId: string, sourceId: string | null) => store.memoryMarks.put({ record: mark(org.id, agent.id, memoryId, { threadId, observationId, sourceId, pinned: true }) });
    await put('mem_1', 'thread_a', 'obs_1', null);
    await put('mem_2', 'thread_a', 'obs_2', 'src_x');
    await put('mem_3', 'thread_b', 'obs_3', 'src_x');
    await put('mem_4', 'thread_b', 'obs_4', null);
    const left = async () => (await store.memoryMarks.get({ agentId: agent.id, memoryIds: ['mem_1', 'mem_2', 'mem_3', 'mem_4'] })).map((m) => m.memoryId);
    await store.memoryMarks.deleteBy({ agentId: agent.id, threadId: 'thread_b', sourceId: 'src_x' });
    expect(await left()).toEqual(['mem_1', 'mem_2', 'mem_4']);
    await store.memoryMarks.deleteBy({ agentId: agent.id, observationId: 'obs_4' });
    expect(await left()).toEqual(['mem_1', 'mem_2']);
    await store.memoryMarks.deleteBy({ agentId: 'agent_other', threadId: 'thread_a' });
    expect(await left()).toEqual(['mem_1', 'mem_2']);
    await store.memoryMarks.deleteBy({ agentId: agent.id, threadId: 'thread_a' });
    expect(await left()).toEqual([]);
  });

  test('memory marks: go with their agent', async ({ store }) => {
    const { org, agent } = await world(store);
    await store.memoryMarks.put({ record: mark(org.id, agent.id, 'mem_a', { pinned: true }) });
    await store.agents.delete({ organizationId: org.id, agentId: agent.id });
    expect(await store.memoryMarks.get({ agentId: agent.id, memoryIds: ['mem_a'] })).toEqual([]);
  });
}
