import { createServer, request as httpRequest, type ClientRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryService, inMemoryStore, silentLogger, type LanguageModel } from '@memory-agents/core';
import { LanguageModelError } from '@memory-agents/core/adapter';
import { createHandler } from './create-handler.js';
import { writeApiResponse } from './node/write-response.js';
import type { SseEvent } from './route.js';
import { SSE_HEADERS, sseChunks } from './sse.js';

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/**
 * Awaits `promise`, or fails after `ms` naming what never happened: a hang here (a stream that
 * never ends, a handler that never returns) fails in seconds with that sentence instead of at the
 * suite's 180 s test timeout. A bound on hanging, not a measure of speed: healthy runs take
 * milliseconds, and the bound is far above them on a loaded machine.
 */
async function settles<T>(promise: Promise<T>, what: string, ms = 15_000): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const hung = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`hung: ${what} did not happen within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, hung]);
  } finally {
    clearTimeout(timer);
  }
}

async function listen(handler: Parameters<typeof createServer>[1]): Promise<string> {
  const server = createServer(handler);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** A model whose stream sends one delta and then stalls until released; it ignores aborts. */
function stallingModel() {
  const waiting: (() => void)[] = [];
  const model: LanguageModel = {
    specificationVersion: 'v1',
    id: 'stalling',
    generate: () => new Promise((resolve) => waiting.push(() => resolve({ text: 'done' }))),
    async *stream() {
      yield 'Thinking ';
      await new Promise<void>((resolve) => waiting.push(resolve));
      yield 'done.';
    },
  };
  return { model, releaseAll: () => waiting.splice(0).forEach((resolve) => resolve()) };
}

/** The service behind a real loopback server, with a ready agent and a thread. */
async function setup(model: LanguageModel) {
  const service = createMemoryService({ store: inMemoryStore(), model, logger: silentLogger });
  await service.start();
  const org = await service.admin.createOrganization({ name: 'Acme' });
  const { key } = await service.admin.createKey({ organizationId: org.organizationId });
  const url = await listen(createHandler(service, { logger: silentLogger }));
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${url}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, headers: response.headers, body: (await response.json()) as any };
  };
  const agent = await call('POST', '/v1/agents', { agent_config: { role: 'r', objective: 'o' } });
  await service.idle();
  const thread = await call('POST', `/v1/agents/${agent.body.agent_id}/threads`, {});
  const base = `/v1/agents/${agent.body.agent_id}/threads/${thread.body.thread_id}`;
  return { service, url, key, call, base };
}

/** Opens a chat/stream and resolves once its first event arrived (so it holds an answer place). */
function openStream(url: string, key: string, path: string, turn: string): Promise<{ request: ClientRequest; response: IncomingMessage; received: () => string; ended: Promise<void> }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(`${url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' } }, (response) => {
      let text = '';
      let announced = false;
      const ended = new Promise<void>((done) => response.on('close', () => done()));
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        text += chunk;
        if (!announced && text.includes('\n\n')) {
          announced = true;
          resolve({ request, response, received: () => text, ended });
        }
      });
      response.on('end', () => {
        if (!announced) reject(new Error(`stream ended early (${response.statusCode}): ${text}`));
      });
    });
    request.on('error', (error) => {
      if ((error as NodeJS.ErrnoException).code !== 'ECONNRESET') reject(error);
    });
    request.end(JSON.stringify({ turn_id: turn, message: 'What do you remember?' }));
  });
}

