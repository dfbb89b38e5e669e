import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
// The maintenance fixture kept with core's tests (a fixture, not a published module).
import { maintenanceFixture } from '../../core/src/__fixtures__/maintenance.js';
import { lancedbMemoryIndex } from './lancedb-memory-index.js';

/**
 * Maintenance runs on the LanceDB index (issues 43, 44): merge applied and undone, and
 * `reapply_policy` (a redaction written as a new record, a drop, a re-categorisation) applied and
 * undone, as core's tests do on the in-memory index and adapter-postgres's on PGlite.
 */
describe('maintenance runs on LanceDB', () => {
  it('merges restatements and applies a new policy to older memories; undo gives all back', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'memory-agents-maintenance-'));
    const f = await maintenanceFixture({ index: lancedbMemoryIndex({ uri: directory }), maintenance: { maxShare: 1 } });
    try {
      const learned = ['My card number is 4111 1111 1111 1111.', 'I love hiking in the Alps.', 'I love hiking in the Alps!', 'We ordered pizza yesterday.'];
      await f.learn(learned);
      const request = { caller: f.owner, agentId: f.agentId };
      const merge = await f.service.maintenance.plan({ ...request, body: { kind: 'merge_duplicates', max_share: 0.5 } });
      expect((await f.service.maintenance.apply({ ...request, runId: merge.run_id })).receipt).toMatchObject({ merged: 1 });
      expect(await f.currentTexts()).toHaveLength(3);
      await f.service.maintenance.undo({ ...request, runId: merge.run_id });
      expect(await f.currentTexts()).toEqual([...learned].sort());

      const policy = { redact: ['card_number'], categories: [{ name: 'hobbies', keywords: ['hiking'] }], exclude: [{ keywords: ['pizza'] }] };
      await f.service.agents.update({ ...request, body: { agent_config: { role: 'assistant', objective: 'remember', extraction_policy: policy } } });
      const plan = await f.service.maintenance.plan({ ...request, body: { kind: 'reapply_policy', max_share: 0.5 } });
      const applied = await f.service.maintenance.apply({ ...request, runId: plan.run_id });
      expect(applied.receipt).toEqual({ merged: 0, superseded: 0, forgotten: 1, redacted: 1, recategorised: 2 });
      expect(await f.currentTexts()).toEqual(['I love hiking in the Alps!', 'I love hiking in the Alps.', 'My card number is [redacted:card_number].']);
      await f.service.maintenance.undo({ ...request, runId: plan.run_id });
      expect(await f.currentTexts()).toEqual([...learned].sort());
    } finally {
      await f.service.stop();
      await rm(directory, { recursive: true, force: true });
    }
  }, 120_000);
});
