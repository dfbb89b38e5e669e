import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createClient, MemoryAgentsError, type MemoryAgentsClient } from '@memory-agents/client';
import { createMemoryService, defaultMemoryWriter, inMemoryStore, silentLogger, type MemoryService, type MemoryWriter } from '@memory-agents/core';
import { createHandler } from '@memory-agents/http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memoryIndexBackends, type OpenedIndex } from '../support/indexes.js';

// Receipts and read-your-writes (issue 33), end to end through HTTP and the typed client, on the
// in-memory index, LanceDB and, with DATABASE_URL, PostgreSQL.
const BACKENDS = memoryIndexBackends('receipts');

/**
 * The default writer, except that a turn saying "[fail]" fails (`generation_failed`) and a batch
 * with a turn saying "[hold]" waits until `release` is called: a test double of the model behind it,
 * which reports 100 input and 7 output tokens of `scripted-llm` per turn written.
 */
function scriptedWriter() {
  const inner = defaultMemoryWriter();
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  const writer: MemoryWriter = {
    specificationVersion: 'v1',
    id: inner.id,
    async write(request) {
      if (request.turns.some((turn) => turn.text.includes('[hold]'))) await held;
      const result = await inner.write(request);
      return {
        ...result,
        usage: [{ model: 'scripted-llm', inputTokens: 100 * request.turns.length, outputTokens: 7 * request.turns.length }],
        outcomes: result.outcomes.map((outcome) => {
          const turn = request.turns.find((candidate) => candidate.turnIndex === outcome.turnIndex)!;
          return turn.text.includes('[fail]') ? { turnIndex: outcome.turnIndex, ok: false as const, reason: 'generation_failed' as const, message: 'scripted failure' } : outcome;
        }),
      };
    },
  };
  return { writer, release: () => release() };
}

let opened: OpenedIndex;
let service: MemoryService;
let server: Server;
let url: string;
let client: MemoryAgentsClient;
let stranger: MemoryAgentsClient;
let agentId: string;
let threadId: string;
let release: () => void;

/** A decimal string as an exact integer of 10^-30 units (credits sum exactly, to the last decimal). */
function units(amount: string): bigint {
  const negative = amount.startsWith('-');
  const [whole, fraction = ''] = amount.replace(/^-/, '').split('.');
  const value = BigInt(whole!) * 10n ** 30n + BigInt((fraction + '0'.repeat(30)).slice(0, 30));
  return negative ? -value : value;
}

const say = (text: string, timestamp: string) => ({ speaker: 'Dana', timestamp, content: [{ type: 'text' as const, text }] });

