// Maintenance on a schedule when an agent is idle (issue 43), driven by a test clock: idle minutes,
// the kinds allowed, runs per day, changes per run, and the guard deciding whether a run applies.
import { describe, expect, it } from 'vitest';
import { maintenanceFixture } from '../__fixtures__/maintenance.js';
import { createMemoryService } from '../create-memory-service.js';
import { inMemoryStore } from '../in-memory/store/index.js';
import type { MaintenanceScheduleOptions } from './schedule.js';

const MINUTE = 60_000;
const DAY = 86_400_000;
const RESTATED = ['I am allergic to peanuts.', 'I am allergic to peanuts!', 'I am allergic to peanuts?!', 'My brother plays the cello.'];

const withSchedule = (schedule: Partial<MaintenanceScheduleOptions>) => maintenanceFixture({ maintenance: { maxShare: 1, schedule: { idleMinutes: 30, ...schedule } } });

describe('idle maintenance schedule', () => {
  it('runs only once the agent is idle, applies what the guard allows, and not again until it learns', async () => {
    const f = await withSchedule({ kinds: ['merge_duplicates', 'sweep_expired'], maxShare: 0.5 });
    await f.learn(RESTATED);
    f.advance(29 * MINUTE);
    expect(await f.service.maintainIdle()).toEqual({ planned: 0, applied: 0, refused: 0 });
    expect(await f.currentTexts()).toHaveLength(4);
    f.advance(2 * MINUTE);
    expect(await f.service.maintainIdle()).toEqual({ planned: 2, applied: 2, refused: 0 });
    expect(await f.currentTexts()).toEqual(['I am allergic to peanuts.', 'My brother plays the cello.']);
    const { runs } = await f.service.maintenance.list({ caller: f.owner, agentId: f.agentId });
    expect(runs.map((run) => [run.kind, run.status, run.created_by])).toEqual([
      ['sweep_expired', 'applied', 'schedule'],
      ['merge_duplicates', 'applied', 'schedule'],
    ]);
    expect(runs[1]!.receipt).toEqual({ merged: 2, superseded: 0, forgotten: 0, redacted: 0, recategorised: 0 });
    // Nothing learned since: nothing planned (sweeping waits a day).
    f.advance(60 * MINUTE);
    expect(await f.service.maintainIdle()).toEqual({ planned: 0, applied: 0, refused: 0 });
    // A scheduled run is undone like any other.
    await f.service.maintenance.undo({ caller: f.owner, agentId: f.agentId, runId: runs[1]!.run_id });
    expect(await f.currentTexts()).toHaveLength(4);
  });

  it('leaves a run the guard refuses as a dry run saying why, for a person to review', async () => {
    const f = await withSchedule({ kinds: ['merge_duplicates'], maxShare: 0.25 });
    await f.learn(RESTATED);
    f.advance(31 * MINUTE);
    expect(await f.service.maintainIdle()).toEqual({ planned: 1, applied: 0, refused: 1 });
    expect(await f.currentTexts()).toHaveLength(4);
    const [run] = (await f.service.maintenance.list({ caller: f.owner, agentId: f.agentId })).runs;
    expect(run).toMatchObject({ status: 'dry_run', created_by: 'schedule', guard: { allowed: false }, error: expect.stringMatching(/^Not applied by the schedule: Applying would take 2 of the agent's 4/) });
  });

  it('keeps to the runs per day and the changes per run', async () => {
    const f = await withSchedule({ kinds: ['merge_duplicates', 'supersede_history'], maxRunsPerDay: 1, maxMemoriesPerRun: 1, maxShare: 0.5 });
    await f.learn(RESTATED);
    f.advance(31 * MINUTE);
    expect(await f.service.maintainIdle()).toEqual({ planned: 1, applied: 1, refused: 0 });
    const [first] = (await f.service.maintenance.list({ caller: f.owner, agentId: f.agentId })).runs;
    expect(first).toMatchObject({ kind: 'merge_duplicates', progress: { done: 1, total: 1 }, receipt: { merged: 1 } });
    expect(await f.currentTexts()).toHaveLength(3);
    // The day's one run is used, even after new learning.
    await f.learn(['I am allergic to peanuts!!']);
    f.advance(31 * MINUTE);
    expect((await f.service.maintainIdle()).planned).toBe(0);
    f.advance(DAY);
    expect(await f.service.maintainIdle()).toEqual({ planned: 1, applied: 1, refused: 0 });
    expect(await f.currentTexts()).toHaveLength(3);
  });

  it('plans nothing for an organization out of credit, and charges a scheduled application as any other', async () => {
    const f = await maintenanceFixture({ credits: '10', maintenance: { maxShare: 1, schedule: { idleMinutes: 30, kinds: ['merge_duplicates'], maxShare: 0.5 } } });
    await f.learn(RESTATED);
    const { balance } = await f.service.billing({ caller: f.owner, query: {} });
    await f.store.ledger.append({ organizationId: f.organizationId, entry: { kind: 'charge', route: 'test', inWords: 0, outWords: 0, cost: balance!, reference: null, jobId: null, turnCosts: {}, createdAt: new Date(f.now()).toISOString() }, requireFunds: true });
    f.advance(31 * MINUTE);
    expect(await f.service.maintainIdle()).toEqual({ planned: 0, applied: 0, refused: 0 });
    expect((await f.service.maintenance.list({ caller: f.owner, agentId: f.agentId })).runs).toEqual([]);
    await f.service.admin.addCredits({ organizationId: f.organizationId, amount: '1' });
    expect(await f.service.maintainIdle()).toEqual({ planned: 1, applied: 1, refused: 0 });
    expect((await f.service.billing({ caller: f.owner, query: {} })).entries.filter((entry) => entry.route === 'maintenance')).toEqual([expect.objectContaining({ in_words: 10 })]);
  });

  it('does nothing without a schedule, and refuses bad limits when the service is created', async () => {
    const f = await maintenanceFixture();
    await f.learn(RESTATED);
    f.advance(DAY);
    expect(await f.service.maintainIdle()).toEqual({ planned: 0, applied: 0, refused: 0 });
    const create = (schedule: MaintenanceScheduleOptions) => () => createMemoryService({ store: inMemoryStore(), maintenance: { maxShare: 0.5, schedule } });
    expect(create({ idleMinutes: 0 })).toThrow(/idleMinutes must be a number above 0/);
    expect(create({ idleMinutes: 5, kinds: ['reflect' as never] })).toThrow(/kinds must name some of/);
    // A new policy reaches old memories only when a person applies it (issue 44).
    expect(create({ idleMinutes: 5, kinds: ['reapply_policy'] })).toThrow(/kinds must name some of merge_duplicates, supersede_history, sweep_expired, got reapply_policy/);
    expect(create({ idleMinutes: 5, maxRunsPerDay: 0 })).toThrow(/maxRunsPerDay must be an integer >= 1/);
    expect(create({ idleMinutes: 5, maxShare: 0.6 })).toThrow(/at most maintenance.maxShare \(0.5\)/);
  });
});
