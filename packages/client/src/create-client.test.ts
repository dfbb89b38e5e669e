import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createClient, MemoryAgentsError, throwOnStreamError, type ChatStreamEvent } from './index.js';

// A tiny stand-in for the remote server, for what the real one cannot be made to do on cue
// (answer 429 then 200, split an event stream mid-line). The real server is used in test/client/.
type Handler = (request: IncomingMessage, response: ServerResponse, body: string) => void;
let server: Server | null = null;

async function stub(handler: Handler): Promise<{ url: string; requests: { method: string; url: string; headers: IncomingMessage['headers']; body: string }[] }> {
  const requests: { method: string; url: string; headers: IncomingMessage['headers']; body: string }[] = [];
  server = createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
    request.on('end', () => {
      requests.push({ method: request.method!, url: request.url!, headers: request.headers, body });
      handler(request, response, body);
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests };
}

afterEach(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = null;
});

const SESSION = { authenticated: true, organization_id: 'org_1' };
const refuse = (response: ServerResponse, retryAfter: string) => {
  response.writeHead(429, { 'content-type': 'application/json', 'retry-after': retryAfter, 'x-request-id': 'req_429' });
  response.end(JSON.stringify({ error: 'Too many requests.', code: 'rate_limit_exceeded', request_id: 'req_429', details: 'user' }));
};

describe('createClient retries', () => {
  it('retries a 429 after Retry-After when retries are on', async () => {
    let calls = 0;
    const { url, requests } = await stub((_request, response) => {
      if (calls++ === 0) return refuse(response, '0');
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(SESSION));
    });
    const client = createClient({ baseUrl: url, apiKey: 'sp_key_secret', retries: 2 });
    await expect(client.session.get()).resolves.toMatchObject(SESSION);
    expect(requests).toHaveLength(2);
    expect(requests[1]!.headers.authorization).toBe('Bearer sp_key_secret');
  });

  it('throws the 429 without retrying by default', async () => {
    const { url, requests } = await stub((_request, response) => refuse(response, '0'));
    const error = await createClient({ baseUrl: url, apiKey: 'k' }).session.get().catch((caught: unknown) => caught);
    expect(MemoryAgentsError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ status: 429, code: 'rate_limit_exceeded', requestId: 'req_429', details: 'user', retryAfter: 0 });
    expect(requests).toHaveLength(1);
  });

  it('stops after the most retries, and never waits longer than maxDelayMs', async () => {
    const { url, requests } = await stub((_request, response) => refuse(response, '0'));
    await expect(createClient({ baseUrl: url, apiKey: 'k', retries: 2 }).session.get()).rejects.toMatchObject({ status: 429 });
    expect(requests).toHaveLength(3);

    const slow = await stub((_request, response) => refuse(response, '120'));
    const started = Date.now();
    await expect(createClient({ baseUrl: slow.url, apiKey: 'k', retries: { max: 5, maxDelayMs: 1000 } }).session.get()).rejects.toMatchObject({ retryAfter: 120 });
    expect(slow.requests).toHaveLength(1);
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('does not retry other errors', async () => {
    const { url, requests } = await stub((_request, response) => {
      response.writeHead(404, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ error: 'Agent agent_x was not found.', code: 'agent_not_found', request_id: 'req_1' }));
    });
    await expect(createClient({ baseUrl: url, apiKey: 'k', retries: 3 }).agents.get({ agentId: 'agent_x' })).rejects.toMatchObject({
      status: 404,
      code: 'agent_not_found',
      requestId: 'req_1',
      message: 'Agent agent_x was not found.',
    });
    expect(requests).toHaveLength(1);
  });
});

describe('createClient requests', () => {
  it('sends end user, idempotency key, JSON body and query', async () => {
    const { url, requests } = await stub((_request, response) => {
      response.writeHead(202, { 'content-type': 'application/json' }).end('{"accepted":true}');
    });
    const client = createClient({ baseUrl: `${url}/`, apiKey: 'k', endUser: 'alice' });
    await client.threads.observe({ agentId: 'agent_a', threadId: 'thread_t', observations: [{ content: [{ type: 'text', text: 'hi' }] }], idempotencyKey: 'key-1' });
    await client.agents.logs({ agentId: 'agent_a', limit: 5, endUser: null });
    expect(requests[0]).toMatchObject({ method: 'POST', url: '/v1/agents/agent_a/threads/thread_t/observe' });
    expect(requests[0]!.headers).toMatchObject({ 'x-sp-end-user': 'alice', 'idempotency-key': 'key-1', 'content-type': 'application/json' });
    expect(JSON.parse(requests[0]!.body)).toEqual({ observations: [{ content: [{ type: 'text', text: 'hi' }] }] });
    expect(requests[1]).toMatchObject({ method: 'GET', url: '/v1/agents/agent_a/logs?limit=5' });
    expect(requests[1]!.headers['x-sp-end-user']).toBeUndefined();
  });

  it('reads a non-JSON error page by its status', async () => {
    const { url } = await stub((_request, response) => response.writeHead(503, { 'content-type': 'text/html' }).end('<h1>Bad gateway</h1>'));
    await expect(createClient({ baseUrl: url, apiKey: 'k' }).session.get()).rejects.toMatchObject({ status: 503, code: 'service_unavailable', requestId: null });
  });

  it('needs a filename for bytes but not for a File', async () => {
    const { url, requests } = await stub((_request, response) => response.writeHead(202, { 'content-type': 'application/json' }).end('{}'));
    const client = createClient({ baseUrl: url, apiKey: 'k' });
    await expect(client.threads.observeFile({ agentId: 'agent_a', threadId: 'thread_t', file: new TextEncoder().encode('# hi') })).rejects.toThrow(/filename/);
    await client.threads.observeFile({ agentId: 'agent_a', threadId: 'thread_t', file: new File(['# hi'], 'notes.md', { type: 'text/markdown' }), strategy: 'structure' });
    expect(requests).toHaveLength(1);
    expect(requests[0]!.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
    expect(requests[0]!.body).toContain('filename="notes.md"');
    expect(requests[0]!.body).toContain('# hi');
    expect(requests[0]!.body).toMatch(/name="strategy"\r\n\r\nstructure/);
  });

  it('uploads bytes and a ReadableStream under the given filename, with the idempotency key', async () => {
    const { url, requests } = await stub((_request, response) => response.writeHead(202, { 'content-type': 'application/json' }).end('{}'));
    const client = createClient({ baseUrl: url, apiKey: 'k' });
    await client.threads.observeFile({ agentId: 'agent_a', threadId: 'thread_t', file: new TextEncoder().encode('bytes body'), filename: 'a.txt', max_chars: 500 });
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('streamed '));
        controller.enqueue(new TextEncoder().encode('body'));
        controller.close();
      },
    });
    await client.threads.observeFile({ agentId: 'agent_a', threadId: 'thread_t', file: stream, filename: 'b.md', mediaType: 'text/markdown', idempotencyKey: 'upload-2' });
    expect(requests[0]!.body).toMatch(/filename="a\.txt"[\s\S]*bytes body/);
    expect(requests[0]!.body).toMatch(/name="max_chars"\r\n\r\n500/);
    expect(requests[1]!.body).toMatch(/filename="b\.md"\r\nContent-Type: text\/markdown\r\n\r\nstreamed body/);
    expect(requests[1]!.headers['idempotency-key']).toBe('upload-2');
  });
});

