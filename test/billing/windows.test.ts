import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readyAgent, type ApiResponse } from '../support/client.js';
import { as, FROZEN, rateHeaders, startInProcessServer, type InProcessServer } from './billing-support.js';

/**
 * Every window of the spec's "Request rates" table at its boundary, over real HTTP, with the
 * service clock frozen so no window slides during the test: the N-th request of a subject passes,
 * the N+1-th gets 429 `rate_limit_exceeded` with `details: "user"` and the headers that say when
 * to come back; the organization ceiling answers `details: "organization"`.
 */
let server: InProcessServer;
let agentId: string;
const nowSeconds = Math.ceil(FROZEN / 1000);

beforeAll(async () => {
  server = await startInProcessServer();
  agentId = (await readyAgent(server.api)).agent_id;
});
afterAll(async () => {
  await server.close();
});

async function thread(person: string): Promise<string> {
  // Threads for the tests below come from a subject that never creates more than five.
  const created = await server.api.post(`/v1/agents/${agentId}/threads`, {}, as(person));
  if (created.status !== 201) throw new Error(`thread: ${created.status} ${created.text}`);
  return created.body.thread_id;
}

function expectRefused(response: ApiResponse, details: 'user' | 'organization', limit: number, windowSeconds: number) {
  expect(response.status).toBe(429);
  expect(Object.keys(response.body).sort()).toEqual(['code', 'details', 'error', 'request_id']);
  expect(response.body).toMatchObject({ code: 'rate_limit_exceeded', details });
  const headers = rateHeaders(response);
  expect(headers).toEqual({ limit, remaining: 0, reset: nowSeconds + windowSeconds, retryAfter: windowSeconds });
}

