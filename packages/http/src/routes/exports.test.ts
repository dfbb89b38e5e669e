import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryService, fileSystemBlobs, inMemoryStore, silentLogger, splitLines, type MemoryService } from '@memory-agents/core';
import { createFetchHandler } from '../create-fetch-handler.js';
import { createHandler } from '../create-handler.js';

const services: MemoryService[] = [];
afterEach(async () => {
  for (const service of services.splice(0)) await service.stop();
});

async function organization(service: MemoryService, name: string) {
  const org = await service.admin.createOrganization({ name });
  const { key } = await service.admin.createKey({ organizationId: org.organizationId });
  return { organizationId: org.organizationId, key };
}

describe('export jobs over HTTP (POST/GET /v1/agents/{agent_id}/exports...)', () => {
  it('starts an export (202, exp_), reports it ready, serves the JSON lines; other organizations get 404', async () => {
    const service = createMemoryService({ store: inMemoryStore(), logger: silentLogger });
    services.push(service);
    await service.start();
    const acme = await organization(service, 'Acme');
    const other = await organization(service, 'Other');
    const api = createFetchHandler(service, { logger: silentLogger });
    const call = async (key: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
      const response = await api(new Request(`http://host${path}`, { method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) }));
      const text = await response.text();
      return { status: response.status, type: response.headers.get('content-type'), text, body: response.headers.get('content-type')?.startsWith('application/json') ? (JSON.parse(text) as any) : undefined };
    };
    const agent = (await call(acme.key, 'POST', '/v1/agents', { agent_config: { role: 'r', objective: 'o' } })).body.agent_id as string;
    await service.idle();
    const thread = (await call(acme.key, 'POST', `/v1/agents/${agent}/threads`, {})).body.thread_id as string;
    await call(acme.key, 'POST', `/v1/agents/${agent}/threads/${thread}/observe`, { observations: [{ speaker: 'ana', content: [{ type: 'text', text: 'Invoices go to billing@acme.test.' }] }] });
    await service.idle();

    const started = await call(acme.key, 'POST', `/v1/agents/${agent}/exports`, { vectors: false });
    expect(started.status).toBe(202);
    expect(started.body).toMatchObject({ export_id: expect.stringMatching(/^exp_/), agent_id: agent, status: 'running', vectors: false });
    const exportId = started.body.export_id as string;
    await service.idle();
    const status = await call(acme.key, 'GET', `/v1/agents/${agent}/exports/${exportId}`);
    expect(status.status).toBe(200);
    expect(status.body).toMatchObject({ status: 'ready', lines: expect.any(Number), bytes: expect.any(Number), error: null });
    const file = await call(acme.key, 'GET', `/v1/agents/${agent}/exports/${exportId}/download`);
    expect(file.status).toBe(200);
    expect(file.type).toBe('application/x-ndjson');
    const lines = file.text.trimEnd().split('\n').map((l) => JSON.parse(l) as { type: string });
    expect(lines).toHaveLength(status.body.lines);
    expect(lines[0]).toMatchObject({ type: 'memory-agents-export', agentId: agent, vectors: false });
    expect(lines.some((l) => l.type === 'memory')).toBe(true);

    // The file imports (into the other organization).
    const imported = await service.admin.importAgent({ organizationId: other.organizationId, open: () => splitLines([file.text]) });
    expect(imported.fromAgentId).toBe(agent);

    // Tenancy: another organization's key gets 404 for the agent and its export.
    expect((await call(other.key, 'GET', `/v1/agents/${agent}/exports/${exportId}`)).status).toBe(404);
    expect((await call(other.key, 'GET', `/v1/agents/${agent}/exports/${exportId}/download`)).status).toBe(404);
    expect((await call(other.key, 'POST', `/v1/agents/${agent}/exports`)).status).toBe(404);
    // An export id of another agent of the same organization, or an unknown one: 404.
    const second = (await call(acme.key, 'POST', '/v1/agents', { agent_config: { role: 'r', objective: 'o' } })).body.agent_id as string;
    await service.idle();
    expect((await call(acme.key, 'GET', `/v1/agents/${second}/exports/${exportId}`)).body).toMatchObject({ code: 'not_found' });
    expect((await call(acme.key, 'GET', `/v1/agents/${agent}/exports/exp_nope`)).status).toBe(404);
    // One person's view (X-SP-End-User) may not export every thread; a wrong body is 422.
    expect((await call(acme.key, 'POST', `/v1/agents/${agent}/exports`, undefined, { 'x-sp-end-user': 'ana' })).status).toBe(403);
    expect((await call(acme.key, 'POST', `/v1/agents/${agent}/exports`, { vectors: 'no' })).status).toBe(422);
    // Without a body: vectors included.
    const full = await call(acme.key, 'POST', `/v1/agents/${agent}/exports`);
    expect(full.body).toMatchObject({ status: 'running', vectors: true });
    await service.idle();
  });
});

