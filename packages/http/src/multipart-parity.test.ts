import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryService, inMemoryStore, silentLogger, type MemoryService } from '@memory-agents/core';
import { createFetchHandler } from './create-fetch-handler.js';
import { createHandler } from './create-handler.js';
import { UNMETERED } from './reliability/test-server.js';

/**
 * Both bridges read multipart bodies with the one parser of the core: the same forms get the same
 * status and code through the node handler (over a socket) and the fetch handler (a Web Request).
 */
const LIMIT = 64 * 1024;
let service: MemoryService;
let server: Server;
let url = '';
let key = '';
let base = '';
let fetchApi: (request: Request) => Promise<Response>;

beforeAll(async () => {
  service = createMemoryService({ store: inMemoryStore(), logger: silentLogger });
  await service.start();
  const org = await service.admin.createOrganization({ name: 'Acme', limits: { rateLimits: UNMETERED, maxUploadBytes: LIMIT, maxImageBytes: LIMIT } as never });
  key = (await service.admin.createKey({ organizationId: org.organizationId })).key;
  server = createServer(createHandler(service, { logger: silentLogger }));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  fetchApi = createFetchHandler(service, { logger: silentLogger });
  const agent = (await (await fetch(`${url}/v1/agents`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: '{"agent_config":{"role":"r","objective":"o"}}' })).json()) as { agent_id: string };
  await service.idle();
  const thread = (await (await fetch(`${url}/v1/agents/${agent.agent_id}/threads`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: '{}' })).json()) as { thread_id: string };
  base = `/v1/agents/${agent.agent_id}/threads/${thread.thread_id}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await service.stop();
});

const part = (boundary: string, name: string, value: string, filename?: string) =>
  `--${boundary}\r\nContent-Disposition: form-data; name="${name}"${filename ? `; filename="${filename}"` : ''}\r\n${filename ? 'Content-Type: text/plain\r\n' : ''}\r\n${value}\r\n`;
const form = (boundary: string, ...parts: string[]) => `${parts.join('')}--${boundary}--\r\n`;

/** Each case: path, Content-Type and body, and the status and code both bridges answer. */
const CASES: { name: string; path: () => string; type: string; body: string; status: number; code: string }[] = [
  { name: 'file over the limit', path: () => `${base}/observe-file`, type: 'multipart/form-data; boundary=B', body: form('B', part('B', 'file', 'a'.repeat(LIMIT + 1), 'big.txt')), status: 413, code: 'document_too_large' },
  { name: 'image over the limit', path: () => '/v1/images', type: 'multipart/form-data; boundary=B', body: form('B', part('B', 'file', 'a'.repeat(LIMIT + 1), 'big.png')), status: 413, code: 'payload_too_large' },
  { name: 'no boundary', path: () => `${base}/observe-file`, type: 'multipart/form-data', body: 'x', status: 400, code: 'invalid_request' },
  { name: 'not multipart', path: () => `${base}/observe-file`, type: 'text/plain', body: 'hello', status: 400, code: 'invalid_request' },
  { name: 'truncated body', path: () => `${base}/observe-file`, type: 'multipart/form-data; boundary=B', body: part('B', 'file', 'abc', 'a.txt'), status: 400, code: 'invalid_request' },
  { name: 'unknown field', path: () => `${base}/observe-file`, type: 'multipart/form-data; boundary=B', body: form('B', part('B', 'colour', 'red'), part('B', 'file', 'abc', 'a.txt')), status: 400, code: 'invalid_request' },
  { name: 'file under another name', path: () => `${base}/observe-file`, type: 'multipart/form-data; boundary=B', body: form('B', part('B', 'upload', 'abc', 'a.txt')), status: 400, code: 'invalid_request' },
  { name: 'two files', path: () => '/v1/images', type: 'multipart/form-data; boundary=B', body: form('B', part('B', 'file', 'abc', 'a.png'), part('B', 'file', 'abc', 'b.png')), status: 400, code: 'invalid_request' },
  { name: 'no file', path: () => `${base}/observe-file`, type: 'multipart/form-data; boundary=B', body: form('B'), status: 422, code: 'invalid_request' },
];

describe('multipart through both bridges', () => {
  it.each(CASES)('$name: $status $code from the node and the fetch handler alike', async ({ path, type, body, status, code }) => {
    const headers = { authorization: `Bearer ${key}`, 'content-type': type };
    const node = await fetch(`${url}${path()}`, { method: 'POST', headers, body });
    const web = await fetchApi(new Request(`http://host${path()}`, { method: 'POST', headers, body }));
    const [nodeBody, webBody] = [(await node.json()) as { code: string; error: string }, (await web.json()) as { code: string; error: string }];
    expect({ status: node.status, code: nodeBody.code }).toEqual({ status, code });
    expect({ status: web.status, code: webBody.code }).toEqual({ status, code });
    expect(webBody.error).toBe(nodeBody.error);
  });

  it('reads the same file and fields through both', async () => {
    const body = form('B', part('B', 'file', 'The harbour crane was inspected on Monday.', 'notes.txt'));
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'multipart/form-data; boundary=B' };
    const node = await fetch(`${url}${base}/observe-file`, { method: 'POST', headers, body });
    const web = await fetchApi(new Request(`http://host${base}/observe-file`, { method: 'POST', headers, body }));
    expect(node.status).toBe(202);
    expect(web.status).toBe(202);
  });
});