describe('chat/stream over HTTP', () => {
  it('holds an answer place while streaming and gives it back at once when the client disconnects', async () => {
    const stalling = stallingModel();
    const { service, url, key, call, base } = await setup(stalling.model);
    const first = await settles(openStream(url, key, `${base}/chat/stream`, 's1'), 'the first stream\'s first event');
    const second = await settles(openStream(url, key, `${base}/chat/stream`, 's2'), 'the second stream\'s first event');
    expect(first.response.statusCode).toBe(200);
    expect(first.received()).toMatch(/^event: context\ndata: /);

    const refused = await call('POST', `${base}/chat/stream`, { turn_id: 's3', message: 'hi' });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('5');
    // X-RateLimit-Reset names the same moment as Retry-After (spec "Rate-limit headers on a 429").
    expect(Number(refused.headers.get('x-ratelimit-reset'))).toBeGreaterThanOrEqual(Math.floor(Date.now() / 1000) + 4);
    expect(refused.body).toEqual({ error: expect.any(String), code: 'rate_limit_exceeded', details: 'user', request_id: refused.headers.get('x-request-id') });

    // The client goes away; the model never finishes, yet the place is free again.
    first.request.destroy();
    await settles(first.ended, 'the first stream closing after its client went away');
    let third: Awaited<ReturnType<typeof openStream>> | null = null;
    for (let attempt = 0; attempt < 300 && third === null; attempt++) {
      third = await settles(openStream(url, key, `${base}/chat/stream`, `s4-${attempt}`), 'an answer to the third stream').catch((error: Error) => {
        if (error.message.startsWith('hung:')) throw error;
        return null;
      });
      if (third === null) await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(third).not.toBeNull();
    expect(third!.response.statusCode).toBe(200);

    // A stream that ends normally ends with done and frees its place as well.
    stalling.releaseAll();
    await settles(second.ended, 'the second stream ending once the model finished');
    expect(second.received()).toContain('event: done\n');
    third!.request.destroy();
    await service.stop();
  });

  it('sends an error event carrying the request id when the model fails after the stream started', async () => {
    const model: LanguageModel = {
      specificationVersion: 'v1',
      id: 'breaking',
      generate: async () => ({ text: 'unused' }),
      async *stream() {
        yield 'Half ';
        throw new LanguageModelError('unavailable', 'connection reset');
      },
    };
    const { service, url, key, base } = await setup(model);
    const response = await fetch(`${url}${base}/chat/stream`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ turn_id: 't', message: 'hello' }),
    });
    expect(response.status).toBe(200);
    const text = await settles(response.text(), 'the stream ending after the model failed');
    const events = text
      .split('\n\n')
      .filter((block) => block.startsWith('event: '))
      .map((block) => ({ event: block.split('\n')[0]!.slice(7), data: JSON.parse(block.split('\n')[1]!.slice(6)) }));
    expect(events.map((event) => event.event)).toEqual(['context', 'delta', 'error']);
    expect(events[2]!.data).toEqual({ error: expect.any(String), code: 'answer_model_unavailable', request_id: response.headers.get('x-request-id') });
    await service.stop();
  });
});

describe('chat over HTTP', () => {
  it('treats a client that went away during an answer as gone, not as an internal error', async () => {
    const logged: string[] = [];
    const logger = { debug() {}, info() {}, warn: (message: string) => logged.push(`warn ${message}`), error: (message: string) => logged.push(`error ${message}`) };
    let reached: () => void = () => undefined;
    const modelReached = new Promise<void>((resolve) => (reached = resolve));
    let abortSeen: () => void = () => undefined;
    const modelAborted = new Promise<void>((resolve) => (abortSeen = resolve));
    const model: LanguageModel = {
      specificationVersion: 'v1',
      id: 'slow-but-polite',
      // Never answers, but honours the abort as the port requires.
      generate: (request) =>
        new Promise((_resolve, reject) => {
          reached();
          request.signal?.addEventListener(
            'abort',
            () => {
              abortSeen();
              reject(Object.assign(new Error('aborted'), { name: 'AbortError' }));
            },
            { once: true },
          );
        }),
      async *stream() {
        yield '';
      },
    };
    const service = createMemoryService({ store: inMemoryStore(), model, logger: silentLogger });
    await service.start();
    const org = await service.admin.createOrganization({ name: 'Acme' });
    const { key } = await service.admin.createKey({ organizationId: org.organizationId });
    const handler = createHandler(service, { logger });
    const handled: Promise<void>[] = [];
    const url = await listen((request, response) => void handled.push(handler(request, response)));
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const agent = (await (await fetch(`${url}/v1/agents`, { method: 'POST', headers, body: JSON.stringify({ agent_config: { role: 'r', objective: 'o' } }) })).json()) as any;
    await service.idle();
    const thread = (await (await fetch(`${url}/v1/agents/${agent.agent_id}/threads`, { method: 'POST', headers, body: '{}' })).json()) as any;
    const gone = new AbortController();
    const answering = fetch(`${url}/v1/agents/${agent.agent_id}/threads/${thread.thread_id}/chat`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ turn_id: 't', message: 'hello' }),
      signal: gone.signal,
    }).catch((error: unknown) => error);
    await settles(modelReached, 'the chat reaching the model');
    gone.abort();
    // The client's own fetch ends with its abort; the abort reaches the model (the answer is not
    // left running), the handler returns, and nothing is logged as a warning or an error.
    expect(await settles(answering, 'the aborted fetch settling')).toMatchObject({ name: 'AbortError' });
    await settles(modelAborted, 'the client\'s disconnect aborting the model call');
    await settles(Promise.all(handled), 'the handler returning after the client went away');
    expect(handled).toHaveLength(3); // agent, thread, chat
    expect(logged).toEqual([]);
    await settles(service.stop(), 'the service stopping');
  });
});

