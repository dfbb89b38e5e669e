import { describe, expect, it } from 'vitest';
import { createMemoryService } from '../create-memory-service.js';
import { inMemoryStore } from '../in-memory/store/index.js';
import type { MemoryWriter } from '../ports/memory-writer.js';
import type { JobRecord, TurnRecord } from '../ports/store/index.js';
import { silentLogger } from '../service/logger.js';
import { createCredits } from './credits.js';

const T0 = Date.parse('2026-01-01T00:00:00.000Z');

/** A writer that learns every turn verbatim, except turns containing FAIL. */
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

async function setup(credits?: string) {
  const store = inMemoryStore();
  const service = createMemoryService({ store, clock: { now: () => T0 }, logger: silentLogger, writer: failingWriter });
  await service.start();
  const org = await service.admin.createOrganization({ name: 'Acme', ...(credits === undefined ? {} : { credits }) });
  const { key } = await service.admin.createKey({ organizationId: org.organizationId });
  const caller = await service.authenticate({ authorization: `Bearer ${key}`, endUser: undefined, secFetchSite: undefined, requestId: 'req_t' });
  const agent = await service.agents.create({ caller, body: { agent_config: { role: 'assistant', objective: 'remember' } } });
  await service.idle();
  const thread = await service.threads.create({ caller, agentId: agent.agent_id, body: {} });
  return { store, service, org, caller, agentId: agent.agent_id, threadId: thread.thread_id };
}

const said = (text: string) => ({ content: [{ type: 'text' as const, text }] });

