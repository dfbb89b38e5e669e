// Maintenance charged as learning is (issue 43): the words of the memories a run changes, once per
// run, at the input-word price; out of credit, the dry run and the application are 402 and change nothing.
import { describe, expect, it } from 'vitest';
import { maintenanceFixture } from '../__fixtures__/maintenance.js';

const RESTATED = ['I am allergic to peanuts.', 'I am allergic to peanuts!', 'I am allergic to peanuts?!', 'My brother plays the cello.'];

describe('maintenance credits', () => {
  it('charges an application the input words of the memories it changes, once, under route maintenance', async () => {
    const f = await maintenanceFixture({ credits: '10' });
    await f.learn(RESTATED);
    const request = { caller: f.owner, agentId: f.agentId };
    const before = await f.service.billing({ caller: f.owner, query: {} });
    const plan = await f.service.maintenance.plan({ ...request, body: { kind: 'merge_duplicates', max_share: 0.5 } });
    // A dry run is free.
    expect((await f.service.billing({ caller: f.owner, query: {} })).balance).toBe(before.balance);
    await f.service.maintenance.apply({ ...request, runId: plan.run_id });
    const after = await f.service.billing({ caller: f.owner, query: {} });
    const charges = after.entries.filter((entry) => entry.route === 'maintenance');
    // Two memories merged, five words each, at 0.001 credit per input word.
    expect(charges).toEqual([expect.objectContaining({ in_words: 10, cost: '0.01' })]);
    expect(Number(after.balance)).toBeCloseTo(Number(before.balance) - 0.01, 12);
    // Undoing and re-applying a run is refused, never charged again.
    await f.service.maintenance.undo({ ...request, runId: plan.run_id });
    await expect(f.service.maintenance.apply({ ...request, runId: plan.run_id })).rejects.toMatchObject({ status: 409 });
    expect((await f.service.billing({ caller: f.owner, query: {} })).entries.filter((entry) => entry.route === 'maintenance')).toHaveLength(1);
  });

  it('out of credit: the dry run and the application are 402 payment_required and nothing changes', async () => {
    const f = await maintenanceFixture({ credits: '10' });
    await f.learn(RESTATED);
    const request = { caller: f.owner, agentId: f.agentId };
    const plan = await f.service.maintenance.plan({ ...request, body: { kind: 'merge_duplicates', max_share: 0.5 } });
    // Spend all but less than the run costs (0.01).
    const { balance } = await f.service.billing({ caller: f.owner, query: {} });
    const spend = (Number(balance) - 0.005).toFixed(6);
    await f.store.ledger.append({ organizationId: f.organizationId, entry: { kind: 'charge', route: 'test', inWords: 0, outWords: 0, cost: spend, reference: null, jobId: null, turnCosts: {}, createdAt: new Date(f.now()).toISOString() }, requireFunds: true });
    await expect(f.service.maintenance.apply({ ...request, runId: plan.run_id })).rejects.toMatchObject({ status: 402, code: 'payment_required', message: expect.stringContaining(plan.run_id) });
    expect(await f.service.maintenance.get({ ...request, runId: plan.run_id })).toMatchObject({ status: 'dry_run', progress: { done: 0 } });
    expect(await f.currentTexts()).toHaveLength(4);
    await f.store.ledger.append({ organizationId: f.organizationId, entry: { kind: 'charge', route: 'test', inWords: 0, outWords: 0, cost: '0.005', reference: null, jobId: null, turnCosts: {}, createdAt: new Date(f.now()).toISOString() }, requireFunds: true });
    await expect(f.service.maintenance.plan({ ...request, body: { kind: 'merge_duplicates', max_share: 0.5 } })).rejects.toMatchObject({ status: 402 });
    // Credits added: the same dry run applies.
    await f.service.admin.addCredits({ organizationId: f.organizationId, amount: '1' });
    expect(await f.service.maintenance.apply({ ...request, runId: plan.run_id })).toMatchObject({ status: 'applied', receipt: { merged: 2 } });
    expect(await f.currentTexts()).toHaveLength(2);
  });
});
