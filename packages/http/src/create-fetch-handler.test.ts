import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryService, inMemoryStore, silentLogger, type LanguageModel, type Logger, type MemoryService } from '@memory-agents/core';
import { createFetchHandler, type FetchHandlerOptions } from './create-fetch-handler.js';

const services: MemoryService[] = [];
afterEach(async () => {
  for (const service of services.splice(0)) await service.stop();
});

/** Windows wide enough for a test's uploads and chats (the spec's rates are tested elsewhere). */
const GENEROUS_RATES = Object.fromEntries(
  ['thread_create', 'observe', 'observe_respond', 'chat', 'observe_file', 'image_upload'].map((operation) => [
    operation,
    { subject: { limit: 10_000, windowSeconds: 10 }, organization: { limit: 10_000, windowSeconds: 10 } },
  ]),
);

/** A service with an organization and its key, and the fetch handler over it (no sockets). */
async function setup(options: FetchHandlerOptions & { model?: LanguageModel; maxUploadBytes?: number } = {}) {
  const { model, maxUploadBytes, ...handlerOptions } = options;
  const service = createMemoryService({ store: inMemoryStore(), logger: silentLogger, ...(model ? { model } : {}) });
  services.push(service);
  await service.start();
  const org = await service.admin.createOrganization({ name: 'Acme', limits: { rateLimits: GENEROUS_RATES, ...(maxUploadBytes ? { maxUploadBytes } : {}) } as never });
  const { key } = await service.admin.createKey({ organizationId: org.organizationId });
  const api = createFetchHandler(service, { logger: silentLogger, ...handlerOptions });
  const prefix = (handlerOptions.basePath ?? '').replace(/\/$/, '');
  const call = async (method: string, path: string, body?: unknown, init: RequestInit = {}) => {
    const response = await api(
      new Request(`http://host${prefix}${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        ...init,
      }),
    );
    const text = await response.text();
    return { status: response.status, headers: response.headers, text, body: text === '' ? undefined : (JSON.parse(text) as any) };
  };
  return { service, api, key, call, prefix };
}

/** An agent and a thread, through the handler. */
async function thread(context: Awaited<ReturnType<typeof setup>>) {
  const agent = await context.call('POST', '/v1/agents', { agent_config: { role: 'r', objective: 'o' } });
  expect(agent.status).toBe(202);
  await context.service.idle();
  const created = await context.call('POST', `/v1/agents/${agent.body.agent_id}/threads`, {});
  expect(created.status).toBe(201);
  return { agentId: agent.body.agent_id as string, base: `/v1/agents/${agent.body.agent_id}/threads/${created.body.thread_id}` };
}

/** Uploads a small text document and waits until it is learned. */
async function learnDocument(context: Awaited<ReturnType<typeof setup>>, base: string) {
  const form = new FormData();
  form.append('file', new Blob(['Our invoices go to billing@acme.test and are due in 30 days.'], { type: 'text/plain' }), 'invoices.txt');
  const response = await context.api(new Request(`http://host${context.prefix}${base}/observe-file`, { method: 'POST', headers: { authorization: `Bearer ${context.key}` }, body: form }));
  const body = (await response.json()) as any;
  expect(response.status).toBe(202);
  expect(body.source_id).toMatch(/^src_/);
  for (;;) {
    const status = await context.call('GET', `${base}/observe/${body.observation_id}/status`);
    if (status.body.status === 'committed') break;
    expect(status.body.status).not.toBe('failed');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return body.source_id as string;
}

/** Parses a `text/event-stream` body into events. */
function parseEvents(text: string) {
  return text
    .split('\n\n')
    .filter((block) => block.startsWith('event: '))
    .map((block) => ({ event: block.split('\n')[0]!.slice(7), data: JSON.parse(block.split('\n')[1]!.slice(6)) as any }));
}

describe('createFetchHandler', () => {
  it('answers a JSON route with the same headers as the node handler', async () => {
    const { call } = await setup();
    const session = await call('GET', '/v1/session');
    expect(session.status).toBe(200);
    expect(session.body.organization_name).toBe('Acme');
    expect(session.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(session.headers.get('cache-control')).toBe('no-store');
    expect(session.headers.get('x-request-id')).toMatch(/^req_[0-9a-f]{32}$/);
    for (const name of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset']) expect(session.headers.get(name)).toMatch(/^\d+$/);
    expect(session.headers.get('access-control-allow-origin')).toBeNull();

    const openApi = await call('GET', '/v1/openapi.json');
    expect(openApi.status).toBe(200);
    expect(openApi.body.openapi).toBe('3.1.0');
    expect(openApi.body.servers).toEqual([expect.objectContaining({ url: '/' })]);
  });

  it('answers 404 and 405 with the spec error body', async () => {
    const { call } = await setup();
    const missing = await call('GET', '/nowhere');
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ error: expect.any(String), code: 'not_found', request_id: missing.headers.get('x-request-id') });

    const wrongMethod = await call('DELETE', '/v1/session');
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get('allow')).toBe('GET');
    // 405 is not in the spec's table: its own code (docs/api.md "Codes outside the spec's table"), not invalid_request (400/422).
    expect(wrongMethod.body).toEqual({ error: 'DELETE is not allowed on /v1/session; use GET.', code: 'method_not_allowed', request_id: wrongMethod.headers.get('x-request-id') });

    const unauthorized = await call('GET', '/v1/session', undefined, { headers: {} });
    expect(unauthorized.status).toBe(401);
    expect(unauthorized.body.code).toBe('unauthorized');

    const malformed = await call('POST', '/v1/agents', undefined, { body: '{nope' });
    expect(malformed.status).toBe(400);
    expect(malformed.body.code).toBe('invalid_request');
  });

  it('refuses an oversize JSON body with 413 while it streams, cancelling the rest unread', async () => {
    const { api, key } = await setup({ maxJsonBytes: 4096 });
    let pulled = 0;
    let cancelled = false;
    // An endless body with no Content-Length: only counting while it streams can refuse it.
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled++;
        controller.enqueue(new Uint8Array(1024).fill(0x20));
      },
      cancel() {
        cancelled = true;
      },
    });
    const response = await api(new Request('http://host/v1/agents', { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body, duplex: 'half' } as RequestInit));
    expect(response.status).toBe(413);
    expect(((await response.json()) as any).code).toBe('payload_too_large');
    expect(cancelled).toBe(true);
    expect(pulled).toBeLessThan(20);

    // A declared Content-Length over the limit is refused before reading.
    const declared = await api(new Request('http://host/v1/agents', { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': '5000' }, body: ' '.repeat(5000) }));
    expect(declared.status).toBe(413);

    // A body not declared as JSON (a string body defaults to text/plain in fetch) is refused by type.
    const plain = await api(new Request('http://host/v1/agents', { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: '{}' }));
    expect(plain.status).toBe(400);
    expect(((await plain.json()) as any).error).toContain('Content-Type: application/json');
  });

  it('refuses a body something already read, saying what to change', async () => {
    const { api, key } = await setup();
    const request = new Request('http://host/v1/agents', { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: JSON.stringify({ agent_config: { role: 'r', objective: 'o' } }) });
    await request.json(); // a framework parsed it first
    const response = await api(request);
    expect(response.status).toBe(400);
    const body = (await response.json()) as any;
    expect(body.code).toBe('invalid_request');
    expect(body.error).toContain('c.req.raw');
  });

  it('reads a multipart upload from the Web body and serves the stored original back as bytes', async () => {
    const context = await setup();
    const { agentId, base } = await thread(context);
    const sourceId = await learnDocument(context, base);
    const original = await context.api(new Request(`http://host/v1/agents/${agentId}/sources/${sourceId}`, { headers: { authorization: `Bearer ${context.key}` } }));
    expect(original.status).toBe(200);
    expect(original.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(original.headers.get('x-content-type-options')).toBe('nosniff');
    expect(await original.text()).toBe('Our invoices go to billing@acme.test and are due in 30 days.');

    // The node handler's form rules hold: an unknown field is refused.
    const form = new FormData();
    form.append('colour', 'blue');
    form.append('file', new Blob(['x'], { type: 'text/plain' }), 'x.txt');
    const refused = await context.api(new Request(`http://host${base}/observe-file`, { method: 'POST', headers: { authorization: `Bearer ${context.key}` }, body: form }));
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as any).error).toContain('Unknown form field `colour`');
  });

  it('refuses an upload over the caller\'s limit with 413 while it streams (no Content-Length)', async () => {
    const context = await setup({ maxUploadBytes: 1000 });
    const { base } = await thread(context);
    const boundary = 'b0undary';
    const encoder = new TextEncoder();
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(encoder.encode(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.txt"\r\nContent-Type: text/plain\r\n\r\n`));
      },
      pull(controller) {
        if (sent >= 200_000) {
          controller.enqueue(encoder.encode(`\r\n--${boundary}--\r\n`));
          controller.close();
          return;
        }
        sent += 10_000;
        controller.enqueue(new Uint8Array(10_000).fill(0x61));
      },
    });
    const response = await context.api(
      new Request(`http://host${base}/observe-file`, { method: 'POST', headers: { authorization: `Bearer ${context.key}`, 'content-type': `multipart/form-data; boundary=${boundary}` }, body, duplex: 'half' } as RequestInit),
    );
    expect(response.status).toBe(413);
    expect(((await response.json()) as any).code).toBe('document_too_large');
  });

  it('streams chat as server-sent events in a ReadableStream', async () => {
    const context = await setup();
    const { base } = await thread(context);
    await learnDocument(context, base);
    const response = await context.api(
      new Request(`http://host${base}/chat/stream`, { method: 'POST', headers: { authorization: `Bearer ${context.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ turn_id: 't1', message: 'Where do invoices go?' }) }),
    );
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(response.headers.get('connection')).toBeNull();
    const events = parseEvents(await response.text());
    expect(events[0]!.event).toBe('context');
    expect(events.at(-1)!.event).toBe('done');
    expect(events.at(-1)!.data.message).toContain('billing@acme.test');
  });

  it('gives the answer place back when the response stream is cancelled, and stops work when request.signal aborts', async () => {
    const waiting: (() => void)[] = [];
    let reached: () => void = () => undefined;
    const modelReached = new Promise<void>((resolve) => (reached = resolve));
    const model: LanguageModel = {
      specificationVersion: 'v1',
      id: 'stalling',
      // Never answers, but honours the abort as the port requires.
      generate: (request) =>
        new Promise((_resolve, reject) => {
          reached();
          request.signal?.addEventListener('abort', () => reject(Object.assign(new Error('aborted'), { name: 'AbortError' })), { once: true });
        }),
      // Sends one delta, then stalls until released; it ignores aborts.
      async *stream() {
        yield 'Thinking ';
        await new Promise<void>((resolve) => waiting.push(resolve));
        yield 'done.';
      },
    };
    const logged: string[] = [];
    const logger: Logger = { debug() {}, info() {}, warn: (message) => logged.push(message), error: (message) => logged.push(message) };
    const context = await setup({ model, logger });
    const { base } = await thread(context);
    const headers = { authorization: `Bearer ${context.key}`, 'content-type': 'application/json' };
    const open = async (turn: string) => {
      const response = await context.api(new Request(`http://host${base}/chat/stream`, { method: 'POST', headers, body: JSON.stringify({ turn_id: turn, message: 'hello' }) }));
      if (response.status !== 200) return { status: response.status, reader: null };
      const reader = response.body!.getReader();
      expect(new TextDecoder().decode((await reader.read()).value)).toMatch(/^event: context\n/);
      return { status: response.status, reader };
    };

    // Two answers at once per caller: the third waits for a place.
    const first = await open('s1');
    const second = await open('s2');
    expect((await open('s3')).status).toBe(429);
    await first.reader!.cancel(); // the client went away; the model never finishes
    let third = await open('s4');
    for (let attempt = 0; attempt < 300 && third.status !== 200; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      third = await open(`s4-${attempt}`);
    }
    expect(third.status).toBe(200);
    await third.reader!.cancel();
    waiting.splice(0).forEach((release) => release());
    expect(new TextDecoder().decode((await second.reader!.read()).value)).toContain('event: delta');
    await second.reader!.cancel();

    const gone = new AbortController();
    const answering = context.api(new Request(`http://host${base}/chat`, { method: 'POST', headers, body: JSON.stringify({ turn_id: 'c1', message: 'hello' }), signal: gone.signal }));
    await modelReached;
    gone.abort();
    const answered = await answering;
    expect(answered.status).toBe(499); // nobody reads it
    expect(logged).toEqual([]);
    waiting.splice(0).forEach((release) => release());
  });

  it('serves the API under basePath, with citation links and the OpenAPI server under the prefix', async () => {
    const context = await setup({ basePath: '/api/memory/' });
    const session = await context.call('GET', '/v1/session');
    expect(session.status).toBe(200);
    const outside = await context.api(new Request('http://host/v1/session', { headers: { authorization: `Bearer ${context.key}` } }));
    expect(outside.status).toBe(404);

    const { agentId, base } = await thread(context);
    const sourceId = await learnDocument(context, base);
    const chat = await context.call('POST', `${base}/chat`, { turn_id: 't1', message: 'Where do invoices go?' });
    expect(chat.status).toBe(200);
    expect(chat.body.citations).toContainEqual(expect.objectContaining({ source_id: sourceId, href: `/api/memory/v1/agents/${agentId}/sources/${sourceId}` }));
    for (const citation of chat.body.citations) expect(citation.href).toMatch(/^\/api\/memory\/v1\//);
    // The link leads back to the handler.
    const original = await context.api(new Request(`http://host${chat.body.citations[0].href}`, { headers: { authorization: `Bearer ${context.key}` } }));
    expect(original.status).toBe(200);

    const streamed = await context.api(
      new Request(`http://host/api/memory${base}/chat/stream`, { method: 'POST', headers: { authorization: `Bearer ${context.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ turn_id: 't2', message: 'Where do invoices go?' }) }),
    );
    const events = parseEvents(await streamed.text());
    for (const event of events.filter((e) => e.event === 'context' || e.event === 'done')) {
      expect(event.data.citations.length).toBeGreaterThan(0);
      for (const citation of event.data.citations) expect(citation.href).toMatch(/^\/api\/memory\/v1\//);
    }

    const openApi = await context.call('GET', '/v1/openapi.json');
    expect(openApi.body.servers).toEqual([{ url: '/api/memory' }]);
  });
});

