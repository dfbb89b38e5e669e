import { describe, expect, it } from 'vitest';
// The maintenance fixture kept with core's tests (a fixture, not a published module).
import { maintenanceFixture } from '../../core/src/__fixtures__/maintenance.js';
import { postgresMemoryIndex } from './postgres-memory-index.js';
import { postgresStore } from './postgres-store.js';
import { openSqlClient } from './sql-client.js';

/**
 * Maintenance runs (issue 43) on PGlite, store and index: the three kinds applied and undone, and
 * a run left `applying` (a kill after the intent) finished by the next service's start.
 */
describe('maintenance runs on PGlite (store and index)', () => {
  it('merges restatements, supersedes old history, forgets an expired plan; undo gives all back; a run left applying is finished on start', async () => {
    const sql = await openSqlClient({ dataDir: 'memory://' });
    const store = postgresStore({ dataDir: 'memory://' });
    const index = postgresMemoryIndex({ client: sql });
    const f = await maintenanceFixture({ store, index, maintenance: { maxShare: 1 } });
    await f.learn(['I am allergic to peanuts.', 'I am allergic to peanuts!', 'I am ALLERGIC to peanuts', 'I live in Paris.'], '2025-01-01T10:00:00Z');
    await f.learn(['I moved, I live in Berlin now.', 'The offsite is at the lake house.'], '2025-06-01T10:00:00Z');
    await f.unsupersedeAll();
    const offsite = (await f.list()).find((memory) => memory.text.includes('offsite'))!;
    await f.service.memories.update({ caller: f.owner, agentId: f.agentId, memoryId: offsite.memory_id, body: { expires_at: new Date(f.now() + 1000).toISOString() } });
    f.advance(2000);
    const request = { caller: f.owner, agentId: f.agentId };
    const runs = [];
    for (const kind of ['merge_duplicates', 'supersede_history', 'sweep_expired'] as const) {
      const plan = await f.service.maintenance.plan({ ...request, body: { kind, max_share: 1 } });
      runs.push(await f.service.maintenance.apply({ ...request, runId: plan.run_id }));
    }
    expect(runs.map((run) => [run.status, run.receipt])).toEqual([
      ['applied', { merged: 2, superseded: 0, forgotten: 0, redacted: 0, recategorised: 0 }],
      ['applied', { merged: 0, superseded: 1, forgotten: 0, redacted: 0, recategorised: 0 }],
      ['applied', { merged: 0, superseded: 0, forgotten: 1, redacted: 0, recategorised: 0 }],
    ]);
    expect(await f.currentTexts()).toEqual(['I am allergic to peanuts.', 'I moved, I live in Berlin now.']);
    for (const run of [...runs].reverse()) await f.service.maintenance.undo({ ...request, runId: run.run_id });
    expect(await f.currentTexts()).toHaveLength(5);

    // A kill right after the intent: the run is left applying; the next service finishes it.
    const plan = await f.service.maintenance.plan({ ...request, body: { kind: 'merge_duplicates', max_share: 1 } });
    await store.maintenanceRuns.update({ runId: plan.run_id, patch: { status: 'applying' }, updatedAt: new Date(f.now()).toISOString() });
    const restarted = await maintenanceFixture({ store, index, reuse: f });
    expect(await restarted.service.maintenance.get({ caller: restarted.owner, agentId: f.agentId, runId: plan.run_id })).toMatchObject({ status: 'applied', receipt: { merged: 2 } });
    expect((await restarted.currentTexts()).filter((text) => /allergic/i.test(text))).toEqual(['I am allergic to peanuts.']);
    await restarted.service.stop();
    await sql.close();
  }, 120_000);

  it('reapply_policy: a new policy redacts, drops and re-categorises old memories; undo gives them back', async () => {
    const sql = await openSqlClient({ dataDir: 'memory://' });
    const store = postgresStore({ dataDir: 'memory://' });
    const index = postgresMemoryIndex({ client: sql });
    const f = await maintenanceFixture({ store, index, maintenance: { maxShare: 1 } });
    const learned = ['My card number is 4111 1111 1111 1111.', 'I love hiking in the Alps.', 'We ordered pizza yesterday.', 'My brother plays the cello.'];
    await f.learn(learned);
    const policy = { redact: ['card_number'], categories: [{ name: 'hobbies', keywords: ['hiking'] }], exclude: [{ keywords: ['pizza'] }] };
    await f.service.agents.update({ caller: f.owner, agentId: f.agentId, body: { agent_config: { role: 'assistant', objective: 'remember', extraction_policy: policy } } });
    const request = { caller: f.owner, agentId: f.agentId };
    const plan = await f.service.maintenance.plan({ ...request, body: { kind: 'reapply_policy', max_share: 0.5 } });
    expect(plan.changes.map((change) => change.action).sort()).toEqual(['forget', 'recategorise', 'redact']);
    const applied = await f.service.maintenance.apply({ ...request, runId: plan.run_id });
    expect(applied.receipt).toEqual({ merged: 0, superseded: 0, forgotten: 1, redacted: 1, recategorised: 1 });
    expect(await f.currentTexts()).toEqual(['I love hiking in the Alps.', 'My brother plays the cello.', 'My card number is [redacted:card_number].']);
    expect((await f.service.memories.list({ ...request, query: { category: 'hobbies' } })).memories.map((memory) => memory.text)).toEqual(['I love hiking in the Alps.']);
    await f.service.maintenance.undo({ ...request, runId: plan.run_id });
    expect(await f.currentTexts()).toEqual([...learned].sort());
    expect((await f.service.memories.list({ ...request, query: { category: 'hobbies' } })).memories).toEqual([]);
    await f.service.stop();
    await sql.close();
  }, 120_000);
});
