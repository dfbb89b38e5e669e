import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryService, inMemoryStore, silentLogger, type MemoryService } from '@memory-agents/core';
import { createHandler, type HandlerOptions } from '../create-handler.js';

const servers: Server[] = [];
const services: MemoryService[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
  for (const service of services.splice(0)) await service.stop();
});

/** What a body-parsing middleware leaves behind after reading the whole stream. */
type Parser = (raw: Buffer, request: IncomingMessage) => unknown;

/**
 * The node handler behind a stand-in for body-parsing middleware (what `express.json()` or
 * Fastify's parser does: read the stream to its end, put something on `req.body`), and behind a
 * stand-in for Express's prefix mount (`req.url` stripped, the prefix in `req.baseUrl`).
 */
async function setup(parser: Parser | null, options: HandlerOptions & { mountAt?: string } = {}) {
  const { mountAt, ...handlerOptions } = options;
  const service = createMemoryService({ store: inMemoryStore(), logger: silentLogger });
  services.push(service);
  await service.start();
  const org = await service.admin.createOrganization({ name: 'Acme' });
  const { key } = await service.admin.createKey({ organizationId: org.organizationId });
  const handler = createHandler(service, { logger: silentLogger, ...handlerOptions });
  const server = createServer(async (request, response) => {
    if (mountAt !== undefined) {
      if (!request.url!.startsWith(`${mountAt}/`)) return void response.writeHead(404).end('host 404');
      request.url = request.url!.slice(mountAt.length);
      Object.assign(request, { baseUrl: mountAt });
    }
    // Like express.json(): only requests that carry a JSON body are parsed.
    const isJson = (request.headers['content-type'] ?? '').startsWith('application/json') && request.method !== 'GET';
    if (parser && isJson) {
      const chunks: Buffer[] = [];
      for await (const chunk of request) chunks.push(chunk as Buffer);
      Object.assign(request, { body: parser(Buffer.concat(chunks), request) });
    }
    await handler(request, response, () => response.writeHead(404).end('host 404'));
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const url = `${origin}${mountAt ?? handlerOptions.basePath ?? ''}`;
  const call = async (method: string, path: string, body?: string, contentType = 'application/json') => {
    const response = await fetch(`${url}${path}`, { method, headers: { authorization: `Bearer ${key}`, 'content-type': contentType }, ...(body === undefined ? {} : { body }) });
    const text = await response.text();
    return { status: response.status, body: text === '' ? undefined : (JSON.parse(text) as any) };
  };
  return { service, key, origin, url, call };
}

const agentBody = JSON.stringify({ agent_config: { role: 'r', objective: 'o' } });

describe('the node handler behind body-parsing middleware', () => {
  it('uses a parsed object on req.body (express.json(), Fastify) instead of the spent stream', async () => {
    const { call } = await setup((raw) => JSON.parse(raw.toString('utf8')));
    const created = await call('POST', '/v1/agents', agentBody);
    expect(created.status).toBe(202);
    expect(created.body.agent_id).toMatch(/^agent_/);
    // The service still validates what the parser produced.
    const invalid = await call('POST', '/v1/agents', JSON.stringify({ agent_config: 'nope' }));
    expect(invalid.status).toBe(422);
  });

  it('parses a Buffer or a string on req.body (express.raw(), express.text()) under the same size limit', async () => {
    const buffered = await setup((raw) => raw, { maxJsonBytes: 200 });
    expect((await buffered.call('POST', '/v1/agents', agentBody)).status).toBe(202);
    const tooLarge = await buffered.call('POST', '/v1/agents', JSON.stringify({ agent_config: { role: 'r', objective: 'o'.repeat(300) } }));
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.body.code).toBe('payload_too_large');
    expect((await buffered.call('POST', '/v1/agents', '{nope')).status).toBe(400);

    const text = await setup((raw) => raw.toString('utf8'));
    expect((await text.call('POST', '/v1/agents', agentBody)).status).toBe(202);
  });

  it('refuses a spent stream with nothing usable on req.body with 400 saying what to change', async () => {
    const { call } = await setup(() => undefined);
    const refused = await call('POST', '/v1/agents', agentBody);
    expect(refused.status).toBe(400);
    expect(refused.body.code).toBe('invalid_request');
    expect(refused.body.error).toContain('mount the handler before body-parsing middleware');
  });

  it('refuses a multipart upload whose stream middleware already read, saying what to change', async () => {
    const { service, key, url } = await setup((raw) => raw);
    const caller = await service.authenticate({ authorization: `Bearer ${key}`, endUser: undefined, secFetchSite: undefined, requestId: 'test' });
    const agent = await service.agents.create({ caller, body: { agent_config: { role: 'r', objective: 'o' } } });
    await service.idle();
    const thread = await service.threads.create({ caller, agentId: agent.agent_id, body: {} });
    // A multipart parser (multer, @fastify/multipart) read the form before the handler.
    const form = new FormData();
    form.append('file', new Blob(['hello'], { type: 'text/plain' }), 'hello.txt');
    const encoded = new Response(form);
    const server = servers[0]!;
    const listener = server.listeners('request')[0] as (...args: unknown[]) => unknown;
    server.removeAllListeners('request');
    server.on('request', async (request: IncomingMessage, response) => {
      for await (const _chunk of request) void _chunk;
      return listener(request, response);
    });
    const response = await fetch(`${url}/v1/agents/${agent.agent_id}/threads/${thread.thread_id}/observe-file`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': encoded.headers.get('content-type')! },
      body: await encoded.arrayBuffer(),
    });
    const body = (await response.json()) as any;
    expect(response.status).toBe(400);
    expect(body.code).toBe('invalid_request');
    expect(body.error).toContain('mount the handler before body-parsing middleware');
  });

  it('reads the stream itself when the middleware left it alone, and passes other paths on', async () => {
    const { call, url } = await setup(null);
    expect((await call('POST', '/v1/agents', agentBody)).status).toBe(202);
    expect(await (await fetch(`${url}/health`)).text()).toBe('host 404');
  });
});