describe('credits', () => {
  it('charges an answer its input words and its real output words, and records the entry', async () => {
    const { service, caller, agentId, threadId, org } = await setup('10');
    expect(org.balance).toBe('10');
    const response = await service.chat({ caller, agentId, threadId, body: { turn_id: 't1', message: 'what did I say about lagoons' } });
    const billing = await service.billing({ caller, query: {} });
    const answerWords = response.message.split(/\s+/).filter(Boolean).length;
    const charge = billing.entries[0]!;
    expect(charge).toMatchObject({ route: 'chat', in_words: 6 });
    expect(charge.out_words ?? 0).toBe(Math.min(answerWords, 500));
    // 6 input words at 0.001 plus the output words at 0.002, exactly.
    const expected = (6 * 1 + 2 * Math.min(answerWords, 500)) / 1000;
    expect(Number(charge.cost)).toBeCloseTo(expected, 12);
    expect(billing).toMatchObject({ enabled: true, low_credit_threshold: '0', next_cursor: null });
    expect(Number(billing.balance)).toBeCloseTo(10 - expected, 12);
    expect(billing.entries.at(-1)).toEqual({ entry_id: expect.any(Number), route: 'credits_add', cost: '-10', created_at: new Date(T0).toISOString() });
  });

  it('answers 402 with no credit, learns and answers nothing, and keeps GET /v1/billing readable', async () => {
    const { service, caller, agentId, threadId } = await setup('0');
    await expect(service.chat({ caller, agentId, threadId, body: { turn_id: 't', message: 'hello' } })).rejects.toMatchObject({ code: 'payment_required', status: 402 });
    await expect(service.observe({ caller, agentId, threadId, body: { observations: [said('remember this')] } })).rejects.toMatchObject({ code: 'payment_required' });
    await expect(service.observeAndEnrich({ caller, agentId, threadId, body: { turn_id: 't', message: 'remember this' } })).rejects.toMatchObject({ code: 'payment_required' });
    const stream = service.chatStream({ caller, agentId, threadId, body: { turn_id: 't', message: 'hello' } });
    await expect(stream).rejects.toMatchObject({ code: 'payment_required' });
    expect((await service.threads.get({ caller, agentId, threadId })).messages).toEqual([]);
    expect(await service.billing({ caller, query: {} })).toEqual({
      organization_id: caller.organizationId,
      enabled: true,
      balance: '0',
      low_credit_threshold: '0',
      entries: [],
      next_cursor: null,
    });
  });

  it('refuses an answer whose reservation the balance cannot cover; a brief one still fits', async () => {
    const { service, caller, agentId, threadId } = await setup('0.5');
    await expect(service.chat({ caller, agentId, threadId, body: { turn_id: 't', message: 'hello' } })).rejects.toMatchObject({ code: 'payment_required' });
    await expect(service.chat({ caller, agentId, threadId, body: { turn_id: 't', message: 'hello', answer_length: 'brief' } })).resolves.toMatchObject({ turn_id: 't' });
  });

  it('charges observed turns once when read and refunds the input side of the turns not learned', async () => {
    const { service, caller, agentId, threadId } = await setup('5');
    const accepted = await service.observe({
      caller,
      agentId,
      threadId,
      body: { observations: [said('one two three'), said('FAIL four five six seven'), said('eight nine')] },
    });
    await service.idle();
    const status = await service.observationStatus({ caller, agentId, threadId, observationId: accepted.observation_id });
    expect(status.status).toBe('failed');
    expect(status.learning).toMatchObject({ not_learned_turns: [{ first: 2, last: 2 }], reason: 'generation_failed', refunded_credits: '0.005' });
    const billing = await service.billing({ caller, query: {} });
    expect(billing.entries.slice(0, 2).map(({ route, in_words, cost }) => ({ route, in_words, cost }))).toEqual([
      { route: 'refund', in_words: 5, cost: '-0.005' },
      { route: 'observe', in_words: 10, cost: '0.01' },
    ]);
    expect(billing.balance).toBe('4.995');
    // The chat that follows reports the turns not learned, with the same refund.
    const chat = await service.chat({ caller, agentId, threadId, body: { turn_id: 't', message: 'numbers', answer_length: 'brief' } });
    expect(chat.learning).toEqual([expect.objectContaining({ refunded_credits: '0.005', action: 'resend' })]);
  });

  it('pages the ledger newest first and refuses a limit outside 1..100 or a bad cursor with 400', async () => {
    const { service, caller, org } = await setup('1');
    await service.admin.addCredits({ organizationId: org.organizationId, amount: '2' });
    await service.admin.addCredits({ organizationId: org.organizationId, amount: '3.25' });
    const first = await service.billing({ caller, query: { limit: '2' } });
    expect(first.entries.map((entry) => entry.cost)).toEqual(['-3.25', '-2']);
    expect(first.balance).toBe('6.25');
    const second = await service.billing({ caller, query: { limit: '2', cursor: String(first.next_cursor) } });
    expect(second.entries.map((entry) => entry.cost)).toEqual(['-1']);
    expect(second.next_cursor).toBeNull();
    for (const query of [{ limit: '0' }, { limit: '101' }, { cursor: '0' }, { cursor: 'abc' }, { cursor: '9223372036854776001' }]) {
      await expect(service.billing({ caller, query })).rejects.toMatchObject({ code: 'invalid_request', status: 400 });
    }
    expect((await service.billing({ caller, query: { cursor: '9223372036854776000' } })).entries).toHaveLength(3);
  });

  it('shows balance null for an organization that never had credits, and lets billing be switched', async () => {
    const { service, caller, org } = await setup();
    expect(await service.billing({ caller, query: {} })).toMatchObject({ enabled: false, balance: null, low_credit_threshold: '0', entries: [] });
    await service.admin.configureBilling({ organizationId: org.organizationId, enabled: true, lowCreditThreshold: '2.50' });
    expect(await service.billing({ caller, query: {} })).toMatchObject({ enabled: true, balance: '0', low_credit_threshold: '2.5' });
    await expect(service.admin.addCredits({ organizationId: org.organizationId, amount: '-1' })).rejects.toMatchObject({ code: 'invalid_request' });
    await expect(service.admin.addCredits({ organizationId: 'org_missing', amount: '1' })).rejects.toMatchObject({ code: 'not_found' });
  });
});

