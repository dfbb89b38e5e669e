// Maintenance runs (issue 43) through the service on the in-memory store and index: dry runs and
// their diffs, apply, undo, the guard, every refusal, and a run resumed after a crash.
import { describe, expect, it } from 'vitest';
import { inMemoryMemoryIndex } from '../in-memory/in-memory-memory-index.js';
import { inMemoryStore } from '../in-memory/store/index.js';
import type { MemoryIndex } from '../ports/memory-index.js';
import { maintenanceFixture } from '../__fixtures__/maintenance.js';

const DAY = 86_400_000;

describe('maintenance runs', () => {
  it('merge_duplicates: five restatements become one memory holding every source; undo gives them back', async () => {
    const f = await maintenanceFixture({ maintenance: { maxShare: 1 } });
    await f.learn(['I am allergic to peanuts.', 'I am allergic to peanuts!', 'i am ALLERGIC to peanuts', 'I am allergic to peanuts...', 'I am allergic, to peanuts.', 'My brother plays the cello.']);
    expect(await f.currentTexts()).toHaveLength(6);
    const plan = await f.service.maintenance.plan({ caller: f.owner, agentId: f.agentId, body: { kind: 'merge_duplicates', max_share: 1 } });
    expect(plan).toMatchObject({ status: 'dry_run', kind: 'merge_duplicates', progress: { done: 0, total: 4 }, guard: { allowed: true, current_memories: 6 }, receipt: { merged: 0 } });
    expect(plan.changes.every((change) => change.action === 'merge' && change.keep_text === 'I am allergic to peanuts.')).toBe(true);
    expect(await f.currentTexts()).toHaveLength(6);
    const applied = await f.service.maintenance.apply({ caller: f.owner, agentId: f.agentId, runId: plan.run_id });
    expect(applied).toMatchObject({ status: 'applied', progress: { done: 4, total: 4 }, receipt: { merged: 4 } });
    expect(Date.parse(applied.undo_until!) - Date.parse(applied.applied_at!)).toBe(7 * DAY);
    expect(await f.currentTexts()).toEqual(['I am allergic to peanuts.', 'My brother plays the cello.']);
    const kept = (await f.index.get({ agentId: f.agentId, ids: [plan.changes[0]!.keep_id!] }))[0]!;
    expect(new Set(kept.alsoFrom.map((source) => source.observationId)).size).toBe(4);
    expect(kept.alsoFrom.some((source) => source.observationId === kept.source.observationId)).toBe(false);
    for (const change of plan.changes) expect((await f.index.get({ agentId: f.agentId, ids: [change.memory_id] }))[0]).toMatchObject({ supersededBy: kept.id });
    // The retention probe: the fact is still recalled.
    expect((await f.service.recall({ caller: f.owner, agentId: f.agentId, body: { query: 'What is Alice allergic to?' } })).memory_context).toContain('peanuts');
    const undone = await f.service.maintenance.undo({ caller: f.owner, agentId: f.agentId, runId: plan.run_id });
    expect(undone).toMatchObject({ status: 'undone' });
    expect(await f.currentTexts()).toHaveLength(6);
    expect((await f.index.get({ agentId: f.agentId, ids: [kept.id] }))[0]!.alsoFrom).toEqual([]);
  });

  it('supersede_history: a changed fact learned before supersession existed is superseded by the newer one', async () => {
    const f = await maintenanceFixture();
    await f.learn(['I live in Paris.', 'I work at Acme.'], '2025-01-01T10:00:00Z');
    await f.learn(['I moved, I live in Berlin now.'], '2025-06-01T10:00:00Z');
    await f.unsupersedeAll();
    expect(await f.currentTexts()).toHaveLength(3);
    const plan = await f.service.maintenance.plan({ caller: f.owner, agentId: f.agentId, body: { kind: 'supersede_history', max_share: 0.5 } });
    expect(plan.changes).toEqual([expect.objectContaining({ action: 'supersede', memory_text: 'I live in Paris.', keep_text: 'I moved, I live in Berlin now.' })]);
    await f.service.maintenance.apply({ caller: f.owner, agentId: f.agentId, runId: plan.run_id });
    expect(await f.currentTexts()).toEqual(['I moved, I live in Berlin now.', 'I work at Acme.']);
    const old = (await f.index.get({ agentId: f.agentId, ids: [plan.changes[0]!.memory_id] }))[0]!;
    expect(old).toMatchObject({ supersededBy: plan.changes[0]!.keep_id, validTo: '2025-06-01T10:00:00.000Z' });
    // A second dry run finds nothing left to do.
    expect((await f.service.maintenance.plan({ caller: f.owner, agentId: f.agentId, body: { kind: 'supersede_history' } })).changes).toEqual([]);
  });

  it('sweep_expired: an expired plan is forgotten (restorable, then erased by the sweep); undo un-forgets it', async () => {
    const f = await maintenanceFixture();
    await f.learn(['The team offsite is planned for the lake house.', 'My favourite colour is green.']);
    const offsite = (await f.list()).find((memory) => memory.text.includes('offsite'))!;
    await f.service.memories.update({ caller: f.owner, agentId: f.agentId, memoryId: offsite.memory_id, body: { expires_at: new Date(f.now() + DAY).toISOString() } });
    f.advance(2 * DAY);
    const plan = await f.service.maintenance.plan({ caller: f.owner, agentId: f.agentId, body: { kind: 'sweep_expired', max_share: 0.5 } });
    expect(plan.changes).toEqual([expect.objectContaining({ action: 'forget', memory_id: offsite.memory_id, keep_id: null })]);
    await f.service.maintenance.apply({ caller: f.owner, agentId: f.agentId, runId: plan.run_id });
    expect((await f.store.memoryMarks.get({ agentId: f.agentId, memoryIds: [offsite.memory_id] }))[0]?.forgotten).toMatchObject({ reason: `maintenance run ${plan.run_id} (sweep_expired)` });
    await f.service.maintenance.undo({ caller: f.owner, agentId: f.agentId, runId: plan.run_id });
    expect(await f.store.memoryMarks.get({ agentId: f.agentId, memoryIds: [offsite.memory_id] })).toEqual([]);
    // Applied again (a new run) and left: the sweep erases it once the window ends.
    const again = await f.service.maintenance.plan({ caller: f.owner, agentId: f.agentId, body: { kind: 'sweep_expired', max_share: 0.5 } });
    await f.service.maintenance.apply({ caller: f.owner, agentId: f.agentId, runId: again.run_id });
    f.advance(8 * DAY);
    expect(await f.service.sweepMemories()).toEqual({ erased: 1 });
    expect(await f.index.get({ agentId: f.agentId, ids: [offsite.memory_id] })).toEqual([]);
  });

  it('the guard: at the share applies, above it is 409; a keeper with empty text is refused; max_share above the service maximum is 422', async () => {
    const f = await maintenanceFixture({ maintenance: { maxShare: 0.6 } });
    await f.learn(['I am allergic to peanuts.', 'I am allergic to peanuts!', 'My brother plays the cello.', 'We have two cats at home.']);
    const over = await f.service.maintenance.plan({ caller: f.owner, agentId: f.agentId, body: { kind: 'merge_duplicates', max_share: 0.2 } });
    expect(over.guard).toMatchObject({ allowed: false, share: 0.25, max_share: 0.2 });
    await expect(f.service.maintenance.apply({ caller: f.owner, agentId: f.agentId, runId: over.run_id })).rejects.toMatchObject({ status: 409, message: expect.stringMatching(/1 of the agent's 4 current memories \(25\.0%\)/) });
    const edge = await f.service.maintenance.plan({ caller: f.owner, agentId: f.agentId, body: { kind: 'merge_duplicates', max_share: 0.25 } });
    expect(edge.guard).toMatchObject({ allowed: true, share: 0.25 });
    // Default share: 25% (one of four is exactly at it).
    expect((await f.service.maintenance.plan({ caller: f.owner, agentId: f.agentId, body: { kind: 'merge_duplicates' } })).guard.max_share).toBe(0.25);
    await expect(f.service.maintenance.plan({ caller: f.owner, agentId: f.agentId, body: { kind: 'merge_duplicates', max_share: 0.61 } })).rejects.toMatchObject({ status: 422, message: expect.stringContaining('at most 0.6') });
    // An empty keeper (a memory whose text was emptied by a faulty writer) is never kept.
    const keepId = edge.changes[0]!.keep_id!;
    const [keeper] = await f.index.get({ agentId: f.agentId, ids: [keepId] });
    await f.index.upsert({ records: [{ ...keeper!, text: '  ' }], embedder: (await f.index.embedder())! });
    const empty = await f.service.maintenance.plan({ caller: f.owner, agentId: f.agentId, body: { kind: 'merge_duplicates', max_share: 0.5 } });
    expect(empty.changes).toEqual([]);
    await expect(f.service.maintenance.apply({ caller: f.owner, agentId: f.agentId, runId: edge.run_id })).rejects.toMatchObject({ status: 409, message: expect.stringContaining('empty text') });
  });

  it('refusals: 422 bad kind, 404 agent and run, 403 for a person, 409 changed since / already applied / window over', async () => {
    const f = await maintenanceFixture();
    await f.learn(['I am allergic to peanuts.', 'I am allergic to peanuts!', 'My brother plays the cello.', 'We have two cats at home.']);
    const request = { caller: f.owner, agentId: f.agentId };
    await expect(f.service.maintenance.plan({ ...request, body: { kind: 'reflect' } as never })).rejects.toMatchObject({ status: 422, code: 'invalid_request' });
    await expect(f.service.maintenance.plan({ ...request, body: { kind: 'merge_duplicates', max_share: 0 } })).rejects.toMatchObject({ status: 422 });
    await expect(f.service.maintenance.plan({ ...request, agentId: 'agent_01ARZ3NDEKTSV4RRFFQ69G5FAV', body: { kind: 'merge_duplicates' } })).rejects.toMatchObject({ status: 404, code: 'agent_not_found' });
    await expect(f.service.maintenance.get({ ...request, runId: 'mnt_01ARZ3NDEKTSV4RRFFQ69G5FAV' })).rejects.toMatchObject({ status: 404, code: 'not_found' });
    await expect(f.service.maintenance.get({ ...request, runId: 'nope' })).rejects.toMatchObject({ status: 404 });
    await expect(f.service.maintenance.plan({ caller: await f.caller('alice'), agentId: f.agentId, body: { kind: 'merge_duplicates' } })).rejects.toMatchObject({ status: 403 });
    // Changed since the dry run: the duplicate was forgotten meanwhile.
    const stale = await f.service.maintenance.plan({ ...request, body: { kind: 'merge_duplicates' } });
    await f.service.memories.forget({ ...request, memoryId: stale.changes[0]!.memory_id, body: { reason: 'test' } });
    await expect(f.service.maintenance.apply({ ...request, runId: stale.run_id })).rejects.toMatchObject({ status: 409, message: expect.stringContaining('changed since the dry run') });
    await f.service.memories.restore({ ...request, memoryId: stale.changes[0]!.memory_id });
    const run = await f.service.maintenance.plan({ ...request, body: { kind: 'merge_duplicates' } });
    await expect(f.service.maintenance.undo({ ...request, runId: run.run_id })).rejects.toMatchObject({ status: 409, message: expect.stringContaining('only an applied run') });
    await f.service.maintenance.apply({ ...request, runId: run.run_id });
    await expect(f.service.maintenance.apply({ ...request, runId: run.run_id })).rejects.toMatchObject({ status: 409, message: expect.stringContaining('is applied') });
    f.advance(7 * DAY);
    await expect(f.service.maintenance.undo({ ...request, runId: run.run_id })).rejects.toMatchObject({ status: 409, message: expect.stringContaining('undo window') });
    const listed = await f.service.maintenance.list({ ...request, query: { limit: 2 } });
    expect(listed.runs.map((r) => r.run_id)).toEqual([run.run_id, stale.run_id]);
    expect(listed.next_cursor).toBe('');
  });

  it('an Idempotency-Key replays the dry run and the application', async () => {
    const f = await maintenanceFixture();
    await f.learn(['I am allergic to peanuts.', 'I am allergic to peanuts!', 'My brother plays the cello.', 'We have two cats at home.']);
    const request = { caller: f.owner, agentId: f.agentId };
    const first = await f.service.maintenance.plan({ ...request, body: { kind: 'merge_duplicates' }, idempotencyKey: 'k1' });
    expect(await f.service.maintenance.plan({ ...request, body: { kind: 'merge_duplicates' }, idempotencyKey: 'k1' })).toEqual(first);
    await expect(f.service.maintenance.plan({ ...request, body: { kind: 'sweep_expired' }, idempotencyKey: 'k1' })).rejects.toMatchObject({ status: 409 });
    const applied = await f.service.maintenance.apply({ ...request, runId: first.run_id, idempotencyKey: 'k2' });
    expect(await f.service.maintenance.apply({ ...request, runId: first.run_id, idempotencyKey: 'k2' })).toEqual(applied);
  });

  it.each(['before', 'after'] as const)('a crash %s the index changed: the next start finishes the run, applying nothing twice', async (when) => {
    const store = inMemoryStore();
    const index = inMemoryMemoryIndex();
    const f = await maintenanceFixture({ store, index: failingUpdates(index, when) });
    await f.learn(['I am allergic to peanuts.', 'I am allergic to peanuts!', 'I am allergic to peanuts?!', 'My brother plays the cello.', 'We have two cats at home.', 'Our dog is called Rex.']);
    const plan = await f.service.maintenance.plan({ caller: f.owner, agentId: f.agentId, body: { kind: 'merge_duplicates', max_share: 0.5 } });
    crash = true;
    await expect(f.service.maintenance.apply({ caller: f.owner, agentId: f.agentId, runId: plan.run_id })).rejects.toThrow('process killed');
    // A kill leaves the intent (here the failure handler marked it failed: put it back as a kill leaves it).
    await store.maintenanceRuns.update({ runId: plan.run_id, patch: { status: 'applying', error: null }, updatedAt: new Date(f.now()).toISOString() });
    expect(await f.currentTexts()).toHaveLength(when === 'before' ? 6 : 4);
    const restarted = await maintenanceFixture({ store, index, reuse: f });
    const run = await restarted.service.maintenance.get({ caller: restarted.owner, agentId: f.agentId, runId: plan.run_id });
    expect(run).toMatchObject({ status: 'applied', progress: { done: 2, total: 2 }, receipt: { merged: 2 } });
    expect(await restarted.currentTexts()).toEqual(['I am allergic to peanuts.', 'My brother plays the cello.', 'Our dog is called Rex.', 'We have two cats at home.']);
    const kept = (await index.get({ agentId: f.agentId, ids: [plan.changes[0]!.keep_id!] }))[0]!;
    expect(kept.alsoFrom).toHaveLength(2);
    await restarted.service.maintenance.undo({ caller: restarted.owner, agentId: f.agentId, runId: plan.run_id });
    expect(await restarted.currentTexts()).toHaveLength(6);
  });
});

let crash = false;

/** The index, its next `update` (once `crash` is set) stopping the "process" before or after it wrote (a test double of a kill). */
function failingUpdates(index: MemoryIndex, when: 'before' | 'after'): MemoryIndex {
  return new Proxy(index, {
    get(target, name, receiver) {
      if (name !== 'update') return Reflect.get(target, name, receiver);
      return async (request: Parameters<MemoryIndex['update']>[0]) => {
        if (!crash) return target.update(request);
        crash = false;
        if (when === 'after') await target.update(request);
        throw new Error('process killed');
      };
    },
  });
}