describe('waitForObservation', () => {
  const status = (value: string) => ({ agent_id: 'a', thread_id: 't', observation_id: 'obs_1', status: value, turns_total: 1, turns_processed: 0 });

  it('polls past running and interrupted states until a final one', async () => {
    const states = ['queued', 'processing', 'interrupted', 'failed'];
    const { url, requests } = await stub((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(status(states.shift() ?? 'committed')));
    });
    const final = await createClient({ baseUrl: url, apiKey: 'k' }).waitForObservation({ agentId: 'a', threadId: 't', observationId: 'obs_1', intervalMs: 1 });
    expect(final.status).toBe('failed');
    expect(requests.map((request) => request.url)).toEqual(Array(4).fill('/v1/agents/a/threads/t/observe/obs_1/status'));
  });

  it('gives up at the timeout and stops on abort', async () => {
    const { url } = await stub((_request, response) => response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(status('processing'))));
    const client = createClient({ baseUrl: url, apiKey: 'k' });
    await expect(client.waitForObservation({ agentId: 'a', threadId: 't', observationId: 'obs_1', timeoutMs: 50, intervalMs: 10 })).rejects.toThrow(/Timed out waiting for observation obs_1/);
    const controller = new AbortController();
    const waiting = client.waitForObservation({ agentId: 'a', threadId: 't', observationId: 'obs_1', intervalMs: 1_000, signal: controller.signal });
    setTimeout(() => controller.abort(new Error('stopped')), 20);
    await expect(waiting).rejects.toThrow('stopped');
  });
});

describe('chatStream', () => {
  it('parses events split across chunks, in order', async () => {
    const done = { agent_id: 'a', thread_id: 't', turn_id: '1', message: 'Hello there', memory_context: '', model: 'm', duration_ms: 1, stages: [], citations: [], learning: [] };
    const wire =
      `event: context\ndata: ${JSON.stringify({ memory_context: 'ctx', citations: [] })}\n\n` +
      `event: delta\ndata: {"text":"Hello"}\n\n: a comment\n\nevent: delta\ndata: {"text":" there"}\n\n` +
      `event: done\ndata: ${JSON.stringify(done)}\n\n`;
    const { url, requests } = await stub((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      // Cut mid-line and mid-event, written apart.
      const cuts = [7, 30, 31, 90, wire.length];
      let from = 0;
      const next = () => {
        const to = cuts.shift();
        if (to === undefined) return response.end();
        response.write(wire.slice(from, to));
        from = to;
        setTimeout(next, 5);
      };
      next();
    });
    const events: ChatStreamEvent[] = [];
    for await (const event of createClient({ baseUrl: url, apiKey: 'k' }).threads.chatStream({ agentId: 'a', threadId: 't', turn_id: '1', message: 'hi' })) events.push(event);
    expect(events.map((event) => event.event)).toEqual(['context', 'delta', 'delta', 'done']);
    expect(events.filter((event) => event.event === 'delta').map((event) => event.data.text).join('')).toBe('Hello there');
    expect(events[3]!.data).toEqual(done);
    expect(requests[0]!.headers.accept).toBe('text/event-stream');
  });

  it('yields the error event, which throwOnStreamError throws', async () => {
    const { url } = await stub((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.end('event: error\ndata: {"error":"The model could not be reached.","code":"answer_model_unavailable","request_id":"req_9"}\n\n');
    });
    const events: ChatStreamEvent[] = [];
    for await (const event of createClient({ baseUrl: url, apiKey: 'k' }).threads.chatStream({ agentId: 'a', threadId: 't', turn_id: '1', message: 'hi' })) events.push(event);
    expect(events).toEqual([{ event: 'error', data: { error: 'The model could not be reached.', code: 'answer_model_unavailable', request_id: 'req_9' } }]);
    expect(() => throwOnStreamError(events[0]!)).toThrow(expect.objectContaining({ code: 'answer_model_unavailable', requestId: 'req_9' }));
  });
});
