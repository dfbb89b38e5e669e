// reapply_policy (issue 44): an agent's new extraction policy applied to memories kept under an
// older version, through a maintenance run: the dry run's diff, apply, undo, the guard, and a
// policy changed since the dry run refused.
import { describe, expect, it } from 'vitest';
import { maintenanceFixture } from '../__fixtures__/maintenance.js';
import { inMemoryMemoryIndex } from '../in-memory/in-memory-memory-index.js';
import { inMemoryStore } from '../in-memory/store/index.js';
import type { MemoryIndex } from '../ports/memory-index.js';
import type { ExtractionPolicy } from '../ports/store/index.js';

const DAY = 86_400_000;
const CARD = 'My card number is 4111 1111 1111 1111.';
const LEARNED = [CARD, 'I love hiking in the Alps.', 'We ordered pizza yesterday.', 'My brother plays the cello.'];
const POLICY: ExtractionPolicy = { redact: ['card_number'], categories: [{ name: 'hobbies', keywords: ['hiking', 'cello'] }], exclude: [{ keywords: ['pizza'] }] };

async function learnedBeforeThePolicy() {
  const f = await maintenanceFixture({ maintenance: { maxShare: 1 } });
  await f.learn(LEARNED);
  const setPolicy = (policy: ExtractionPolicy) => f.service.agents.update({ caller: f.owner, agentId: f.agentId, body: { agent_config: { role: 'assistant', objective: 'remember', extraction_policy: policy } } });
  await setPolicy(POLICY);
  const hobbies = async () => (await f.service.memories.list({ caller: f.owner, agentId: f.agentId, query: { category: 'hobbies' } })).memories.map((memory) => memory.text).sort();
  return { ...f, setPolicy, hobbies };
}

