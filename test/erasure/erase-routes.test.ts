import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, MemoryAgentsError } from '@memory-agents/client';
import { silentLogger } from '@memory-agents/core';
import { startServer, type RunningServer } from '@memory-agents/server';
import { client, type Client } from '../support/client.js';

/** The erasure routes over HTTP: the typed client, bad input (422/400, never 500) and the tenancy matrix (404, never a hint). */
let dataDir = '';
let server: RunningServer;
let owner: Client;
let stranger: Client;
let key = '';
let agentId = '';
let anaThread = '';

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'ma-erase-routes-'));
  server = await startServer({ dataDir, port: 0, logger: silentLogger });
  const mint = async (name: string) => {
    const org = await server.service.admin.createOrganization({ name });
    return (await server.service.admin.createKey({ organizationId: org.organizationId })).key;
  };
  key = await mint('Owner');
  owner = client(server.url, key);
  stranger = client(server.url, await mint('Stranger'));
  agentId = (await owner.post('/v1/agents', { agent_config: { role: 'assistant', objective: 'remember' } })).body.agent_id;
  await server.service.idle();
  anaThread = (await owner.post(`/v1/agents/${agentId}/threads`, {}, { headers: { 'x-sp-end-user': 'ana' } })).body.thread_id;
  await owner.post(`/v1/agents/${agentId}/threads/${anaThread}/observe`, { observations: [{ speaker: 'ana', content: [{ type: 'text', text: 'Ana keeps bees.' }] }] }, { headers: { 'x-sp-end-user': 'ana' } });
  await server.service.idle();
}, 60_000);
afterAll(async () => {
  await server?.close();
  await rm(dataDir, { recursive: true, force: true });
});

const expectError = (response: { status: number; body: any }, status: number, code: string) => {
  expect(response.status).toBe(status);
  expect(response.body).toMatchObject({ code, error: expect.any(String), request_id: expect.any(String) });
};

describe('POST .../memories/erase and GET .../erasures/{erasure_id}', () => {
  it('refuses bad input with the spec\'s error shape', async () => {
    const path = `/v1/agents/${agentId}/memories/erase`;
    for (const body of [{}, { thread_id: anaThread, end_user_id: 'ana' }, { thread_id: 'thread_nope' }, { observation_id: 'obs_1' }, { source_id: 'src_x' }, { end_user_id: 'ana', since: 'now' }, { end_user_id: 7 }]) {
      expectError(await owner.post(path, body), 422, 'invalid_request');
    }
    expectError(await owner.post(path, undefined, { rawBody: '{"thread_id":' }), 400, 'invalid_request');
    expectError(await owner.get(`/v1/agents/${agentId}/erasures/not-an-id`), 404, 'not_found');
  });

  it('answers 404 for what the caller does not reach, as for ids that do not exist', async () => {
    const path = `/v1/agents/${agentId}/memories/erase`;
    expectError(await stranger.post(path, { thread_id: anaThread }), 404, 'agent_not_found');
    expectError(await owner.post(path, { thread_id: anaThread }, { headers: { 'x-sp-end-user': 'bob' } }), 404, 'thread_not_found');
    expectError(await owner.post(path, { thread_id: 'thread_01J00000000000000000000000' }, { headers: { 'x-sp-end-user': 'bob' } }), 404, 'thread_not_found');
    expectError(await owner.post(path, { end_user_id: 'ana' }, { headers: { 'x-sp-end-user': 'bob' } }), 404, 'not_found');
    expectError(await owner.post(path, { end_user_id: 'nobody' }, { headers: { 'x-sp-end-user': 'bob' } }), 404, 'not_found');
    expectError(await owner.post(path, { observation_id: 'obs_01J00000000000000000000000' }), 404, 'not_found');
    expectError(await owner.post(path, { source_id: `src_${'a'.repeat(32)}` }), 404, 'not_found');

    const accepted = await owner.post(path, { end_user_id: 'nobody' });
    expect(accepted.status).toBe(202);
    await server.service.idle();
    const erasure = `/v1/agents/${agentId}/erasures/${accepted.body.erasure_id}`;
    expect((await owner.get(erasure)).body).toMatchObject({ status: 'completed', counts: { threads: 0 } });
    expectError(await stranger.get(erasure), 404, 'agent_not_found');
    expectError(await owner.get(erasure, { headers: { 'x-sp-end-user': 'ana' } }), 404, 'not_found');
    expectError(await owner.get(`/v1/agents/${agentId}/erasures/era_01J00000000000000000000000`), 404, 'not_found');
  });

  it('works through the typed client, narrowed to the end user', async () => {
    const ana = createClient({ baseUrl: server.url, apiKey: key, endUser: 'ana' });
    const accepted = await ana.erasures.erase({ agentId, end_user_id: 'ana' });
    expect(accepted).toMatchObject({ status: 'queued', target: { kind: 'end_user' } });
    const done = await ana.erasures.waitUntilDone({ agentId, erasureId: accepted.erasure_id });
    expect(done).toMatchObject({ status: 'completed', counts: { threads: 1 } });
    expect(done.counts.memories).toBeGreaterThan(0);
    const gone = await ana.threads.get({ agentId, threadId: anaThread }).catch((error: unknown) => error);
    expect(gone instanceof MemoryAgentsError && gone.status).toBe(404);
  });
});
