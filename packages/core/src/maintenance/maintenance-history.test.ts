// supersede_history judged as the writer judges a new turn: only the memories its candidate search
// (the writer's top SUPERSESSION_CANDIDATES by the index, said no later) would show are compared.
import { describe, expect, it } from 'vitest';
import { maintenanceFixture } from '../__fixtures__/maintenance.js';
import { SUPERSESSION_CANDIDATES } from '../memory/default-memory-writer.js';

const BERLIN = 'I moved, I live in Berlin now.';

/** Alice's old residence, then `others` people saying Alice's new sentence word for word, then Alice's. */
async function history(others: number) {
  const f = await maintenanceFixture();
  await f.learn(['I live in Paris.'], '2025-01-01T10:00:00Z');
  for (let i = 0; i < others; i++) await f.learn([BERLIN], '2025-03-01T10:00:00Z', `Guest${i}`);
  await f.learn([BERLIN], '2025-06-01T10:00:00Z');
  // Later memories (absent when Alice's was learned) never take an earlier one's place.
  for (let i = 0; i < SUPERSESSION_CANDIDATES; i++) await f.learn([BERLIN], '2025-09-01T10:00:00Z', `Later${i}`);
  await f.unsupersedeAll();
  return f;
}

describe('supersede_history over the writer candidates', () => {
  it('supersedes an earlier fact among the nearest candidates said no later, whatever was said after', async () => {
    const f = await history(SUPERSESSION_CANDIDATES - 1);
    const plan = await f.service.maintenance.plan({ caller: f.owner, agentId: f.agentId, body: { kind: 'supersede_history', max_share: 0.5 } });
    expect(plan.changes).toEqual([expect.objectContaining({ action: 'supersede', memory_text: 'I live in Paris.', keep_text: BERLIN })]);
  });

  it('leaves an earlier fact the writer would not have looked at (outside its candidates)', async () => {
    const f = await history(SUPERSESSION_CANDIDATES);
    const plan = await f.service.maintenance.plan({ caller: f.owner, agentId: f.agentId, body: { kind: 'supersede_history', max_share: 0.5 } });
    expect(plan.changes).toEqual([]);
  });
});