describe('the node handler under a mount prefix', () => {
  it('links citations under the prefix Express stripped (req.baseUrl) and under basePath', async () => {
    for (const mount of [{ mountAt: '/api/memory' }, { basePath: '/api/memory' }]) {
      const { service, key, origin, call } = await setup((raw) => JSON.parse(raw.toString('utf8')), mount);
      const caller = await service.authenticate({ authorization: `Bearer ${key}`, endUser: undefined, secFetchSite: undefined, requestId: 'test' });
      const agent = await service.agents.create({ caller, body: { agent_config: { role: 'r', objective: 'o' } } });
      await service.idle();
      const thread = await service.threads.create({ caller, agentId: agent.agent_id, body: {} });
      const base = `/v1/agents/${agent.agent_id}/threads/${thread.thread_id}`;
      const accepted = await call('POST', `${base}/observe`, JSON.stringify({ observations: [{ speaker: 'alice', timestamp: '2024-03-04T10:00:00Z', content: [{ type: 'text', text: 'Our invoices go to billing@acme.test.' }] }] }));
      expect(accepted.status).toBe(202);
      for (let attempt = 0; ; attempt++) {
        const status = await call('GET', `${base}/observe/${accepted.body.observation_id}/status`);
        if (status.body.status === 'committed') break;
        expect(status.status).toBe(200);
        expect(attempt).toBeLessThan(1000);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      const chat = await call('POST', `${base}/chat`, JSON.stringify({ turn_id: 't1', message: 'Where do invoices go?' }));
      expect(chat.status).toBe(200);
      expect(chat.body.citations.length).toBeGreaterThan(0);
      for (const citation of chat.body.citations) expect(citation.href).toBe(`/api/memory${base}/observe/${accepted.body.observation_id}/status`);
      // The link leads back to the handler.
      const followed = await fetch(`${origin}${chat.body.citations[0].href}`, { headers: { authorization: `Bearer ${key}` } });
      expect(followed.status).toBe(200);
    }
  });
});

describe('headers set before the handler', () => {
  it('keeps what middleware set on the response beside the API headers', async () => {
    const service = createMemoryService({ store: inMemoryStore(), logger: silentLogger });
    services.push(service);
    await service.start();
    const org = await service.admin.createOrganization({ name: 'Acme' });
    const { key } = await service.admin.createKey({ organizationId: org.organizationId });
    const handler = createHandler(service, { logger: silentLogger });
    const server = createServer(async (request, response) => {
      // What e.g. a helmet-like middleware does before the API answers.
      response.setHeader('X-Frame-Options', 'DENY');
      response.setHeader('X-Request-Id', 'overridden by the API');
      await handler(request, response);
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    for (const [path, status] of [['/v1/session', 200], ['/v1/agents/agent_missing', 404]] as const) {
      const response = await fetch(`${url}${path}`, { headers: { authorization: `Bearer ${key}` } });
      const text = await response.text();
      expect(response.status).toBe(status);
      expect(response.headers.get('x-frame-options')).toBe('DENY');
      expect(response.headers.get('x-request-id')).toMatch(/^req_[0-9a-f]{32}$/);
      expect(response.headers.get('x-ratelimit-limit')).not.toBeNull();
      expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(Number(response.headers.get('content-length'))).toBe(Buffer.byteLength(text));
      expect(JSON.parse(text)).toBeTypeOf('object');
    }
  });
});