describe('export download streamed (issue 41)', () => {
  it('the node handler sends a multi-chunk export file read from the blob store as it is written, with its Content-Length, and a client going away mid-file leaves the server answering', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'export-download-'));
    const service = createMemoryService({ store: inMemoryStore(), blobs: fileSystemBlobs({ directory }), logger: silentLogger });
    services.push(service);
    await service.start();
    const acme = await organization(service, 'Acme');
    const server = createServer(createHandler(service, { logger: silentLogger }));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const call = (method: string, path: string, body?: unknown) =>
        fetch(`${base}${path}`, { method, headers: { authorization: `Bearer ${acme.key}`, 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
      const agent = ((await (await call('POST', '/v1/agents', { agent_config: { role: 'r', objective: 'o' } })).json()) as { agent_id: string }).agent_id;
      await service.idle();
      const thread = ((await (await call('POST', `/v1/agents/${agent}/threads`, {})).json()) as { thread_id: string }).thread_id;
      const observations = Array.from({ length: 80 }, (_, i) => ({ speaker: 'ana', content: [{ type: 'text', text: `Note ${i}: the ferry to island ${i} leaves at ${i % 12} o'clock from pier ${i * 3}.` }] }));
      expect((await call('POST', `/v1/agents/${agent}/threads/${thread}/observe`, { observations })).status).toBe(202);
      await service.idle();
      const exportId = ((await (await call('POST', `/v1/agents/${agent}/exports`)).json()) as { export_id: string }).export_id;
      await service.idle();
      const status = (await (await call('GET', `/v1/agents/${agent}/exports/${exportId}`)).json()) as { status: string; bytes: number; lines: number };
      expect(status.status).toBe('ready');
      expect(status.bytes).toBeGreaterThan(3 * 64 * 1024);

      const download = await call('GET', `/v1/agents/${agent}/exports/${exportId}/download`);
      expect(download.status).toBe(200);
      expect(download.headers.get('content-length')).toBe(String(status.bytes));
      const bytes = new Uint8Array(await download.arrayBuffer());
      expect(bytes.length).toBe(status.bytes);
      const lines = new TextDecoder().decode(bytes).trimEnd().split('\n');
      expect(lines).toHaveLength(status.lines);
      expect(JSON.parse(lines.at(-1)!)).toMatchObject({ type: 'end' });

      // A client that reads one chunk and goes away: the server stops reading and keeps answering.
      const controller = new AbortController();
      const partial = await fetch(`${base}/v1/agents/${agent}/exports/${exportId}/download`, { headers: { authorization: `Bearer ${acme.key}` }, signal: controller.signal });
      const reader = partial.body!.getReader();
      expect((await reader.read()).done).toBe(false);
      controller.abort();
      await reader.read().catch(() => undefined);
      const again = await call('GET', `/v1/agents/${agent}/exports/${exportId}/download`);
      expect((await again.arrayBuffer()).byteLength).toBe(status.bytes);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await rm(directory, { recursive: true, force: true });
    }
  });
});
