import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, readyAgent, type Client } from '../support/client.js';
import { removeDataDir, runCli, startServerProcess, type ServerProcess } from '../support/server.js';
import { as, rateHeaders } from './billing-support.js';

/**
 * Credits through the built CLI server: organizations created with `--credits`, `credits add`
 * through the running server's control socket, 402 with nothing learned or answered, the ledger
 * read with GET /v1/billing (also with no credit), and billing switched off.
 */
let server: ServerProcess;

beforeAll(async () => {
  server = await startServerProcess();
});
afterAll(async () => {
  await server.stop();
  await removeDataDir(server.dataDir);
});

async function cli(...args: string[]) {
  const result = await runCli([...args, '--data', server.dataDir, '--json']);
  if (result.code !== 0) throw new Error(`${args.join(' ')}: ${result.code} ${result.stderr}`);
  return JSON.parse(result.stdout);
}

async function organization(credits: string): Promise<{ id: string; api: Client }> {
  const org = await cli('orgs', 'create', '--name', `Billed ${credits}`, '--credits', credits);
  expect(org).toEqual({ organization_id: expect.stringMatching(/^org_/), name: `Billed ${credits}`, balance: credits });
  const key = await cli('keys', 'create', '--org', org.organization_id);
  return { id: org.organization_id, api: client(server.url, key.key) };
}