describe('request windows at their boundary (frozen clock)', () => {
  it('thread create: 5 per subject pass, the 6th is refused; 30 per organization across subjects', async () => {
    // A server of its own: the frozen organization window must start empty.
    const own = await startInProcessServer();
    const ownAgent = (await readyAgent(own.api)).agent_id;
    const path = `/v1/agents/${ownAgent}/threads`;
    const server = own;
    for (let i = 1; i <= 5; i++) {
      const created = await server.api.post(path, {}, as('t-alice'));
      expect(created.status).toBe(201);
      expect(rateHeaders(created)).toMatchObject({ limit: 5, remaining: 5 - i, reset: nowSeconds + 10, retryAfter: null });
    }
    const refused = await server.api.post(path, { title: 'not created' }, as('t-alice'));
    expectRefused(refused, 'user', 5, 10);
    // The refused request did no work: no thread titled "not created" exists.
    const agent = await server.api.get(`/v1/agents/${ownAgent}`, as('t-alice'));
    expect(agent.body.threads.map((t: { title: string }) => t.title)).not.toContain('not created');
    // Another subject has its own window...
    for (let person = 1; person <= 5; person++) {
      for (let i = 0; i < 5; i++) expect((await server.api.post(path, {}, as(`t-p${person}`))).status).toBe(201);
    }
    // ...until the organization's 30 per 10 s are spent (5 + 25 created so far).
    expectRefused(await server.api.post(path, {}, as('t-late')), 'organization', 30, 10);
    expectRefused(await server.api.post(path, {}), 'organization', 30, 10);
    await own.close();
  });

  it('chat and chat/stream share one window: 20 per subject pass, the 21st is refused', async () => {
    const threadId = await thread('c-alice');
    const base = `/v1/agents/${agentId}/threads/${threadId}`;
    for (let i = 1; i <= 20; i++) {
      const path = i % 2 === 0 ? `${base}/chat` : `${base}/chat/stream`;
      const response = await server.api.post(path, { turn_id: `t${i}`, message: 'hello there' }, as('c-alice'));
      expect(response.status).toBe(200);
      expect(rateHeaders(response)).toMatchObject({ limit: 20, remaining: 20 - i });
    }
    expectRefused(await server.api.post(`${base}/chat/stream`, { turn_id: 'x', message: 'hello' }, as('c-alice')), 'user', 20, 60);
    expectRefused(await server.api.post(`${base}/chat`, { turn_id: 'x', message: 'hello' }, as('c-alice')), 'user', 20, 60);
    // The refused turns were not answered or recorded: 20 turns, 40 messages.
    const read = await server.api.get(base, as('c-alice'));
    expect(read.body.messages).toHaveLength(40);
  });

  it('observe-and-respond and observe-and-enrich share a window of 20 per subject', async () => {
    const threadId = await thread('r-alice');
    const base = `/v1/agents/${agentId}/threads/${threadId}`;
    for (let i = 1; i <= 20; i++) {
      const path = i % 2 === 0 ? `${base}/observe-and-respond` : `${base}/observe-and-enrich`;
      const response = await server.api.post(path, { turn_id: `t${i}`, message: `note ${i}` }, as('r-alice'));
      expect(response.status).toBe(200);
    }
    expectRefused(await server.api.post(`${base}/observe-and-enrich`, { turn_id: 'x', message: 'one more' }, as('r-alice')), 'user', 20, 60);
  });

  it('observe: 60 per subject are counted (busy-agent refusals included), the 61st is refused by the window', async () => {
    const threadId = await thread('o-alice');
    const path = `/v1/agents/${agentId}/threads/${threadId}/observe`;
    for (let i = 1; i <= 60; i++) {
      const response = await server.api.post(path, { observations: [{ content: [{ type: 'text', text: `fact ${i}` }] }] }, as('o-alice'));
      // 202, or 429 `capacity` while the agent learns the previous one: never the window.
      expect([202, 429]).toContain(response.status);
      if (response.status === 429) expect(response.body.details).toBe('capacity');
      expect(rateHeaders(response)).toMatchObject({ limit: 60, remaining: 60 - i });
    }
    expectRefused(await server.api.post(path, { observations: [{ content: [{ type: 'text', text: 'late' }] }] }, as('o-alice')), 'user', 60, 60);
  });

  it('observe-file: 1 per 10 s per subject; image upload: 20 per 60 s per subject', async () => {
    const threadId = await thread('f-alice');
    const upload = async (path: string, person: string, name: string, bytes: Uint8Array, type: string) => {
      const form = new FormData();
      form.append('file', new Blob([bytes], { type }), name);
      const response = await fetch(`${server.url}${path}`, {
        method: 'POST',
        body: form,
        headers: { authorization: `Bearer ${server.key}`, 'x-sp-end-user': person },
      });
      const text = await response.text();
      return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined, text };
    };
    const filePath = `/v1/agents/${agentId}/threads/${threadId}/observe-file`;
    const first = await upload(filePath, 'f-alice', 'notes.txt', new TextEncoder().encode('The harbor opens at dawn.'), 'text/plain');
    expect(first.status).toBe(202);
    expect(rateHeaders(first)).toMatchObject({ limit: 1, remaining: 0 });
    expectRefused(await upload(filePath, 'f-alice', 'more.txt', new TextEncoder().encode('More notes.'), 'text/plain'), 'user', 1, 10);
    // An image that is not one still spends from the window: 20 counted, the 21st refused.
    for (let i = 1; i <= 20; i++) {
      const response = await upload('/v1/images', 'i-alice', 'x.png', new Uint8Array([1, 2, 3, i]), 'image/png');
      expect(response.status).not.toBe(429);
      expect(rateHeaders(response)).toMatchObject({ limit: 20, remaining: 20 - i });
    }
    expectRefused(await upload('/v1/images', 'i-alice', 'x.png', new Uint8Array([1, 2, 3]), 'image/png'), 'user', 20, 60);
  });

  it('puts the headers on every response: unmetered routes, errors and a 401 without a caller', async () => {
    for (const response of [
      await server.api.get('/v1/session'),
      await server.api.get('/v1/billing'),
      await server.api.get('/v1/agents/agent_nope'),
      await server.api.get('/v1/session', { key: null }),
      await server.api.get('/v1/no-such-route'),
    ]) {
      expect(rateHeaders(response)).toEqual({ limit: 2_147_483_647, remaining: 2_147_483_647, reset: nowSeconds, retryAfter: null });
    }
  });
});

