import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryService, type MemoryServiceOptions } from '../create-memory-service.js';
import { inMemoryStore } from '../in-memory/store/index.js';
import type { Caller } from '../auth/caller.js';
import type { MemoryService } from '../memory-service.js';
import type { Store } from '../ports/store/index.js';
import { silentLogger } from '../service/logger.js';
import { sendWebhook } from './send.js';
import { verifyWebhookSignature } from './signature.js';
import { compileAddressPolicy } from './url-guard.js';
import type { WebhookOptions } from './options.js';
import { emitErasureFinished } from './events.js';
import { createWebhooks } from './webhooks.js';
import { createIdGenerator } from '../ids/index.js';
import type { ServiceContext } from '../service/context.js';

type Received = { headers: IncomingHttpHeaders; body: string; event: { id: string; type: string; data: Record<string, unknown> } };
/** What the receiver does with the nth request (0-based): answer a status, or never answer. */
type Behaviour = (request: Received, index: number) => number | 'hang';

/** A local receiver on 127.0.0.1 that records every request and answers as `behaviour` says. */
async function receiver(initial: Behaviour = () => 200) {
  const received: Received[] = [];
  /** Requests answered 'hang' whose connection is still open. */
  const open = new Set<import('node:http').ServerResponse>();
  let behaviour = initial;
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const entry = { headers: request.headers, body, event: JSON.parse(body) };
      received.push(entry);
      const answer = behaviour(entry, received.length - 1);
      if (answer === 'hang') {
        open.add(response);
        response.on('close', () => open.delete(response));
        return;
      }
      response.statusCode = answer;
      response.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    port,
    received,
    open,
    /** Answers every hanging request now, and `status` to every later one. */
    release(status = 200) {
      behaviour = () => status;
      for (const response of open) {
        response.statusCode = status;
        response.end('ok');
      }
    },
    answer(next: Behaviour) {
      behaviour = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Polls `check` until it holds (the worker runs in the background); fails after a generous bound. */
async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 1000; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`timed out waiting until ${what}`);
}

const FAST: WebhookOptions = { allowedHosts: ['127.0.0.1'], pollMs: 20, retryBaseMs: 10, retryMaxMs: 40, timeoutMs: 500, random: () => 0.5 };

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

async function setup(webhooks: WebhookOptions | null = FAST, extra: Partial<MemoryServiceOptions> = {}) {
  const store = extra.store ?? inMemoryStore();
  const service = createMemoryService({ store, logger: silentLogger, ...(webhooks ? { webhooks } : {}), ...extra });
  await service.start();
  cleanups.push(() => service.stop());
  const org = await service.admin.createOrganization({ name: 'Acme' });
  const caller = await service.as(org.organizationId);
  const agent = await service.agents.create({ caller, body: { agent_config: { role: 'r', objective: 'o' } } });
  await service.idle();
  const thread = await service.threads.create({ caller, agentId: agent.agent_id });
  const observe = async (text: string, threadId = thread.thread_id) =>
    (await service.observe({ caller, agentId: agent.agent_id, threadId, body: { observations: [{ speaker: 'ana', content: [{ type: 'text', text }] }] } })).observation_id;
  /** Observes and waits until it is learned (not for the webhook worker, unlike `service.idle()`). */
  const learned = async (text: string, threadId = thread.thread_id) => {
    const observationId = await observe(text, threadId);
    await until(async () => (await service.observationStatus({ caller, agentId: agent.agent_id, threadId, observationId })).status === 'committed', 'learned');
    return observationId;
  };
  return { service, store, caller, agentId: agent.agent_id, threadId: thread.thread_id, observe, learned };
}

async function listen(behaviour?: Behaviour) {
  const target = await receiver(behaviour);
  cleanups.push(target.close);
  return target;
}

const deliveries = async (service: MemoryService, caller: Caller, webhookId: string) => (await service.webhooks.deliveries({ caller, webhookId })).deliveries;