/** What the node handler writes for a streaming route's result: `writeApiResponse` of an `events` answer. */
function writeSse(response: ServerResponse, stream: AsyncIterable<SseEvent>, requestId: string, keepAliveMs: number): Promise<void> {
  return writeApiResponse(response, { status: 200, headers: { 'X-Request-Id': requestId, ...SSE_HEADERS }, kind: 'events', chunks: sseChunks(stream, keepAliveMs) });
}

describe('event streams written to node:http', () => {
  it('writes events and a keep-alive comment while the stream is quiet, then ends', async () => {
    let seenComment: () => void = () => undefined;
    const quietUntilComment = new Promise<void>((resolve) => (seenComment = resolve));
    async function* events() {
      yield { event: 'context', data: { memory_context: '', citations: [] } };
      await quietUntilComment;
      yield { event: 'done', data: { ok: true } };
    }
    const url = await listen((_request, response) => void writeSse(response, events(), 'req_sse', 10));
    const text = await settles(
      new Promise<string>((resolve, reject) => {
      httpRequest(url, (response) => {
        expect(response.headers['content-type']).toMatch(/^text\/event-stream/);
        expect(response.headers['cache-control']).toBe('no-store');
        expect(response.headers['x-request-id']).toBe('req_sse');
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          body += chunk;
          if (body.includes(': keep-alive\n\n')) seenComment();
        });
        response.on('end', () => resolve(body));
      })
        .on('error', reject)
        .end();
      }),
      'the stream writing a keep-alive comment, then done, then ending',
    );
    const blocks = text.split('\n\n').filter((block) => block !== '');
    expect(blocks[0]).toBe('event: context\ndata: {"memory_context":"","citations":[]}');
    expect(blocks).toContain(': keep-alive');
    expect(blocks.at(-1)).toBe('event: done\ndata: {"ok":true}');
  });

  it('closes the event source when the client disconnects', async () => {
    let closed: () => void = () => undefined;
    const wasClosed = new Promise<void>((resolve) => (closed = resolve));
    const source: AsyncIterable<{ event: string; data: unknown }> = {
      [Symbol.asyncIterator]() {
        let sent = false;
        return {
          async next() {
            if (!sent) {
              sent = true;
              return { done: false, value: { event: 'context', data: {} } };
            }
            return new Promise<IteratorResult<{ event: string; data: unknown }>>(() => undefined);
          },
          async return() {
            closed();
            return { done: true, value: undefined };
          },
        };
      },
    };
    const url = await listen((_request, response) => void writeSse(response, source, 'req_close', 1_000));
    const request = httpRequest(url, (response) => response.once('data', () => request.destroy()));
    request.on('error', () => undefined);
    request.end();
    await settles(wasClosed, 'the event source being closed after the client disconnected');
  });
});
