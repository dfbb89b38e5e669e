import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MemoryWriter } from '@memory-agents/core';
import { readyAgent } from '../support/client.js';
import { startInProcessServer, type InProcessServer } from './billing-support.js';

/** A memory writer double: learns every turn verbatim, fails the turns that contain FAIL. */
const failingWriter: MemoryWriter = {
  specificationVersion: 'v1',
  id: 'failing-writer',
  async write({ turns }) {
    return {
      outcomes: turns.map((turn) =>
        turn.text.includes('FAIL')
          ? { turnIndex: turn.turnIndex, ok: false as const, reason: 'generation_failed', message: 'failed on purpose' }
          : { turnIndex: turn.turnIndex, ok: true as const, memories: [{ text: turn.text, keywords: '', speaker: turn.speaker, occurredAt: null, source: turn.source }] },
      ),
    };
  },
};

let server: InProcessServer;

beforeAll(async () => {
  server = await startInProcessServer({ writer: failingWriter }, { credits: '3' });
});
afterAll(async () => {
  await server.close();
});

const said = (text: string) => ({ content: [{ type: 'text', text }] });

async function settle(path: string) {
  for (let i = 0; i < 500; i++) {
    const status = (await server.api.get(path)).body;
    if (['committed', 'failed', 'cancelled'].includes(status.status) && (status.status === 'committed' || status.learning !== null)) return status;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`never settled: ${path}`);
}

describe('refunds of turns not learned (in-process service behind createHandler)', () => {
  it('refunds the input side of failed turns once, in the learning report, in chat `learning` and in the ledger', async () => {
    const agent = await readyAgent(server.api);
    const thread = (await server.api.post(`/v1/agents/${agent.agent_id}/threads`, {})).body.thread_id;
    const base = `/v1/agents/${agent.agent_id}/threads/${thread}`;
    const accepted = await server.api.post(`${base}/observe`, {
      observations: [said('the ferry leaves at nine'), said('FAIL this turn is not learned'), said('FAIL nor this one'), said('bring a coat')],
    });
    expect(accepted.status).toBe(202);
    const status = await settle(`${base}/observe/${accepted.body.observation_id}/status`);
    expect(status.status).toBe('failed');
    // 6 + 4 words not learned, at 0.001 per input word.
    expect(status.learning).toEqual({
      status: 'not_learned',
      not_learned_turns: [{ first: 2, last: 3 }],
      reason: 'generation_failed',
      message: expect.any(String),
      refunded_credits: '0.01',
      action: 'resend',
    });

    const billing = (await server.api.get('/v1/billing')).body;
    expect(billing.entries.slice(0, 2)).toEqual([
      { entry_id: expect.any(Number), route: 'refund', in_words: 10, cost: '-0.01', created_at: expect.any(String) },
      { entry_id: expect.any(Number), route: 'observe', in_words: 18, cost: '0.018', created_at: expect.any(String) },
    ]);
    expect(billing.balance).toBe('2.992');

    // The next chat in the thread reports the turns with the same refund, once.
    const chat = await server.api.post(`${base}/chat`, { turn_id: 'c1', message: 'when does the ferry leave', answer_length: 'brief' });
    expect(chat.status).toBe(200);
    expect(chat.body.learning).toEqual([
      { request_id: expect.any(String), role: 'user', status: 'not_learned', reason: 'generation_failed', message: expect.any(String), refunded_credits: '0.01', action: 'resend' },
    ]);
    const again = await server.api.post(`${base}/chat`, { turn_id: 'c2', message: 'anything else', answer_length: 'brief' });
    expect(again.body.learning).toEqual([]);
    const refunds = (await server.api.get('/v1/billing?limit=100')).body.entries.filter((entry: { route: string }) => entry.route === 'refund');
    expect(refunds).toHaveLength(1);
  });

  it('reports refunded_credits null when the failed turns were never charged (billing off)', async () => {
    const unbilled = await startInProcessServer({ writer: failingWriter });
    try {
      const agent = await readyAgent(unbilled.api);
      const thread = (await unbilled.api.post(`/v1/agents/${agent.agent_id}/threads`, {})).body.thread_id;
      const base = `/v1/agents/${agent.agent_id}/threads/${thread}`;
      const accepted = await unbilled.api.post(`${base}/observe`, { observations: [said('FAIL never learned')] });
      const path = `${base}/observe/${accepted.body.observation_id}/status`;
      let status;
      for (let i = 0; i < 500; i++) {
        status = (await unbilled.api.get(path)).body;
        if (status.learning !== null) break;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(status.learning).toMatchObject({ refunded_credits: null });
      expect((await unbilled.api.get('/v1/billing')).body).toMatchObject({ balance: null, entries: [] });
    } finally {
      await unbilled.close();
    }
  });
});
