import { describe, expect, it } from 'vitest';
import { learningService } from '../__fixtures__/learning-service.js';
import { isServiceError } from '../errors/index.js';
import { defaultMemoryWriter } from '../memory/default-memory-writer.js';
import type { MemoryWriter } from '../ports/memory-writer.js';

const say = (text: string, timestamp: string) => ({ speaker: 'Dana', timestamp, content: [{ type: 'text' as const, text }] });

describe('service.observationReceipt', () => {
  it('names supersessions inside one job and after it, including a fact that stopped being true, with billing off', async () => {
    const { service, owner: caller, agentId, threadId, observeSettled } = await learningService();
    const receiptOf = (observationId: string) => service.observationReceipt({ caller, agentId, threadId, observationId });

    const first = await observeSettled([say('I live in Paris.', '2024-01-01T10:00:00Z'), say('I moved to Rome.', '2024-02-01T10:00:00Z'), say('I work at Acme.', '2024-02-02T10:00:00Z')]);
    const one = await receiptOf(first.observation_id);
    expect(one.turns.map((turn) => turn.outcome)).toEqual(['learned', 'learned', 'learned']);
    const [paris, rome, acme] = one.turns;
    expect(paris!.memory_ids).toEqual([`mem_${first.observation_id.slice(4)}_0_0`]);
    expect(rome!.superseded).toEqual(paris!.memory_ids);
    // Billing off: nothing charged, no ledger entry.
    expect(one.turns.every((turn) => turn.charged_credits === '0' && turn.refunded_credits === '0' && turn.ledger_entry_ids.length === 0)).toBe(true);
    expect(one).toMatchObject({ net_credits: '0', ledger_entries: [], superseded_without_successor: [] });
    // The default writer and the built-in hashed embedder report no model tokens.
    expect(one.model_tokens).toEqual([]);
    expect(one.turns.every((turn) => turn.model_tokens.length === 0)).toBe(true);

    const second = await observeSettled([say('I no longer work at Acme.', '2024-03-01T10:00:00Z')]);
    const two = await receiptOf(second.observation_id);
    // The default writer keeps the "no longer" statement as a memory, which succeeds the old fact.
    expect(two.turns[0]!.superseded).toEqual(acme!.memory_ids);
    expect(two.superseded_without_successor).toEqual([]);
  });

  it('lists a memory ended without a successor (a writer\'s "delete") apart from the turns', async () => {
    const inner = defaultMemoryWriter();
    let forget: string | null = null;
    // A test double of an LLM writer that deletes a fact: a supersession with no `by`.
    const writer: MemoryWriter = {
      specificationVersion: 'v1',
      id: inner.id,
      async write(request) {
        const result = await inner.write(request);
        return forget ? { ...result, supersedes: [{ old: { id: forget } }] } : result;
      },
    };
    const { service, owner: caller, agentId, threadId, observeSettled } = await learningService({ writer });
    const first = await observeSettled([say('My locker code is 4411.', '2024-01-01T10:00:00Z')]);
    const locker = (await service.observationReceipt({ caller, agentId, threadId, observationId: first.observation_id })).turns[0]!.memory_ids[0]!;
    forget = locker;
    const second = await observeSettled([say('Please forget the locker code.', '2024-01-02T10:00:00Z')]);
    const receipt = await service.observationReceipt({ caller, agentId, threadId, observationId: second.observation_id });
    expect(receipt.superseded_without_successor).toEqual([locker]);
    expect(receipt.turns[0]).toMatchObject({ outcome: 'learned', superseded: [] });
    expect((await service.memories.get({ caller, agentId, memoryId: locker })).valid_to).not.toBeNull();
  });

  it('is a 404 for a malformed or unknown id, and refuses nothing else for a final job', async () => {
    const { service, owner: caller, agentId, threadId } = await learningService();
    for (const observationId of ['obs_unknown', '../status', '']) {
      const error = await service.observationReceipt({ caller, agentId, threadId, observationId }).catch((caught: unknown) => caught);
      expect(isServiceError(error) && error.status === 404 && error.code === 'not_found').toBe(true);
    }
  });
});