describe.each(BACKENDS)('receipts and read-your-writes on %s', (_backend, open) => {
  beforeAll(async () => {
    opened = await open();
    const scripted = scriptedWriter();
    release = scripted.release;
    service = createMemoryService({ store: inMemoryStore(), index: opened.index, writer: scripted.writer, logger: silentLogger });
    await service.start();
    const org = await service.admin.createOrganization({ name: 'Acme', credits: '1000' });
    const other = await service.admin.createOrganization({ name: 'Other' });
    server = createServer(createHandler(service, { logger: silentLogger }));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    client = createClient({ baseUrl: url, apiKey: (await service.admin.createKey({ organizationId: org.organizationId })).key });
    stranger = createClient({ baseUrl: url, apiKey: (await service.admin.createKey({ organizationId: other.organizationId })).key });
    agentId = (await client.agents.create({ agent_config: { role: 'assistant', objective: 'remember' } })).agent_id;
    await client.agents.waitUntilReady({ agentId });
    threadId = (await client.threads.create({ agentId })).thread_id;
  });
  afterAll(async () => {
    release();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await service.stop();
    await opened.cleanup();
  });

  it('finds every learned turn of a committed observation by a memory search for its exact text', async () => {
    const texts = [
      'I adopted a grey cat named Pixel last spring.',
      'My sister Maria teaches chemistry in Porto.',
      'We are planning a kayak trip along the Dalmatian coast in August.',
    ];
    const observed = await client.threads.observe({ agentId, threadId, observations: texts.map((text, i) => say(text, `2024-03-1${i}T10:00:00Z`)) });
    const status = await client.waitForObservation({ agentId, threadId, observationId: observed.observation_id });
    expect(status.status).toBe('committed');
    for (const [turnIndex, text] of texts.entries()) {
      const { hits } = await client.memories.search({ agentId, query: text });
      const sources = hits.map((hit) => hit.memory.source);
      expect(sources, text).toContainEqual(expect.objectContaining({ observation_id: observed.observation_id, turn_index: turnIndex }));
    }
  });

  it('reports per turn what was learned, superseded and skipped, and sums to the ledger exactly', async () => {
    const first = await client.threads.observe({ agentId, threadId, observations: [say('I live in Lisbon.', '2024-04-01T10:00:00Z')] });
    await client.waitForObservation({ agentId, threadId, observationId: first.observation_id });
    const before = await client.threads.observationReceipt({ agentId, threadId, observationId: first.observation_id });
    expect(before.status).toBe('committed');
    const lisbon = before.turns[0]!.memory_ids;
    expect(lisbon).toHaveLength(1);

    const second = await client.threads.observe({ agentId, threadId, observations: [say('I moved to Berlin.', '2024-05-01T10:00:00Z'), say('My favourite tea is sencha. [fail]', '2024-05-01T10:01:00Z'), say('I play the cello on weekends.', '2024-05-01T10:02:00Z')] });
    const status = await client.waitForObservation({ agentId, threadId, observationId: second.observation_id });
    expect(status.status).toBe('failed');
    const receipt = await client.threads.observationReceipt({ agentId, threadId, observationId: second.observation_id });
    expect(receipt).toMatchObject({ agent_id: agentId, thread_id: threadId, observation_id: second.observation_id, status: 'failed', superseded_without_successor: [] });
    const [moved, tea, cello] = receipt.turns;
    expect(moved).toMatchObject({ turn_index: 0, outcome: 'learned', reason: null, superseded: lisbon, refunded_credits: '0' });
    expect(tea).toMatchObject({ turn_index: 1, outcome: 'skipped', reason: 'generation_failed', memory_ids: [], superseded: [] });
    expect(cello).toMatchObject({ turn_index: 2, outcome: 'learned', reason: null, superseded: [] });

    // The memory ids are the ones the memories API lists for the job, and the old fact points to its successor.
    for (const turn of [moved!, cello!]) {
      expect(turn.memory_ids.length).toBeGreaterThan(0);
      for (const memoryId of turn.memory_ids) {
        const memory = await client.memories.get({ agentId, memoryId });
        expect(memory.source).toMatchObject({ observation_id: second.observation_id, turn_index: turn.turn_index });
      }
    }
    expect((await client.memories.get({ agentId, memoryId: lisbon[0]! })).superseded_by).toBe(moved!.memory_ids[0]);

    // Credits: every turn was charged; the failed one refunded; each links to the entries holding it.
    const billing = await client.billing.get({ limit: 100 });
    const entries = billing.entries.filter((entry) => receipt.ledger_entries.some((linked) => linked.entry_id === entry.entry_id));
    expect(entries.length).toBe(receipt.ledger_entries.length);
    const ledgerNet = entries.reduce((sum, entry) => sum + units(entry.cost), 0n);
    const turnsNet = receipt.turns.reduce((sum, turn) => sum + units(turn.charged_credits) - units(turn.refunded_credits), 0n);
    expect(units(receipt.net_credits)).toBe(ledgerNet);
    expect(turnsNet).toBe(ledgerNet);
    expect(ledgerNet).toBeGreaterThan(0n);
    for (const turn of receipt.turns) expect(units(turn.charged_credits)).toBeGreaterThan(0n);
    expect(tea!.refunded_credits).toBe(tea!.charged_credits);
    const refund = receipt.ledger_entries.find((entry) => entry.kind === 'refund')!;
    expect(-units(refund.cost)).toBe(units(tea!.charged_credits));
    expect(tea!.ledger_entry_ids).toContain(refund.entry_id);
    expect(moved!.ledger_entry_ids).not.toContain(refund.entry_id);

    // Model tokens: the batch's (all three turns, the failed one too) split by text length, the
    // remainder on the last turn; the built-in hashed embedder reports none.
    expect(receipt.model_tokens).toEqual([{ model: 'scripted-llm', input_tokens: 300, output_tokens: 21 }]);
    const lengths = ['I moved to Berlin.', 'My favourite tea is sencha. [fail]', 'I play the cello on weekends.'].map((text) => text.length);
    const total = lengths.reduce((a, b) => a + b, 0);
    const inputs = lengths.map((length) => Math.floor((300 * length) / total));
    inputs[2] = 300 - inputs[0]! - inputs[1]!;
    expect(receipt.turns.map((turn) => turn.model_tokens.map((entry) => [entry.model, entry.input_tokens]))).toEqual(inputs.map((n) => [['scripted-llm', n]]));
    expect(receipt.turns.reduce((sum, turn) => sum + turn.model_tokens[0]!.output_tokens, 0)).toBe(21);
    expect(before.model_tokens).toEqual([{ model: 'scripted-llm', input_tokens: 100, output_tokens: 7 }]);
    expect(before.turns[0]!.model_tokens).toEqual([{ model: 'scripted-llm', input_tokens: 100, output_tokens: 7 }]);
  });

  it('refuses a receipt before the job is final (409), and for an unknown id, another thread or another organization (404)', async () => {
    const held = await client.threads.observe({ agentId, threadId, observations: [say('Hold this one for a moment. [hold]', '2024-06-01T10:00:00Z')] });
    const refused = await client.threads.observationReceipt({ agentId, threadId, observationId: held.observation_id }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(MemoryAgentsError);
    expect(refused).toMatchObject({ status: 409, code: 'conflict' });
    expect((refused as MemoryAgentsError).message).toMatch(/final|committed/);
    release();
    await client.waitForObservation({ agentId, threadId, observationId: held.observation_id });
    expect((await client.threads.observationReceipt({ agentId, threadId, observationId: held.observation_id })).status).toBe('committed');

    const otherThread = (await client.threads.create({ agentId })).thread_id;
    const strangerAgent = (await stranger.agents.create({ agent_config: { role: 'assistant', objective: 'remember' } })).agent_id;
    const attempts = [
      () => client.threads.observationReceipt({ agentId, threadId, observationId: 'obs_doesnotexist' }),
      () => client.threads.observationReceipt({ agentId, threadId, observationId: 'not an id' }),
      () => client.threads.observationReceipt({ agentId, threadId: otherThread, observationId: held.observation_id }),
      () => stranger.threads.observationReceipt({ agentId, threadId, observationId: held.observation_id }),
      () => stranger.threads.observationReceipt({ agentId: strangerAgent, threadId, observationId: held.observation_id }),
    ];
    for (const attempt of attempts) {
      const error = await attempt().catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(MemoryAgentsError);
      expect((error as MemoryAgentsError).status).toBe(404);
    }
  });
});