describe('credits and billing over the CLI server', () => {
  it('refuses learning and answering with 402 at --credits 0, keeps billing readable, and works once credits are added', async () => {
    const { id, api } = await organization('0');
    const agent = await readyAgent(api);
    const thread = (await api.post(`/v1/agents/${agent.agent_id}/threads`, {})).body.thread_id;
    const base = `/v1/agents/${agent.agent_id}/threads/${thread}`;

    const chat = await api.post(`${base}/chat`, { turn_id: 't1', message: 'hello' });
    expect(chat.status).toBe(402);
    expect(chat.body).toEqual({ error: expect.any(String), code: 'payment_required', request_id: chat.headers.get('x-request-id') });
    expect(rateHeaders(chat)).toMatchObject({ limit: 20, remaining: 19 });
    const stream = await api.post(`${base}/chat/stream`, { turn_id: 't2', message: 'hello' });
    expect(stream.status).toBe(402);
    expect(stream.headers.get('content-type')).toContain('application/json');
    expect((await api.post(`${base}/observe`, { observations: [{ content: [{ type: 'text', text: 'remember me' }] }] })).status).toBe(402);
    expect((await api.post(`${base}/observe-and-respond`, { turn_id: 't3', message: 'remember me' })).status).toBe(402);
    expect((await api.post(`${base}/observe-and-enrich`, { turn_id: 't4', message: 'remember me' })).status).toBe(402);
    // Nothing was answered or learned.
    expect((await api.get(base)).body.messages).toEqual([]);

    const empty = await api.get('/v1/billing');
    expect(empty.status).toBe(200);
    expect(empty.body).toEqual({ organization_id: id, enabled: true, balance: '0', low_credit_threshold: '0', entries: [], next_cursor: null });

    // Added through the running server's control socket (PGlite admits one process).
    const added = await cli('credits', 'add', '--org', id, '--amount', '2.5');
    expect(added).toMatchObject({ organization_id: id, enabled: true, balance: '2.5', entry_id: expect.any(Number) });
    const answered = await api.post(`${base}/chat`, { turn_id: 't5', message: 'what do you know' });
    expect(answered.status).toBe(200);
    const billing = (await api.get('/v1/billing')).body;
    expect(billing.entries[0]).toMatchObject({ route: 'chat', in_words: 4, cost: expect.stringMatching(/^\d+(\.\d+)?$/) });
    expect(billing.entries[1]).toEqual({ entry_id: added.entry_id, route: 'credits_add', cost: '-2.5', created_at: expect.any(String) });
    expect(Number(billing.balance)).toBeCloseTo(2.5 - Number(billing.entries[0].cost), 12);
  });

  it('charges observed turns when read, one ledger entry per batch', async () => {
    const { api } = await organization('1');
    const agent = await readyAgent(api);
    const thread = (await api.post(`/v1/agents/${agent.agent_id}/threads`, {})).body.thread_id;
    const base = `/v1/agents/${agent.agent_id}/threads/${thread}`;
    const accepted = await api.post(`${base}/observe`, { observations: [{ content: [{ type: 'text', text: 'the harbor opens at dawn' }] }, { content: [{ type: 'text', text: 'bring two ropes' }] }] });
    expect(accepted.status).toBe(202);
    for (let i = 0; i < 500; i++) {
      const status = (await api.get(`${base}/observe/${accepted.body.observation_id}/status`)).body;
      if (status.status === 'committed') break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const billing = (await api.get('/v1/billing')).body;
    expect(billing.entries[0]).toMatchObject({ route: 'observe', in_words: 8, cost: '0.008' });
    expect(billing.entries[0].out_words).toBeUndefined();
    expect(billing.balance).toBe('0.992');
  });

  it('pages entries newest first with an integer cursor and refuses limit outside 1..100', async () => {
    const { id, api } = await organization('1');
    for (const amount of ['2', '3', '4']) await cli('credits', 'add', '--org', id, '--amount', amount);
    const first = (await api.get('/v1/billing?limit=2')).body;
    expect(first.entries.map((entry: { cost: string }) => entry.cost)).toEqual(['-4', '-3']);
    expect(Number.isInteger(first.next_cursor)).toBe(true);
    const second = (await api.get(`/v1/billing?limit=2&cursor=${first.next_cursor}`)).body;
    expect(second.entries.map((entry: { cost: string }) => entry.cost)).toEqual(['-2', '-1']);
    expect(second.next_cursor).toBeNull();
    expect(first.balance).toBe('10');
    for (const query of ['limit=0', 'limit=101', 'limit=x', 'cursor=0', 'cursor=-3', 'cursor=1.5']) {
      const refused = await api.get(`/v1/billing?${query}`);
      expect(refused.status).toBe(400);
      expect(refused.body.code).toBe('invalid_request');
    }
  });

  it('stops enforcing once billing is disabled, sets the low-credit threshold, and reports balance null without an account', async () => {
    const { id, api } = await organization('0');
    const agent = await readyAgent(api);
    const thread = (await api.post(`/v1/agents/${agent.agent_id}/threads`, {}, as('dana'))).body.thread_id;
    const chat = `/v1/agents/${agent.agent_id}/threads/${thread}/chat`;
    expect((await api.post(chat, { turn_id: 'a', message: 'hi' }, as('dana'))).status).toBe(402);
    expect(await cli('billing', 'disable', '--org', id)).toMatchObject({ enabled: false, balance: '0' });
    expect((await api.post(chat, { turn_id: 'b', message: 'hi' }, as('dana'))).status).toBe(200);
    expect(await cli('billing', 'threshold', '--org', id, '--amount', '5')).toMatchObject({ low_credit_threshold: '5' });
    expect((await api.get('/v1/billing')).body).toMatchObject({ enabled: false, balance: '0', low_credit_threshold: '5', entries: [] });

    const plain = await cli('orgs', 'create', '--name', 'Unbilled');
    expect(plain.balance).toBeNull();
    const key = await cli('keys', 'create', '--org', plain.organization_id);
    expect((await client(server.url, key.key).get('/v1/billing')).body).toEqual({
      organization_id: plain.organization_id,
      enabled: false,
      balance: null,
      low_credit_threshold: '0',
      entries: [],
      next_cursor: null,
    });
    // A negative grant is a usage mistake, caught before the server is asked (exit 2).
    const refused = await runCli(['credits', 'add', '--org', id, '--amount=-1', '--data', server.dataDir]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--amount must be a decimal number >= 0');
    // A grant of 0 is a decimal but not a grant: the service refuses it (exit 1, its code).
    const zero = await runCli(['credits', 'add', '--org', id, '--amount', '0', '--data', server.dataDir]);
    expect(zero.code).toBe(1);
    expect(zero.stderr).toContain('(invalid_request)');
  });
});