describe('reapply_policy', () => {
  it('dry run: drops, redacts and re-categorises old memories in the diff, changing nothing', async () => {
    const f = await learnedBeforeThePolicy();
    const plan = await f.service.maintenance.plan({ caller: f.owner, agentId: f.agentId, body: { kind: 'reapply_policy', max_share: 0.5 } });
    const byText = Object.fromEntries(plan.changes.map((change) => [change.memory_text, change]));
    expect(byText[CARD]).toMatchObject({ action: 'redact', keep_text: 'My card number is [redacted:card_number].', category: { from: null, to: null } });
    expect(byText['I love hiking in the Alps.']).toMatchObject({ action: 'recategorise', keep_id: null, category: { from: null, to: 'hobbies' } });
    expect(byText['My brother plays the cello.']).toMatchObject({ action: 'recategorise', category: { from: null, to: 'hobbies' } });
    expect(byText['We ordered pizza yesterday.']).toMatchObject({ action: 'forget', reason: expect.stringContaining('extraction_policy.exclude[0] (keyword "pizza")') });
    // Only the dropped memory leaves search: 1 of 4.
    expect(plan.guard).toMatchObject({ allowed: true, share: 0.25 });
    expect(await f.currentTexts()).toEqual([...LEARNED].sort());
    expect(await f.hobbies()).toEqual([]);
  });

  it('apply: the policy holds for old memories (the card number gone from current memory, then erased); undo gives everything back', async () => {
    const f = await learnedBeforeThePolicy();
    const plan = await f.service.maintenance.plan({ caller: f.owner, agentId: f.agentId, body: { kind: 'reapply_policy', max_share: 0.5 } });
    const applied = await f.service.maintenance.apply({ caller: f.owner, agentId: f.agentId, runId: plan.run_id });
    expect(applied).toMatchObject({ status: 'applied', receipt: { redacted: 1, recategorised: 2, forgotten: 1, merged: 0, superseded: 0 } });
    expect(await f.currentTexts()).toEqual(['I love hiking in the Alps.', 'My brother plays the cello.', 'My card number is [redacted:card_number].']);
    expect(await f.hobbies()).toEqual(['I love hiking in the Alps.', 'My brother plays the cello.']);
    const redact = plan.changes.find((change) => change.action === 'redact')!;
    const [redacted] = await f.index.get({ agentId: f.agentId, ids: [redact.keep_id!] });
    expect(redacted).toMatchObject({ text: 'My card number is [redacted:card_number].', validTo: null });
    expect(redacted!.keywords).not.toContain('4111');
    expect((await f.service.recall({ caller: f.owner, agentId: f.agentId, body: { query: 'What is my card number 4111?' } })).memory_context).not.toContain('4111 1111');
    // Nothing left to do under this version.
    expect((await f.service.maintenance.plan({ caller: f.owner, agentId: f.agentId, body: { kind: 'reapply_policy' } })).changes).toEqual([]);
    const undone = await f.service.maintenance.undo({ caller: f.owner, agentId: f.agentId, runId: plan.run_id });
    expect(undone.status).toBe('undone');
    expect(await f.currentTexts()).toEqual([...LEARNED].sort());
    expect(await f.hobbies()).toEqual([]);
    expect(await f.index.get({ agentId: f.agentId, ids: [redact.keep_id!] })).toEqual([]);
    // Applied again by a new run and left: once the restore window ends the old text is erased.
    const again = await f.service.maintenance.plan({ caller: f.owner, agentId: f.agentId, body: { kind: 'reapply_policy', max_share: 0.5 } });
    await f.service.maintenance.apply({ caller: f.owner, agentId: f.agentId, runId: again.run_id });
    f.advance(8 * DAY);
    await f.service.sweepMemories();
    expect(await f.index.get({ agentId: f.agentId, ids: [redact.memory_id] })).toEqual([]);
  });

  it('refuses a dry run planned under another policy version (409), and has nothing to do without a policy', async () => {
    const f = await learnedBeforeThePolicy();
    const plan = await f.service.maintenance.plan({ caller: f.owner, agentId: f.agentId, body: { kind: 'reapply_policy', max_share: 0.5 } });
    await f.setPolicy({ ...POLICY, redact: [] });
    await expect(f.service.maintenance.apply({ caller: f.owner, agentId: f.agentId, runId: plan.run_id })).rejects.toMatchObject({ status: 409, message: expect.stringContaining('planned under version 1') });
    expect(await f.currentTexts()).toEqual([...LEARNED].sort());
    await f.setPolicy({});
    const none = await maintenanceFixture();
    await none.learn(LEARNED);
    expect((await none.service.maintenance.plan({ caller: none.owner, agentId: none.agentId, body: { kind: 'reapply_policy' } })).changes).toEqual([]);
  });

  it('a crash after the redacted memory was written: the next start finishes the run, writing it once; undo removes it', async () => {
    const store = inMemoryStore();
    const index = inMemoryMemoryIndex();
    let crash = false;
    // The index's next `update` (once `crash` is set) stops the "process" before it writes (a test double of a kill).
    const crashing = new Proxy(index, {
      get: (target, name, receiver) =>
        name !== 'update'
          ? Reflect.get(target, name, receiver)
          : async (request: Parameters<MemoryIndex['update']>[0]) => {
              if (!crash) return target.update(request);
              crash = false;
              throw new Error('process killed');
            },
    });
    const f = await maintenanceFixture({ store, index: crashing, maintenance: { maxShare: 1 } });
    await f.learn(LEARNED);
    await f.service.agents.update({ caller: f.owner, agentId: f.agentId, body: { agent_config: { role: 'assistant', objective: 'remember', extraction_policy: { redact: ['card_number'] } } } });
    const plan = await f.service.maintenance.plan({ caller: f.owner, agentId: f.agentId, body: { kind: 'reapply_policy' } });
    expect(plan.changes).toEqual([expect.objectContaining({ action: 'redact' })]);
    crash = true;
    await expect(f.service.maintenance.apply({ caller: f.owner, agentId: f.agentId, runId: plan.run_id })).rejects.toThrow('process killed');
    // Killed between writing the redacted memory and superseding the old one: both current for now.
    await store.maintenanceRuns.update({ runId: plan.run_id, patch: { status: 'applying', error: null }, updatedAt: new Date(f.now()).toISOString() });
    expect((await f.currentTexts()).filter((text) => text.startsWith('My card number'))).toHaveLength(2);
    const restarted = await maintenanceFixture({ store, index, reuse: f });
    expect(await restarted.service.maintenance.get({ caller: restarted.owner, agentId: f.agentId, runId: plan.run_id })).toMatchObject({ status: 'applied', receipt: { redacted: 1 } });
    expect((await restarted.currentTexts()).filter((text) => text.startsWith('My card number'))).toEqual(['My card number is [redacted:card_number].']);
    const all = await index.list({ agentId: f.agentId, limit: 100, includeHistory: true });
    expect(all.records.filter((record) => record.text === 'My card number is [redacted:card_number].')).toHaveLength(1);
    await restarted.service.maintenance.undo({ caller: restarted.owner, agentId: f.agentId, runId: plan.run_id });
    expect(await restarted.currentTexts()).toEqual([...LEARNED].sort());
    expect(await index.get({ agentId: f.agentId, ids: [plan.changes[0]!.keep_id!] })).toEqual([]);
  });
});
