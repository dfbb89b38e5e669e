import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, readyAgent, type Client } from '../support/client.js';
import { removeDataDir, runCli, startServerProcess, type ServerProcess } from '../support/server.js';
import { as, rateHeaders } from './billing-support.js';

/**
 * Request windows through the built CLI server (embedded default, in-process limiter). The
 * boundaries are counted, not timed: a window only frees places as time passes, so a slow machine
 * can only make the N+1-th request pass later, never make the N-th fail.
 */
let server: ServerProcess;
let api: Client;
let agentId: string;

beforeAll(async () => {
  server = await startServerProcess();
  api = client(server.url, server.key);
  agentId = (await readyAgent(api)).agent_id;
});
afterAll(async () => {
  await server.stop();
  await removeDataDir(server.dataDir);
});

describe('request windows on the CLI server', () => {
  it('refuses a subject its 21st chat with 429 user, Retry-After and a matching X-RateLimit-Reset, while another subject goes on', async () => {
    const thread = (await api.post(`/v1/agents/${agentId}/threads`, {}, as('erin'))).body.thread_id;
    const bobThread = (await api.post(`/v1/agents/${agentId}/threads`, {}, as('bob'))).body.thread_id;
    const chat = `/v1/agents/${agentId}/threads/${thread}/chat`;
    const seen: number[] = [];
    for (let i = 1; i <= 20; i++) {
      const response = await api.post(chat, { turn_id: `t${i}`, message: 'hello' }, as('erin'));
      expect(response.status).toBe(200);
      const headers = rateHeaders(response);
      expect(headers.limit).toBe(20);
      expect(headers.retryAfter).toBeNull();
      seen.push(headers.remaining!);
    }
    // Remaining counts down to 0 unless the window slid meanwhile (then it never goes up by more than it freed).
    expect(seen.at(-1)).toBeLessThanOrEqual(1);
    const refused = await api.post(chat, { turn_id: 'late', message: 'hello' }, as('erin'));
    if (refused.status === 429) {
      expect(refused.body).toMatchObject({ code: 'rate_limit_exceeded', details: 'user' });
      const headers = rateHeaders(refused);
      expect(headers.remaining).toBe(0);
      expect(headers.retryAfter).toBeGreaterThanOrEqual(1);
      expect(headers.retryAfter).toBeLessThanOrEqual(60);
      const nowSeconds = Math.floor(Date.now() / 1000);
      expect(headers.reset! - nowSeconds).toBeGreaterThanOrEqual(headers.retryAfter! - 2);
      expect(headers.reset! - nowSeconds).toBeLessThanOrEqual(headers.retryAfter! + 2);
    } else {
      // Only possible when the first of the 20 left the 60 s window before this request.
      expect(refused.status).toBe(200);
    }
    const bob = await api.post(`/v1/agents/${agentId}/threads/${bobThread}/chat`, { turn_id: 'b', message: 'hello' }, as('bob'));
    expect(bob.status).toBe(200);
    expect(rateHeaders(bob)).toMatchObject({ limit: 20, remaining: 19 });
  });

  it('applies an organization override of a window set with `orgs limits` through the running server', async () => {
    const json = async (...args: string[]) => JSON.parse((await runCli([...args, '--data', server.dataDir, '--json'])).stdout);
    const org = await json('orgs', 'create', '--name', 'Throttled');
    const key = await json('keys', 'create', '--org', org.organization_id);
    const set = await json('orgs', 'limits', '--org', org.organization_id, '--limits', JSON.stringify({ rateLimits: { thread_create: { subject: { limit: 2, windowSeconds: 600 } } } }));
    expect(set).toEqual({ organization_id: org.organization_id, limits: { rateLimits: { thread_create: { subject: { limit: 2, windowSeconds: 600 } } } } });
    const throttled = client(server.url, key.key);
    const agent = await readyAgent(throttled);
    const path = `/v1/agents/${agent.agent_id}/threads`;
    expect(rateHeaders(await throttled.post(path, {}))).toMatchObject({ limit: 2, remaining: 1 });
    expect((await throttled.post(path, {})).status).toBe(201);
    const refused = await throttled.post(path, {});
    expect(refused.status).toBe(429);
    expect(refused.body.details).toBe('user');
    expect(rateHeaders(refused)).toMatchObject({ limit: 2, remaining: 0 });
    // The organization is now held in the server's cache: a change still counts on the next request.
    await json('orgs', 'limits', '--org', org.organization_id, '--limits', JSON.stringify({ rateLimits: { thread_create: { subject: { limit: 3, windowSeconds: 600 } } } }));
    const raised = await throttled.post(path, {});
    expect(raised.status).toBe(201);
    expect(rateHeaders(raised)).toMatchObject({ limit: 3, remaining: 0 });
    const invalid = await runCli(['orgs', 'limits', '--org', org.organization_id, '--limits', '{"rateLimits":{"chat":{"subject":{"limit":0,"windowSeconds":1}}}}', '--data', server.dataDir]);
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toContain('(invalid_request)');
  });

  it('sends the headers on a stream, on an error of a limited route, and on routes without a window', async () => {
    const thread = (await api.post(`/v1/agents/${agentId}/threads`, {}, as('fay'))).body.thread_id;
    const stream = await api.post(`/v1/agents/${agentId}/threads/${thread}/chat/stream`, { turn_id: 's', message: 'hello' }, as('fay'));
    expect(stream.headers.get('content-type')).toContain('text/event-stream');
    expect(rateHeaders(stream)).toMatchObject({ limit: 20, remaining: 19 });
    const invalid = await api.post(`/v1/agents/${agentId}/threads/${thread}/chat`, { turn_id: 's' }, as('fay'));
    expect(invalid.status).toBe(422);
    expect(rateHeaders(invalid)).toMatchObject({ limit: 20, remaining: 18 });
    const session = await api.get('/v1/session');
    expect(rateHeaders(session)).toMatchObject({ limit: 2_147_483_647, remaining: 2_147_483_647, retryAfter: null });
    expect(Math.abs(rateHeaders(session).reset! - Date.now() / 1000)).toBeLessThan(5);
  });
});
