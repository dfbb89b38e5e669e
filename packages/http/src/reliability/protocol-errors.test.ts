import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './test-server.js';

/** @see issue "Reliability hardening", items 3 and 4 */
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

/** Sends raw bytes and resolves what came back once the server closed (or after 5 s). */
function raw(bytes: string): Promise<{ status: number; headers: string; body: Record<string, unknown> | string }> {
  return new Promise((resolve, reject) => {
    const url = new URL(server.url);
    const socket = connect(Number(url.port), url.hostname, () => socket.end(bytes));
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (text += chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const split = text.indexOf('\r\n\r\n');
      const body = text.slice(split + 4);
      let parsed: Record<string, unknown> | string = body;
      try {
        parsed = JSON.parse(body) as Record<string, unknown>;
      } catch {
        // left as text
      }
      resolve({ status: Number(text.slice(9, 12)), headers: text.slice(0, split), body: parsed });
    });
    socket.setTimeout(5_000, () => socket.destroy());
  });
}

const post = (path: string, body: string, contentType: string | undefined) =>
  fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${server.key}`, ...(contentType === undefined ? {} : { 'content-type': contentType }) },
    body,
  });

const observation = JSON.stringify({ observations: [{ content: [{ type: 'text', text: 'hello' }] }] });

describe('errors node:http raises itself carry the error body', () => {
  it('answers a bad request line with 400 and { error, code, request_id }', async () => {
    const answer = await raw('NOT HTTP AT ALL\r\n\r\n');
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({ error: expect.any(String), code: 'invalid_request', request_id: expect.stringMatching(/^req_/) });
    expect(answer.headers).toMatch(/content-type: application\/json/i);
  });

  it('answers headers over the limit with 431 and the error body', async () => {
    const answer = await raw(`GET /v1/session HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(answer.status).toBe(431);
    expect(answer.body).toEqual({ error: expect.any(String), code: 'headers_too_large', request_id: expect.stringMatching(/^req_/) });
  });

  it('answers chunk extensions over the limit with 413 payload_too_large (a pair the spec lists)', async () => {
    const answer = await raw(`POST ${server.base}/observe HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\n1;x=${'a'.repeat(20_000)}\r\n{\r\n`);
    expect(answer.status).toBe(413);
    expect(answer.body).toEqual({ error: expect.stringContaining('chunk extensions'), code: 'payload_too_large', request_id: expect.stringMatching(/^req_/) });
  });

  it('answers broken chunked framing with 400 and the error body', async () => {
    const answer = await raw(`POST ${server.base}/observe HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\nzz\r\n`);
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ code: 'invalid_request', request_id: expect.any(String) });
  });
});

describe('JSON routes take JSON only', () => {
  it.each(['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/json; charset=latin1'])('refuses a body sent as %s with 400 invalid_request naming application/json', async (type) => {
    const response = await post(`${server.base}/observe`, observation, type);
    expect(response.status).toBe(400);
    const body = (await response.json()) as Record<string, string>;
    expect(body).toMatchObject({ code: 'invalid_request', request_id: expect.any(String) });
    expect(body.error).toContain('application/json');
  });

  it('refuses a body without a Content-Type', async () => {
    const response = await fetch(`${server.url}${server.base}/observe`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.key}` },
      body: new Blob([observation]),
    });
    expect(response.status).toBe(400);
  });

  it.each(['application/json', 'application/json; charset=utf-8', 'Application/JSON;charset="UTF-8"', 'application/merge-patch+json'])('reads a body sent as %s', async (type) => {
    const response = await post(`${server.base}/observe`, observation, type);
    expect([202, 429]).toContain(response.status);
  });

  it('accepts an empty optional body without a Content-Type', async () => {
    const response = await fetch(`${server.url}/v1/agents/${server.agentId}/threads`, { method: 'POST', headers: { authorization: `Bearer ${server.key}` } });
    expect(response.status).toBe(201);
  });
});