describe('webhooks', () => {
  it('are off unless the operator switches them on: 503 service_not_configured', async () => {
    const { service, caller } = await setup(null);
    await expect(service.webhooks.list({ caller })).rejects.toMatchObject({ code: 'service_not_configured', status: 503 });
  });

  it('refuses receivers on loopback, private, link-local and unique-local addresses, and other schemes, with a sentence', async () => {
    const { service, caller } = await setup({ ...FAST, allowedHosts: [] });
    for (const url of ['http://127.0.0.1:9/x', 'http://localhost/x', 'http://10.1.2.3/', 'http://192.168.0.1/', 'http://169.254.169.254/latest', 'http://[::1]/', 'http://[fd00::1]/', 'http://[fe80::1]/', 'http://[::ffff:127.0.0.1]/', 'http://0.0.0.0/']) {
      const refusal = service.webhooks.create({ caller, body: { url } });
      await expect(refusal, url).rejects.toMatchObject({ code: 'invalid_request', status: 422 });
      await expect(service.webhooks.create({ caller, body: { url } })).rejects.toThrow(/webhooks may only call public addresses/);
    }
    await expect(service.webhooks.create({ caller, body: { url: 'ftp://example.com/x' } })).rejects.toThrow(/http or https only/);
    await expect(service.webhooks.create({ caller, body: { url: 'https://user:pw@example.com/' } })).rejects.toThrow(/user name or password/);
    await expect(service.webhooks.create({ caller, body: { url: 'not a url' } })).rejects.toMatchObject({ status: 422 });
    // Allowed by the operator: a CIDR range or a host name.
    const allowed = await setup({ ...FAST, allowedHosts: ['10.0.0.0/8', 'localhost'] });
    await expect(allowed.service.webhooks.create({ caller: allowed.caller, body: { url: 'http://10.1.2.3/' } })).resolves.toMatchObject({ url: 'http://10.1.2.3/' });
    await expect(allowed.service.webhooks.create({ caller: allowed.caller, body: { url: 'http://localhost:8080/' } })).resolves.toMatchObject({ enabled: true });
  });

  it('refuses IPv6 spellings that carry a private IPv4 (IPv4-compatible ::/96, IPv4-mapped, NAT64, 6to4), on create, on PATCH and at connection time', async () => {
    const { service, caller } = await setup({ ...FAST, allowedHosts: [] });
    const refused = [
      'http://[::127.0.0.1]/',
      'http://[::7f00:1]/',
      'http://[::a9fe:a9fe]/latest',
      'http://[::10.0.0.1]/',
      'http://[0:0:0:0:0:0:192.168.1.1]/',
      'http://[::8.8.8.8]/', // IPv4-compatible addresses are deprecated (RFC 4291): none is called
      'http://[::ffff:7f00:1]/',
      'http://[::ffff:10.0.0.1]/',
      'http://[::ffff:0:127.0.0.1]/',
      'http://[64:ff9b::7f00:1]/',
      'http://[64:ff9b::a9fe:a9fe]/',
      'http://[64:ff9b:1::a00:1]/',
      'http://[2002:7f00:1::1]/',
      'http://[2002:a9fe:a9fe::]/',
    ];
    const { webhook_id } = await service.webhooks.create({ caller, body: { url: 'http://[2606:4700:4700::1111]/in' } });
    for (const url of refused) {
      await expect(service.webhooks.create({ caller, body: { url } }), url).rejects.toMatchObject({ code: 'invalid_request', status: 422, message: expect.stringMatching(/webhooks may only call public addresses/) });
      await expect(service.webhooks.update({ caller, webhookId: webhook_id, body: { url } }), `PATCH ${url}`).rejects.toMatchObject({ code: 'invalid_request', status: 422 });
    }
    expect((await service.webhooks.list({ caller })).webhooks.map((w) => w.url)).toEqual(['http://[2606:4700:4700::1111]/in']);
    // Public IPv4 through the IPv4-mapped form stays allowed.
    await expect(service.webhooks.create({ caller, body: { url: 'http://[::ffff:8.8.8.8]/' } })).resolves.toMatchObject({ enabled: true });
    // At connection time (a stored URL from before the fix, or an allowed host name resolving there).
    const policy = compileAddressPolicy({ allowPrivate: false, allowedHosts: [] });
    for (const address of ['::7f00:1', '::a9fe:a9fe', '::10.0.0.1', '::127.0.0.1', '0:0:0:0:0:0:127.0.0.1']) expect(policy.refusedRange(address), address).not.toBeNull();
    const result = await sendWebhook({ url: 'http://[::7f00:1]:9/x', body: '{}', headers: {}, timeoutMs: 1000, policy });
    expect(result).toMatchObject({ statusCode: null, error: expect.stringMatching(/which webhooks may not call/) });
  });

  it('checks the address again at connection time: a host name resolving to loopback is never called', async () => {
    const target = await listen();
    const result = await sendWebhook({
      url: `http://localhost:${target.port}/hooks`,
      body: '{}',
      headers: {},
      timeoutMs: 1000,
      policy: compileAddressPolicy({ allowPrivate: false, allowedHosts: [] }),
    });
    expect(result.statusCode).toBeNull();
    expect(result.error).toMatch(/localhost resolves to (127\.0\.0\.1|::1) \(loopback\)/);
    expect(target.received).toHaveLength(0);
  });

  it('delivers a signed observation.committed event whose id matches its header', async () => {
    const target = await listen();
    const { service, caller, observe, agentId, threadId } = await setup();
    const created = await service.webhooks.create({ caller, body: { url: target.url, events: ['observation.committed'] } });
    expect(created.secret).toMatch(/^whsec_/);
    const observationId = await observe('Invoices go to billing@acme.test.');
    await until(() => target.received.length === 1, 'the event arrived');
    const [got] = target.received;
    expect(got!.event).toMatchObject({ type: 'observation.committed', data: { observation_id: observationId, agent_id: agentId, thread_id: threadId, status: 'committed', turns_total: 1 } });
    expect(got!.headers['x-memory-agents-event-id']).toBe(got!.event.id);
    expect(got!.headers['x-memory-agents-event-type']).toBe('observation.committed');
    const header = got!.headers['x-memory-agents-signature'] as string;
    expect(verifyWebhookSignature({ header, body: got!.body, secret: created.secret })).toBe(true);
    expect(verifyWebhookSignature({ header, body: `${got!.body} `, secret: created.secret })).toBe(false);
    expect(verifyWebhookSignature({ header, body: got!.body, secret: 'whsec_other' })).toBe(false);
    await until(async () => (await deliveries(service, caller, created.webhook_id))[0]?.status === 'delivered', 'the log says delivered');
    expect((await deliveries(service, caller, created.webhook_id))[0]).toMatchObject({ event_id: got!.event.id, attempts: 1, last_status_code: 200, last_error: null });
  });

  it('retries a failing receiver with the same event id until it recovers, and logs each attempt', async () => {
    const target = await listen((_, index) => (index < 2 ? 500 : 204));
    const { service, caller, observe } = await setup();
    const { webhook_id } = await service.webhooks.create({ caller, body: { url: target.url } });
    await observe('The office moved to Lyon.');
    await until(() => target.received.length === 3, 'three attempts');
    expect(new Set(target.received.map((r) => r.event.id)).size).toBe(1);
    expect(target.received.map((r) => r.headers['x-memory-agents-attempt'])).toEqual(['1', '2', '3']);
    await until(async () => (await deliveries(service, caller, webhook_id))[0]?.status === 'delivered', 'delivered');
    const [logged] = await deliveries(service, caller, webhook_id);
    expect(logged).toMatchObject({ attempts: 3, last_status_code: 204, status: 'delivered' });
    expect((await service.webhooks.get({ caller, webhookId: webhook_id })).consecutive_failures).toBe(0);
  });

  it('gives an attempt up after the time limit and tries again', async () => {
    const target = await listen((_, index) => (index === 0 ? 'hang' : 200));
    const { service, caller, observe } = await setup({ ...FAST, timeoutMs: 200 });
    const { webhook_id } = await service.webhooks.create({ caller, body: { url: target.url } });
    await observe('Standup is at nine.');
    await until(async () => (await deliveries(service, caller, webhook_id))[0]?.status === 'delivered', 'delivered after a timeout');
    expect(target.received.length).toBe(2);
    expect(target.received[0]!.event.id).toBe(target.received[1]!.event.id);
    expect((await deliveries(service, caller, webhook_id))[0]).toMatchObject({ attempts: 2, last_status_code: 200 });
  });

  it('keeps a thread\'s events in order: the next waits for the previous one\'s delivery', async () => {
    // The first event of the thread fails twice; the second is recorded meanwhile and must not overtake it.
    let firstId: string | null = null;
    const target = await listen((request) => {
      firstId ??= request.event.id;
      return request.event.id === firstId && target.received.filter((r) => r.event.id === firstId).length <= 2 ? 503 : 200;
    });
    const { service, caller, observe } = await setup({ ...FAST, retryBaseMs: 50, retryMaxMs: 100 });
    await service.webhooks.create({ caller, body: { url: target.url, events: ['observation.committed'] } });
    const first = await observe('First fact.');
    await until(() => target.received.length >= 1, 'the first attempt');
    const second = await observe('Second fact.');
    await until(() => target.received.filter((r) => r.event.data.observation_id === second).length === 1, 'the second event');
    expect(target.received.map((r) => r.event.data.observation_id)).toEqual([first, first, first, second]);
  });

  it('disables an endpoint after N consecutive failed attempts; re-enabling it resumes delivery', async () => {
    const target = await listen(() => 500);
    const { service, caller, observe } = await setup({ ...FAST, disableAfterFailures: 3, maxAttempts: 10 });
    const { webhook_id } = await service.webhooks.create({ caller, body: { url: target.url } });
    await observe('Deploys happen on Tuesdays.');
    await until(async () => !(await service.webhooks.get({ caller, webhookId: webhook_id })).enabled, 'disabled');
    const disabled = await service.webhooks.get({ caller, webhookId: webhook_id });
    expect(disabled).toMatchObject({ enabled: false, consecutive_failures: 3, disabled_reason: expect.stringContaining('3 consecutive failed attempts') });
    expect(target.received).toHaveLength(3);
    expect((await deliveries(service, caller, webhook_id))[0]).toMatchObject({ status: 'pending', attempts: 3 });

    target.answer(() => 200);
    const reenabled = await service.webhooks.update({ caller, webhookId: webhook_id, body: { enabled: true } });
    expect(reenabled).toMatchObject({ enabled: true, disabled_reason: null, consecutive_failures: 0 });
    await until(async () => (await deliveries(service, caller, webhook_id))[0]?.status === 'delivered', 'delivered after re-enabling');
    expect(new Set(target.received.map((r) => r.event.id)).size).toBe(1);
  });

  it('keeps the events that happen while an endpoint is disabled and delivers them, in order, once it is re-enabled', async () => {
    const target = await listen();
    const { service, caller, learned } = await setup();
    const { webhook_id } = await service.webhooks.create({ caller, body: { url: target.url, events: ['observation.committed'] } });
    const before = await learned('Before the pause.');
    await until(() => target.received.length === 1, 'the first event');
    await service.webhooks.update({ caller, webhookId: webhook_id, body: { enabled: false } });
    const during = [await learned('During the pause, one.'), await learned('During the pause, two.'), await learned('During the pause, three.')];
    // Kept while disabled (pending in the log), sent to nobody.
    const log = await deliveries(service, caller, webhook_id);
    expect(log.filter((d) => d.status === 'pending')).toHaveLength(3);
    expect(target.received).toHaveLength(1);
    await service.webhooks.update({ caller, webhookId: webhook_id, body: { enabled: true } });
    const after = await learned('After the pause.');
    await until(() => target.received.length === 5, 'every event after re-enabling');
    expect(target.received.map((r) => r.event.data.observation_id)).toEqual([before, ...during, after]);
    await until(async () => (await deliveries(service, caller, webhook_id)).every((d) => d.status === 'delivered'), 'all delivered');
  });

  it('does not make other receivers wait on a slow one: an event to another organization goes out while a slow attempt is open', async () => {
    const slow = await listen(() => 'hang');
    const fast = await listen();
    // A long attempt limit: the slow receiver's attempt stays open for the whole test.
    const { service, caller, agentId, learned } = await setup({ ...FAST, timeoutMs: 120_000 });
    cleanups.push(async () => slow.release()); // runs before the service stops, which waits for open attempts
    await service.webhooks.create({ caller, body: { url: slow.url, events: ['observation.committed'] } });
    const other = await service.as((await service.admin.createOrganization({ name: 'Other' })).organizationId);
    const agent = await service.agents.create({ caller: other, body: { agent_config: { role: 'r', objective: 'o' } } });
    await service.idle();
    const thread = await service.threads.create({ caller: other, agentId: agent.agent_id });
    await service.webhooks.create({ caller: other, body: { url: fast.url, events: ['observation.committed'] } });
    // Several threads of the slow organization, so its receiver could take every slot if nothing bounded it.
    const slowThreads = await Promise.all(Array.from({ length: 6 }, async () => (await service.threads.create({ caller, agentId })).thread_id));
    await learned('For the slow receiver.');
    for (const threadId of slowThreads) await learned('For the slow receiver, another thread.', threadId);
    await until(() => slow.open.size >= 1, 'the slow attempt is open');
    const sent = await service.observe({ caller: other, agentId: agent.agent_id, threadId: thread.thread_id, body: { observations: [{ speaker: 'bo', content: [{ type: 'text', text: 'For the fast receiver.' }] }] } });
    await until(() => fast.received.length === 1, 'the fast receiver got its event while the slow attempt is open');
    expect(fast.received[0]!.event.data.observation_id).toBe(sent.observation_id);
    // The slow attempts were still open (none answered, none timed out) and bounded per endpoint.
    expect(slow.open.size).toBeGreaterThanOrEqual(1);
    expect(slow.open.size).toBeLessThanOrEqual(4);
    expect(slow.received.length).toBe(slow.open.size);
    slow.release();
    await until(() => slow.received.length === 7, 'the slow receiver got every event once answered');
  });

  it('gives a delivery up after maxAttempts and lets the thread\'s next event go', async () => {
    const target = await listen((request) => (request.event.data.observation_id === firstId ? 500 : 200));
    let firstId: string | null = null;
    const { service, caller, observe } = await setup({ ...FAST, maxAttempts: 2 });
    const { webhook_id } = await service.webhooks.create({ caller, body: { url: target.url, events: ['observation.committed'] } });
    firstId = await observe('One.');
    await service.idle();
    const second = await observe('Two.');
    await until(async () => (await deliveries(service, caller, webhook_id)).some((d) => d.status === 'delivered'), 'the second delivered');
    const log = await deliveries(service, caller, webhook_id);
    expect(log.map((d) => [d.status, d.attempts])).toEqual([['delivered', 1], ['failed', 2]]);
    expect(target.received.at(-1)!.event.data.observation_id).toBe(second);
  });

  it('signs with the new and the previous secret during a rotation window', async () => {
    const target = await listen();
    const { service, caller, observe } = await setup();
    const created = await service.webhooks.create({ caller, body: { url: target.url, events: ['observation.committed'] } });
    const rotated = await service.webhooks.rotateSecret({ caller, webhookId: created.webhook_id });
    expect(rotated.secret).not.toBe(created.secret);
    expect(rotated.previous_secret_expires_at).not.toBeNull();
    await observe('Rotation day.');
    await until(() => target.received.length === 1, 'delivered');
    const { headers, body } = target.received[0]!;
    const header = headers['x-memory-agents-signature'] as string;
    expect(header.match(/v1=/g)).toHaveLength(2);
    expect(verifyWebhookSignature({ header, body, secret: rotated.secret })).toBe(true);
    expect(verifyWebhookSignature({ header, body, secret: created.secret })).toBe(true);
  });

  it('survives a restart: a delivery recorded by a stopped process is sent by the next one on the same store', async () => {
    const target = await listen(() => 500);
    const store: Store = inMemoryStore();
    const first = await setup({ ...FAST, retryBaseMs: 60_000, retryMaxMs: 60_000 }, { store });
    const { webhook_id } = await first.service.webhooks.create({ caller: first.caller, body: { url: target.url, events: ['observation.committed'] } });
    await first.observe('Before the restart.');
    await until(() => target.received.length === 1, 'one failed attempt');
    await first.service.stop();
    target.answer(() => 200);
    // The next process retries sooner (its own backoff) once the recorded attempt time is due.
    const second = createMemoryService({ store, logger: silentLogger, webhooks: FAST, clock: { now: () => Date.now() + 120_000 } });
    await second.start();
    cleanups.push(() => second.stop());
    await until(async () => (await deliveries(second, first.caller, webhook_id))[0]?.status === 'delivered', 'delivered by the second process');
    expect(target.received.map((r) => r.event.id)).toEqual([target.received[0]!.event.id, target.received[0]!.event.id]);
  });

  it('keeps each organization to its own webhooks: another one\'s ids are 404', async () => {
    const target = await listen();
    const { service, caller } = await setup();
    const { webhook_id } = await service.webhooks.create({ caller, body: { url: target.url } });
    const other = await service.as((await service.admin.createOrganization({ name: 'Other' })).organizationId);
    for (const call of [
      () => service.webhooks.get({ caller: other, webhookId: webhook_id }),
      () => service.webhooks.update({ caller: other, webhookId: webhook_id, body: { enabled: false } }),
      () => service.webhooks.delete({ caller: other, webhookId: webhook_id }),
      () => service.webhooks.rotateSecret({ caller: other, webhookId: webhook_id }),
      () => service.webhooks.deliveries({ caller: other, webhookId: webhook_id }),
    ]) {
      await expect(call()).rejects.toMatchObject({ code: 'not_found', status: 404 });
    }
    expect((await service.webhooks.list({ caller: other })).webhooks).toEqual([]);
    await expect(service.webhooks.get({ caller, webhookId: 'whk_nope' })).rejects.toMatchObject({ code: 'not_found' });
    const endUser = await service.as(caller.organizationId, { endUser: 'alice' });
    await expect(service.webhooks.list({ caller: endUser })).rejects.toMatchObject({ code: 'forbidden', status: 403 });
    expect(await service.webhooks.delete({ caller, webhookId: webhook_id })).toEqual({ webhook_id, deleted: true });
    expect((await service.webhooks.list({ caller })).webhooks).toEqual([]);
  });

  it('sends upload.finished once a document upload has learned, with its source and filename', async () => {
    const target = await listen();
    const { service, caller, agentId, threadId } = await setup();
    await service.webhooks.create({ caller, body: { url: target.url, events: ['upload.finished'] } });
    const data = new TextEncoder().encode('# Harbor\n\nThe harbor opens at dawn.\n');
    const accepted = await service.observeFile({ caller, agentId, threadId, file: { filename: 'harbor.md', mediaType: 'text/markdown', data }, fields: {} });
    await until(() => target.received.length === 1, 'upload.finished arrived');
    expect(target.received[0]!.event).toMatchObject({
      type: 'upload.finished',
      data: { observation_id: accepted.observation_id, agent_id: agentId, thread_id: threadId, status: 'committed', filename: 'harbor.md', source_id: expect.stringMatching(/^src_/) },
    });
  });

  it('sends erasure.finished once an erasure job has run, with ids and never the erased text', async () => {
    const target = await listen();
    const { service, caller, agentId, threadId, observe } = await setup();
    await service.webhooks.create({ caller, body: { url: target.url, events: ['erasure.finished'] } });
    await observe('The vault code is Marigold-7.');
    await service.idle();
    const erasure = await service.erasures.erase({ caller, agentId, body: { thread_id: threadId } });
    await until(() => target.received.length === 1, 'erasure.finished arrived');
    expect(target.received[0]!.event).toMatchObject({
      type: 'erasure.finished',
      data: { erasure_id: erasure.erasure_id, agent_id: agentId, status: 'completed', target: { kind: 'thread', id: threadId } },
    });
    expect(target.received[0]!.body).not.toContain('Marigold');
    expect((await service.erasures.get({ caller, agentId, erasureId: erasure.erasure_id })).status).toBe('completed');
  });

  it('records erasure.finished through the emit function the erasure work calls', async () => {
    const store = inMemoryStore();
    await store.init();
    const clock = { now: () => Date.parse('2026-01-01T00:00:00Z') };
    const base = { store, clock, ids: createIdGenerator(clock.now), nowIso: () => new Date(clock.now()).toISOString(), instanceId: 'w', logger: silentLogger };
    const area = createWebhooks(base as unknown as Omit<ServiceContext, 'webhooks'>, FAST);
    const context = { ...base, webhooks: area.emitter } as unknown as ServiceContext;
    const endpoint = { id: 'whk_01ARZ3NDEKTSV4RRFFQ69G5FAV', organizationId: 'org_e', url: 'https://hooks.example.com/', description: null, events: ['erasure.finished' as const], secret: 's', previousSecret: null, previousSecretExpiresAt: null, enabled: true, disabledReason: null, consecutiveFailures: 0, createdAt: base.nowIso(), updatedAt: base.nowIso() };
    await store.webhooks.insertEndpoint({ endpoint });
    await emitErasureFinished(context, { organizationId: 'org_e', data: { erasure_id: 'era_1', agent_id: null, end_user_id: 'eu_1', status: 'completed', finished_at: base.nowIso() } });
    const [delivery] = await store.webhooks.listDeliveries({ organizationId: 'org_e', endpointId: endpoint.id, limit: 5 });
    expect(delivery).toMatchObject({ eventType: 'erasure.finished', status: 'pending' });
    expect(JSON.parse(delivery!.body)).toMatchObject({ type: 'erasure.finished', organization_id: 'org_e', data: { erasure_id: 'era_1', end_user_id: 'eu_1', status: 'completed' } });
  });

  it('prunes finished deliveries past the retention from the log (a process prunes on its first pass, then hourly)', async () => {
    const target = await listen();
    const store: Store = inMemoryStore();
    const first = await setup(FAST, { store });
    const { webhook_id } = await first.service.webhooks.create({ caller: first.caller, body: { url: target.url, events: ['observation.committed'] } });
    await first.observe('Kept for a while.');
    await until(async () => (await deliveries(first.service, first.caller, webhook_id))[0]?.status === 'delivered', 'delivered');
    await first.service.stop();
    const later = createMemoryService({ store, logger: silentLogger, webhooks: { ...FAST, retentionMs: 86_400_000 }, clock: { now: () => Date.now() + 2 * 86_400_000 } });
    await later.start();
    cleanups.push(() => later.stop());
    await until(async () => (await deliveries(later, first.caller, webhook_id)).length === 0, 'pruned');
  });
});
