import { connect, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryService, inMemoryStore, silentLogger } from '@memory-agents/core';
import { createHandler } from '@memory-agents/http';
import { createNodeServer } from './create-node-server.js';

/** @see issue "Reliability hardening", item 5 */
const service = createMemoryService({ store: inMemoryStore(), logger: silentLogger });
const server = createNodeServer(createHandler(service, { logger: silentLogger }), {
  headersTimeoutMs: 1_000,
  requestTimeoutMs: 4_000,
  keepAliveTimeoutMs: 500,
  slowBodyGraceMs: 1_000,
  minBodyBytesPerSecond: 1024,
});
let port = 0;
let key = '';

beforeAll(async () => {
  await service.start();
  const org = await service.admin.createOrganization({ name: 'Acme' });
  key = (await service.admin.createKey({ organizationId: org.organizationId })).key;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await service.stop();
});

/** Sends `head` at once, then one byte of `trickle` a second; resolves when the server ends the connection. */
function trickle(head: string, drip: string): Promise<{ closedAfterMs: number; received: string }> {
  return new Promise((resolve) => {
    const started = Date.now();
    const socket: Socket = connect(port, '127.0.0.1', () => socket.write(head));
    let received = '';
    let index = 0;
    const timer = setInterval(() => {
      if (!socket.destroyed && socket.writable) socket.write(drip[index++ % drip.length]!);
    }, 1000);
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (received += chunk));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearInterval(timer);
      resolve({ closedAfterMs: Date.now() - started, received });
    });
  });
}

describe('createNodeServer limits', () => {
  it('cuts off a client sending headers at a byte a second (408 with the error body) and keeps answering others', async () => {
    const slow = trickle('GET /v1/session HTTP/1.1\r\n', 'X-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n');
    const started = Date.now();
    const response = await fetch(`http://127.0.0.1:${port}/v1/session`, { headers: { authorization: `Bearer ${key}` } });
    expect(response.status).toBe(200);
    expect(Date.now() - started).toBeLessThan(1_000);
    const { closedAfterMs, received } = await slow;
    expect(closedAfterMs).toBeLessThan(4_000);
    expect(received).toMatch(/^HTTP\/1\.1 408/);
    expect(received).toContain('"code":"request_timeout"');
    expect(received).toContain('"request_id":"req_');
  });

  it('cuts off a body arriving at a byte a second long before the request timeout', async () => {
    const { closedAfterMs } = await trickle(
      `POST /v1/agents HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{`,
      'aaaaaaaaaa',
    );
    expect(closedAfterMs).toBeLessThan(3_500);
  });

  it('applies the keep-alive timeout and the connection cap', () => {
    expect(server.keepAliveTimeout).toBe(500);
    expect(server.maxConnections).toBe(1024);
    expect(server.headersTimeout).toBe(1_000);
    expect(server.requestTimeout).toBe(4_000);
  });
});

/** Sends `raw` on a fresh connection; resolves with everything the server wrote before closing. */
function rawExchange(raw: string): Promise<string> {
  return new Promise((resolve) => {
    const socket: Socket = connect(port, '127.0.0.1', () => socket.write(raw));
    let received = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (received += chunk));
    socket.on('error', () => undefined);
    socket.on('close', () => resolve(received));
    setTimeout(() => socket.destroy(), 3_000).unref();
  });
}

describe('a request without Host', () => {
  it('answers 400 invalid_request with a sentence and the headers of every response, not Node’s bare 400', async () => {
    const received = await rawExchange('GET /v1/session HTTP/1.1\r\nConnection: close\r\n\r\n');
    expect(received).toMatch(/^HTTP\/1\.1 400/);
    const [head, body] = received.split('\r\n\r\n');
    expect(head).toMatch(/x-ratelimit-limit: \d+/i);
    expect(head).toMatch(/x-request-id: req_/i);
    const parsed = JSON.parse(body!) as { code: string; error: string; request_id: string };
    expect(parsed.code).toBe('invalid_request');
    expect(parsed.error).toMatch(/Host header/);
    expect(parsed.request_id).toMatch(/^req_/);
  });

  it('still serves an HTTP/1.0 request without Host (Host is optional there)', async () => {
    const received = await rawExchange(`GET /v1/session HTTP/1.0\r\nAuthorization: Bearer ${key}\r\n\r\n`);
    expect(received).toMatch(/^HTTP\/1\.1 200/);
  });
});