describe('charges and refunds under concurrency', () => {
  async function job(turnTexts: string[]) {
    const store = inMemoryStore();
    const credits = createCredits({ store, clock: { now: () => T0 } });
    await store.organizations.insert({ organization: { id: 'org_1', name: 'A', limits: {}, createdAt: new Date(T0).toISOString() } });
    await store.agents.insert({
      agent: { id: 'agent_1', organizationId: 'org_1', status: 'ready', config: { role: 'r', objective: 'o' }, visibility: 'external', resumedFromTurn: 0, restoreFrom: null, createdAt: '', updatedAt: '' },
      maxLive: 10,
    });
    await store.ledger.configure({ organizationId: 'org_1', patch: { enabled: true } });
    await store.ledger.append({
      organizationId: 'org_1',
      entry: { kind: 'grant', route: 'credits_add', inWords: 0, outWords: 0, cost: '-100', reference: null, jobId: null, turnCosts: {}, createdAt: '' },
      requireFunds: false,
    });
    const turns: TurnRecord[] = turnTexts.map((text, turnIndex) => ({ jobId: 'obs_1', turnIndex, speaker: 'user', text, timestamp: '', tags: [], state: 'pending', failureReason: null, details: {} }));
    const stored = (await store.jobs.insert({
      job: {
        id: 'obs_1', organizationId: 'org_1', agentId: 'agent_1', threadId: 'thread_1', endUserId: null, requestId: 'r', kind: 'observe', status: 'processing',
        turnsTotal: turns.length, turnsProcessed: 0, error: null, queued: false, resumedAt: null, learning: null, details: {}, createdAt: '', updatedAt: '',
      },
      turns,
      onlyIfIdle: false,
    })) as JobRecord;
    return { store, credits, job: stored, turns };
  }

  it('charges a turn once even when two workers read the same pending turns (a resumed job never charges again)', async () => {
    const { store, credits, job: stored, turns } = await job(['one two', 'three']);
    await Promise.all([credits.readTurns(stored, turns), credits.readTurns(stored, turns)]);
    const entries = await store.ledger.list({ organizationId: 'org_1', limit: 10 });
    expect(entries.filter((entry) => entry.kind === 'charge')).toHaveLength(1);
    expect((await store.ledger.getAccount({ organizationId: 'org_1' }))!.balance).toBe('99.997');
    expect(await store.turns.counts({ jobId: 'obs_1' })).toMatchObject({ read: 2, pending: 0 });
  });

  it('reads only the turns the balance covers; the rest are refused uncharged (credits_exhausted)', async () => {
    const { store, credits, job: stored, turns } = await job(['a b', 'c d e', 'f']);
    await store.ledger.append({
      organizationId: 'org_1',
      entry: { kind: 'charge', route: 'chat', inWords: 1, outWords: 0, cost: '99.996', reference: null, jobId: null, turnCosts: {}, createdAt: '' },
      requireFunds: true,
    });
    const { read, refused } = await credits.readTurns(stored, turns);
    expect(read.map((turn) => turn.turnIndex)).toEqual([0]);
    expect(refused.map((turn) => turn.turnIndex)).toEqual([1, 2]);
    expect((await store.ledger.getAccount({ organizationId: 'org_1' }))!.balance).toBe('0.002');
    expect(await credits.refundTurns(stored, [1, 2])).toBeNull();
  });

  it('refunds a job at most once, whatever the number of concurrent settles', async () => {
    const { store, credits, job: stored, turns } = await job(['one two', 'three four five']);
    await credits.readTurns(stored, turns);
    const refunds = await Promise.all(Array.from({ length: 5 }, () => credits.refundTurns(stored, [1])));
    expect(refunds).toEqual(Array(5).fill('0.003'));
    const entries = await store.ledger.list({ organizationId: 'org_1', limit: 10 });
    expect(entries.filter((entry) => entry.kind === 'refund')).toHaveLength(1);
    expect((await store.ledger.getAccount({ organizationId: 'org_1' }))!.balance).toBe('99.998');
  });
});
