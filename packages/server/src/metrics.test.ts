import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_PRICES, billedWords, silentLogger } from '@memory-agents/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from './start-server.js';

const TOKEN = 'metrics-token-0123456789';
const directories: string[] = [];
afterAll(async () => {
  for (const directory of directories) await rm(directory, { recursive: true, force: true });
});

async function dataDir(): Promise<string> {
  const directory = await mkdtemp(join(tmpdir(), 'ma-metrics-'));
  directories.push(directory);
  return directory;
}

/** One value of the exposition text: the series `name{labels}` exactly as written, or undefined. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

async function api(server: RunningServer, method: string, path: string, body?: unknown) {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${server.firstKey!.key}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, string> };
}

describe('serve --metrics --metrics-token: /metrics on the API port behind a bearer', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer({ dataDir: await dataDir(), port: 0, logger: silentLogger, metrics: { token: TOKEN } });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('refuses a scrape without the bearer or with another one', async () => {
    expect(server.metricsUrl).toBe(`${server.url}/metrics`);
    expect((await fetch(`${server.url}/metrics`)).status).toBe(401);
    expect((await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}x` } })).status).toBe(401);
    expect((await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${server.firstKey!.key}` } })).status).toBe(401);
    expect((await fetch(`${server.url}/metrics`, { headers: { authorization: TOKEN } })).status).toBe(401);
    expect((await fetch(`${server.url}/metrics`, { headers: { authorization: `Basic ${TOKEN}` } })).status).toBe(401);
    // The spec's error body, as the API writes it: a request id in the body and the header.
    const refused = await fetch(`${server.url}/metrics`);
    const body = (await refused.json()) as { error: string; code: string; request_id: string };
    expect(body).toEqual({ error: expect.stringContaining('Bearer'), code: 'unauthorized', request_id: expect.stringMatching(/^req_[0-9a-f]{32}$/) });
    expect(refused.headers.get('x-request-id')).toBe(body.request_id);
    expect(refused.headers.get('www-authenticate')).toBe('Bearer');
    expect(refused.headers.get('cache-control')).toBe('no-store');
  });

  it('takes the scheme in any case and the token after any run of spaces (RFC 9110: the scheme is case-insensitive)', async () => {
    for (const authorization of [`Bearer ${TOKEN}`, `bearer ${TOKEN}`, `BEARER ${TOKEN}`, `bEaReR  ${TOKEN}`]) {
      const response = await fetch(`${server.url}/metrics`, { headers: { authorization } });
      expect({ authorization, status: response.status }).toEqual({ authorization, status: 200 });
      expect(await response.text()).toContain('memory_agents_');
    }
    const post = await fetch(`${server.url}/metrics`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` } });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
    expect(await post.json()).toEqual({ error: 'POST is not allowed on /metrics; use GET.', code: 'method_not_allowed', request_id: post.headers.get('x-request-id') });
    // The token itself is compared exactly.
    expect((await fetch(`${server.url}/metrics`, { headers: { authorization: `bearer ${TOKEN.toUpperCase()}` } })).status).toBe(401);
  });

  it('counts requests per route template and status, turns learned, memories, model calls, the queue', { timeout: 60_000 }, async () => {
    const agent = await api(server, 'POST', '/v1/agents', { agent_config: { role: 'assistant', objective: 'remember' } });
    expect(agent.status).toBe(202);
    for (let tries = 0; (await api(server, 'GET', `/v1/agents/${agent.body.agent_id}`)).body.status !== 'ready'; tries++) {
      if (tries > 200) throw new Error('agent never became ready');
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    const thread = await api(server, 'POST', `/v1/agents/${agent.body.agent_id}/threads`, { title: 'metrics' });
    expect(thread.status).toBe(201);
    // Billing on: learning charges its input words, which the credits counter adds up.
    await server.service.admin.configureBilling({ organizationId: server.firstKey!.organizationId, enabled: true });
    await server.service.admin.addCredits({ organizationId: server.firstKey!.organizationId, amount: '1000' });
    const texts = ['I adopted a grey cat called Pixel last spring.', 'My sister Ana lives in Porto and teaches violin.'];
    const observed = await api(server, 'POST', `/v1/agents/${agent.body.agent_id}/threads/${thread.body.thread_id}/observe`, {
      observations: texts.map((text) => ({ content: [{ type: 'text', text }] })),
    });
    expect(observed.status).toBe(202);
    await server.service.idle();
    expect((await api(server, 'GET', '/v1/no-such-route/agent_01JZ0000000000000000000000')).status).toBe(404);

    const response = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await response.text();

    expect(sample(text, 'memory_agents_http_request_duration_seconds_count{method="POST",route="/v1/agents",status="202"}')).toBe(1);
    expect(sample(text, 'memory_agents_http_request_duration_seconds_count{method="POST",route="/v1/agents/{agent_id}/threads",status="201"}')).toBe(1);
    expect(sample(text, 'memory_agents_http_request_duration_seconds_count{method="POST",route="/v1/agents/{agent_id}/threads/{thread_id}/observe",status="202"}')).toBe(1);
    expect(sample(text, 'memory_agents_http_request_duration_seconds_count{method="GET",route="/v1/agents/{agent_id}",status="200"}')).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'memory_agents_http_request_duration_seconds_count{method="GET",route="unmatched",status="404"}')).toBe(1);
    expect(sample(text, 'memory_agents_http_request_duration_seconds_bucket{le="+Inf",method="POST",route="/v1/agents",status="202"}')).toBe(1);
    // Route templates only: no id of an agent, thread or organization in any label.
    expect(text).not.toMatch(/(agent|thread|org)_[0-9A-Za-z]{20,}/);

    expect(sample(text, 'memory_agents_turns_learned_total')).toBe(2);
    expect(sample(text, 'memory_agents_index_memories')).toBeGreaterThanOrEqual(2);
    expect(sample(text, 'memory_agents_learning_queue_depth')).toBe(0);
    expect(sample(text, 'memory_agents_learning_queue_oldest_age_seconds')).toBe(0);
    expect(sample(text, 'memory_agents_model_call_duration_seconds_count{port="embedder",operation="embed",outcome="ok"}')).toBeGreaterThan(0);
    // The turns' input words at the default price.
    const charged = texts.reduce((sum, turn) => sum + billedWords(turn), 0) * Number(DEFAULT_PRICES.inputWord);
    expect(sample(text, 'memory_agents_credits_total{direction="charged"}')).toBeCloseTo(charged, 6);
    expect(text).toContain('# TYPE memory_agents_model_call_errors_total counter');
    expect(sample(text, 'memory_agents_process_resident_memory_bytes')).toBeGreaterThan(0);
  });
});

describe('serve --metrics --metrics-listen: /metrics on an address of its own', () => {
  it('serves /metrics there and not on the API port', async () => {
    const server = await startServer({ dataDir: await dataDir(), port: 0, logger: silentLogger, metrics: { listen: { host: '127.0.0.1', port: 0 } } });
    try {
      expect(server.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
      expect(server.metricsUrl).not.toBe(`${server.url}/metrics`);
      expect((await fetch(`${server.url}/metrics`)).status).toBe(404);
      const response = await fetch(server.metricsUrl!);
      expect(response.status).toBe(200);
      expect(await response.text()).toContain('# TYPE memory_agents_http_request_duration_seconds histogram');
      // Any other path there is the spec's error body, with its request id (written by hand before, without one).
      const other = await fetch(server.metricsUrl!.replace(/\/metrics$/, '/v1/session'));
      expect(other.status).toBe(404);
      const body = (await other.json()) as { error: string; code: string; request_id: string };
      expect(body).toEqual({ error: 'Only /metrics is served here.', code: 'not_found', request_id: expect.stringMatching(/^req_/) });
      expect(other.headers.get('x-request-id')).toBe(body.request_id);
    } finally {
      await server.close();
    }
  });
});

describe('serve without --metrics', () => {
  it('has no /metrics (404), and refuses metrics with neither an address nor a token', async () => {
    const server = await startServer({ dataDir: await dataDir(), port: 0, logger: silentLogger });
    try {
      expect(server.metricsUrl).toBeNull();
      const response = await fetch(`${server.url}/metrics`);
      expect(response.status).toBe(404);
      expect(((await response.json()) as { code: string }).code).toBe('not_found');
    } finally {
      await server.close();
    }
    await expect(startServer({ dataDir: await dataDir(), port: 0, logger: silentLogger, metrics: {} })).rejects.toThrow(/own address .* or a bearer token/);
  });
});
