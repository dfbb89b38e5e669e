import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMemoryService, inMemoryStore, silentLogger, verifyWebhookSignature, type MemoryService } from '@memory-agents/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetchHandler } from './create-fetch-handler.js';

// The `/v1/webhooks` routes over HTTP: status codes, shapes, refusals with a sentence, tenancy.
// (Delivery behaviour is tested in core: packages/core/src/webhooks/webhooks.test.ts.)

let service: MemoryService;
let api: ReturnType<typeof createFetchHandler>;
let keys: { acme: string; other: string };
let receiver: Server;
let receiverUrl: string;
const bodies: { headers: Record<string, unknown>; body: string }[] = [];

beforeAll(async () => {
  receiver = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      bodies.push({ headers: request.headers, body });
      response.end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/in`;
  service = createMemoryService({ store: inMemoryStore(), logger: silentLogger, webhooks: { allowedHosts: ['127.0.0.1'], pollMs: 20 } });
  await service.start();
  const acme = await service.admin.createOrganization({ name: 'Acme' });
  const other = await service.admin.createOrganization({ name: 'Other' });
  keys = {
    acme: (await service.admin.createKey({ organizationId: acme.organizationId })).key,
    other: (await service.admin.createKey({ organizationId: other.organizationId })).key,
  };
  api = createFetchHandler(service, { logger: silentLogger });
});
afterAll(async () => {
  await service.stop();
  receiver.closeAllConnections();
  await new Promise((resolve) => receiver.close(resolve));
});

async function call(method: string, path: string, { key = keys.acme, json, headers = {} }: { key?: string; json?: unknown; headers?: Record<string, string> } = {}) {
  const response = await api(
    new Request(`http://host${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(json === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      ...(json === undefined ? {} : { body: JSON.stringify(json) }),
    }),
  );
  return { status: response.status, body: (await response.json()) as Record<string, any> };
}

describe('/v1/webhooks', () => {
  it('creates (201 with the secret), lists, reads, changes, rotates and deletes an endpoint', async () => {
    const created = await call('POST', '/v1/webhooks', { json: { url: receiverUrl, events: ['upload.finished'], description: 'uploads' } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ url: receiverUrl, events: ['upload.finished'], enabled: true, secret: expect.stringMatching(/^whsec_/) });
    const id = created.body.webhook_id as string;
    const listed = await call('GET', '/v1/webhooks');
    expect(listed.body.webhooks.map((w: { webhook_id: string }) => w.webhook_id)).toContain(id);
    expect(listed.body.webhooks[0]).not.toHaveProperty('secret');
    expect((await call('GET', `/v1/webhooks/${id}`)).body).toMatchObject({ webhook_id: id, consecutive_failures: 0 });
    expect((await call('PATCH', `/v1/webhooks/${id}`, { json: { events: ['observation.committed', 'observation.failed'] } })).body.events).toEqual(['observation.committed', 'observation.failed']);
    const rotated = await call('POST', `/v1/webhooks/${id}/rotate-secret`);
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).not.toBe(created.body.secret);
    expect((await call('GET', `/v1/webhooks/${id}/deliveries?limit=5`)).body).toEqual({ deliveries: [], next_cursor: null });
    expect((await call('DELETE', `/v1/webhooks/${id}`)).body).toEqual({ webhook_id: id, deleted: true });
    expect((await call('GET', `/v1/webhooks/${id}`)).status).toBe(404);
  });

  it('delivers an observation.committed event the receiver can verify, and logs it', async () => {
    const created = await call('POST', '/v1/webhooks', { json: { url: receiverUrl, events: ['observation.committed'] } });
    const agent = await call('POST', '/v1/agents', { json: { agent_config: { role: 'r', objective: 'o' } } });
    await service.idle();
    const thread = await call('POST', `/v1/agents/${agent.body.agent_id}/threads`, { json: {} });
    const observed = await call('POST', `/v1/agents/${agent.body.agent_id}/threads/${thread.body.thread_id}/observe`, {
      json: { observations: [{ speaker: 'ana', content: [{ type: 'text', text: 'The VPN moved to vpn2.acme.test.' }] }] },
    });
    expect(observed.status).toBe(202);
    await service.idle();
    let log: Record<string, any> = {};
    for (let i = 0; i < 500 && log.deliveries?.[0]?.status !== 'delivered'; i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      log = (await call('GET', `/v1/webhooks/${created.body.webhook_id}/deliveries`)).body;
    }
    expect(log.deliveries[0]).toMatchObject({ event_type: 'observation.committed', status: 'delivered', attempts: 1, last_status_code: 200 });
    const sent = bodies.find((entry) => JSON.parse(entry.body).id === log.deliveries[0].event_id)!;
    expect(JSON.parse(sent.body).data.observation_id).toBe(observed.body.observation_id);
    expect(verifyWebhookSignature({ header: sent.headers['x-memory-agents-signature'] as string, body: sent.body, secret: created.body.secret })).toBe(true);
  });

  it('refuses a private receiver with 422 and a sentence, and a bad body with 422', async () => {
    const refused = await call('POST', '/v1/webhooks', { json: { url: 'http://192.168.1.10/hook' } });
    expect(refused.status).toBe(422);
    expect(refused.body).toMatchObject({ code: 'invalid_request', error: expect.stringContaining('192.168.1.10') });
    const metadata = await call('POST', '/v1/webhooks', { json: { url: 'http://169.254.169.254/latest/meta-data' } });
    expect(metadata.status).toBe(422);
    expect((await call('POST', '/v1/webhooks', { json: { url: receiverUrl, events: ['nope'] } })).status).toBe(422);
    expect((await call('POST', '/v1/webhooks', { json: {} })).status).toBe(422);
  });

  it('answers another organization\'s webhook ids with 404, and an end user with 403', async () => {
    const { body } = await call('POST', '/v1/webhooks', { json: { url: receiverUrl } });
    const id = body.webhook_id as string;
    for (const [method, path, json] of [
      ['GET', `/v1/webhooks/${id}`],
      ['PATCH', `/v1/webhooks/${id}`, { enabled: false }],
      ['DELETE', `/v1/webhooks/${id}`],
      ['POST', `/v1/webhooks/${id}/rotate-secret`],
      ['GET', `/v1/webhooks/${id}/deliveries`],
    ] as const) {
      const answer = await call(method, path, { key: keys.other, ...(json ? { json } : {}) });
      expect(answer.status, `${method} ${path}`).toBe(404);
      expect(answer.body.code).toBe('not_found');
    }
    expect((await call('GET', '/v1/webhooks', { key: keys.other })).body).toEqual({ webhooks: [] });
    expect((await call('GET', '/v1/webhooks', { headers: { 'x-sp-end-user': 'alice' } })).status).toBe(403);
  });

  it('is 503 service_not_configured when the operator did not switch webhooks on', async () => {
    const off = createMemoryService({ store: inMemoryStore(), logger: silentLogger });
    await off.start();
    const org = await off.admin.createOrganization({ name: 'Acme' });
    const key = (await off.admin.createKey({ organizationId: org.organizationId })).key;
    const response = await createFetchHandler(off, { logger: silentLogger })(new Request('http://host/v1/webhooks', { headers: { authorization: `Bearer ${key}` } }));
    expect(response.status).toBe(503);
    expect(((await response.json()) as { code: string }).code).toBe('service_not_configured');
    await off.stop();
  });
});
