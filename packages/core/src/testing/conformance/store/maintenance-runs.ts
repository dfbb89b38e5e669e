import { expect } from 'vitest';
import type { MaintenanceRunRecord } from '../../../ports/store/index.js';
import type { StoreCase } from './harness.js';
import { iso, T0 } from './harness.js';
import { world } from './records.js';

let sequence = 0;

function run(organizationId: string, agentId: string, overrides: Partial<MaintenanceRunRecord> = {}): MaintenanceRunRecord {
  sequence++;
  const state = { validTo: null, supersededBy: null, alsoFrom: [{ kind: 'turn', threadId: 'thread_1', observationId: 'obs_1', turnIndex: 2 }], expiresAt: null, textHash: 'h1' };
  return {
    id: `mnt_${String(sequence).padStart(26, '0')}`,
    organizationId,
    agentId,
    kind: 'merge_duplicates',
    status: 'dry_run',
    maxShare: 0.25,
    currentMemories: 12,
    changes: [{ action: 'merge', memoryId: 'mem_b', keepId: 'mem_a', reason: 'same speaker, same words', validTo: iso(T0), added: [{ kind: 'turn', threadId: 'thread_1', observationId: 'obs_9', turnIndex: 0 }], before: { memory: state, keep: { ...state, textHash: 'h2' } } }],
    done: 0,
    createdBy: 'key_1',
    error: null,
    createdAt: iso(T0 + sequence),
    updatedAt: iso(T0 + sequence),
    appliedAt: null,
    undoUntil: null,
    undoneAt: null,
    ...overrides,
  };
}

/** Conformance cases of the `maintenanceRuns` area (issue 43). */
export function maintenanceRunCases(test: StoreCase) {
  test('maintenance runs: insert and get round-trip the diff, only for their agent; update patches, ifStatus guards', async ({ store, reopen }) => {
    const { org, agent } = await world(store);
    const record = run(org.id, agent.id);
    await store.maintenanceRuns.insert({ run: record });
    expect(await store.maintenanceRuns.get({ agentId: agent.id, runId: record.id })).toEqual(record);
    expect(await store.maintenanceRuns.get({ agentId: 'agent_other', runId: record.id })).toBeNull();
    expect(await store.maintenanceRuns.get({ agentId: agent.id, runId: 'mnt_missing' })).toBeNull();
    // Two appliers: the first moves dry_run -> applying, the second finds it no longer dry_run.
    const applying = await store.maintenanceRuns.update({ runId: record.id, patch: { status: 'applying' }, updatedAt: iso(T0 + 100), ifStatus: ['dry_run'] });
    expect(applying).toMatchObject({ status: 'applying', updatedAt: iso(T0 + 100), done: 0 });
    expect(await store.maintenanceRuns.update({ runId: record.id, patch: { status: 'applying' }, updatedAt: iso(T0 + 101), ifStatus: ['dry_run'] })).toBeNull();
    const applied = await store.maintenanceRuns.update({ runId: record.id, patch: { status: 'applied', done: 1, appliedAt: iso(T0 + 200), undoUntil: iso(T0 + 300), error: null }, updatedAt: iso(T0 + 200) });
    expect(applied).toEqual({ ...record, status: 'applied', done: 1, appliedAt: iso(T0 + 200), undoUntil: iso(T0 + 300), updatedAt: iso(T0 + 200) });
    expect(await store.maintenanceRuns.update({ runId: 'mnt_missing', patch: { status: 'failed' }, updatedAt: iso(T0) })).toBeNull();
    if (reopen) expect(await (await reopen()).maintenanceRuns.get({ agentId: agent.id, runId: record.id })).toEqual(applied);
  });

  test('maintenance runs: a reapply_policy diff round-trips its categories, policy versions and planned ids (issue 44)', async ({ store, reopen }) => {
    const { org, agent } = await world(store);
    const state = { validTo: null, supersededBy: null, alsoFrom: [], expiresAt: null, textHash: 'h3' };
    const record = run(org.id, agent.id, {
      kind: 'reapply_policy',
      changes: [
        { action: 'redact', memoryId: 'mem_c', keepId: 'mem_planned', reason: 'redacts it', validTo: iso(T0), added: [], before: { memory: state, keep: null }, category: { from: null, to: 'billing' }, policyVersion: { from: null, to: 2 } },
        { action: 'recategorise', memoryId: 'mem_d', keepId: null, reason: 'category hobbies', validTo: null, added: [], before: { memory: state, keep: null }, category: { from: 'misc', to: 'hobbies' }, policyVersion: { from: 1, to: 2 } },
      ],
    });
    await store.maintenanceRuns.insert({ run: record });
    expect(await store.maintenanceRuns.get({ agentId: agent.id, runId: record.id })).toEqual(record);
    if (reopen) expect(await (await reopen()).maintenanceRuns.get({ agentId: agent.id, runId: record.id })).toEqual(record);
  });

  test('maintenance runs: list is newest first with a cursor; listByStatus spans agents, oldest first; they go with their agent', async ({ store }) => {
    const first = await world(store);
    const second = await world(store);
    const a = run(first.org.id, first.agent.id);
    const b = run(first.org.id, first.agent.id, { status: 'applying' });
    const c = run(first.org.id, first.agent.id);
    const d = run(second.org.id, second.agent.id, { status: 'undoing' });
    for (const record of [a, b, c, d]) await store.maintenanceRuns.insert({ run: record });
    expect((await store.maintenanceRuns.list({ agentId: first.agent.id, limit: 10 })).map((r) => r.id)).toEqual([c.id, b.id, a.id]);
    expect((await store.maintenanceRuns.list({ agentId: first.agent.id, limit: 1, before: c.id })).map((r) => r.id)).toEqual([b.id]);
    expect((await store.maintenanceRuns.list({ agentId: first.agent.id, limit: 5, before: a.id })).map((r) => r.id)).toEqual([]);
    const unfinished = (await store.maintenanceRuns.listByStatus({ statuses: ['applying', 'undoing'] })).filter((r) => r.agentId === first.agent.id || r.agentId === second.agent.id);
    expect(unfinished.map((r) => r.id)).toEqual([b.id, d.id]);
    await store.agents.delete({ organizationId: first.org.id, agentId: first.agent.id });
    expect(await store.maintenanceRuns.get({ agentId: first.agent.id, runId: a.id })).toBeNull();
    expect(await store.maintenanceRuns.get({ agentId: second.agent.id, runId: d.id })).not.toBeNull();
  });
}
