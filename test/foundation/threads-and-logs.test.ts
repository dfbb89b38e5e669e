import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, errorShape, readyAgent, type Client } from '../support/client.js';
import { removeDataDir, runCli, startServerProcess, type ServerProcess } from '../support/server.js';

let server: ServerProcess;
let api: Client;
let agentId: string;
const ALICE = { 'x-sp-end-user': 'alice' };
const BOB = { 'x-sp-end-user': 'bob' };

beforeAll(async () => {
  server = await startServerProcess();
  api = client(server.url, server.key);
  agentId = (await readyAgent(api)).agent_id;
});
afterAll(async () => {
  await server.stop();
  await removeDataDir(server.dataDir);
});

describe('threads', () => {
  it('creates a thread with 201 and defaults, and reads it with its messages', async () => {
    const created = await api.post(`/v1/agents/${agentId}/threads`, {});
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      agent_id: agentId,
      thread_id: expect.stringMatching(/^thread_[0-9A-HJKMNP-TV-Z]{26}$/),
      status: 'ready',
      created_at: expect.any(String),
      updated_at: expect.any(String),
      title: 'Untitled',
      metadata: {},
      messages: [],
    });
    const read = await api.get(`/v1/agents/${agentId}/threads/${created.body.thread_id}`);
    expect(read.status).toBe(200);
    expect(read.body).toEqual(created.body);
    const noBody = await api.call('POST', `/v1/agents/${agentId}/threads`);
    expect(noBody.status).toBe(201);
  });

  it('validates title and metadata at their edges with 422', async () => {
    const path = `/v1/agents/${agentId}/threads`;
    // A subject of its own: thread creation is limited to 5 per 10 s per subject (spec "Limits").
    const as = { headers: { 'x-sp-end-user': 'validator' } };
    expect((await api.post(path, { title: 't'.repeat(200), metadata: { a: 1 } }, as)).status).toBe(201);
    expect((await api.post(path, { title: 't'.repeat(201) }, as)).status).toBe(422);
    expect((await api.post(path, { title: '' }, as)).status).toBe(422);
    expect((await api.post(path, { metadata: Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`k${i}`, i])) }, as)).status).toBe(201);
    const tooMany = await api.post(path, { metadata: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, i])) }, as);
    expect(errorShape(tooMany)).toMatchObject({ status: 422, code: 'invalid_request' });
  });

  it('narrows threads to the person who created them; no header reaches all', async () => {
    const alices = await api.post(`/v1/agents/${agentId}/threads`, { title: 'alice' }, { headers: ALICE });
    const bobs = await api.post(`/v1/agents/${agentId}/threads`, { title: 'bob' }, { headers: BOB });
    const path = (thread: string) => `/v1/agents/${agentId}/threads/${thread}`;

    expect((await api.get(path(alices.body.thread_id), { headers: ALICE })).status).toBe(200);
    expect(errorShape(await api.get(path(alices.body.thread_id), { headers: BOB }))).toMatchObject({ status: 404, code: 'thread_not_found' });
    expect((await api.get(path(alices.body.thread_id))).status).toBe(200);

    const asAlice = await api.get(`/v1/agents/${agentId}`, { headers: ALICE });
    expect(asAlice.body.threads.map((t: { thread_id: string }) => t.thread_id)).toEqual([alices.body.thread_id]);
    const asOrg = await api.get(`/v1/agents/${agentId}`);
    const all = asOrg.body.threads.map((t: { thread_id: string }) => t.thread_id);
    expect(all).toEqual(expect.arrayContaining([alices.body.thread_id, bobs.body.thread_id]));
    expect(all.indexOf(bobs.body.thread_id)).toBeLessThan(all.indexOf(alices.body.thread_id));
    expect(asOrg.body.threads[0].messages).toBeUndefined();

    // A thread created without the header is not any one person's.
    const orgThread = await api.post(`/v1/agents/${agentId}/threads`, {});
    expect((await api.get(path(orgThread.body.thread_id), { headers: ALICE })).status).toBe(404);
    expect((await api.delete(path(alices.body.thread_id), { headers: BOB })).status).toBe(404);
  });

  it('deletes a thread with 202, then it is 404', async () => {
    const thread = await api.post(`/v1/agents/${agentId}/threads`, {}, { headers: { 'x-sp-end-user': 'deleter' } });
    const path = `/v1/agents/${agentId}/threads/${thread.body.thread_id}`;
    const deleted = await api.delete(path);
    expect(deleted.status).toBe(202);
    expect(deleted.body).toEqual({ agent_id: agentId, thread_id: thread.body.thread_id, status: 'deleting' });
    expect(errorShape(await api.get(path))).toMatchObject({ status: 404, code: 'thread_not_found' });
    expect((await api.get(`/v1/agents/${agentId}`)).body.threads.map((t: { thread_id: string }) => t.thread_id)).not.toContain(thread.body.thread_id);
  });

  it('answers thread_not_found for a thread of another agent or a malformed id', async () => {
    const otherAgent = await readyAgent(api);
    const thread = await api.post(`/v1/agents/${otherAgent.agent_id}/threads`, {}, { headers: { 'x-sp-end-user': 'other' } });
    expect((await api.get(`/v1/agents/${agentId}/threads/${thread.body.thread_id}`)).body.code).toBe('thread_not_found');
    expect((await api.get(`/v1/agents/${agentId}/threads/thread_nope`)).body.code).toBe('thread_not_found');
  });

  it('keeps another organization out of threads with 404s', async () => {
    const org = JSON.parse((await runCli(['orgs', 'create', '--name', 'Intruder', '--data', server.dataDir, '--json'])).stdout);
    const key = JSON.parse((await runCli(['keys', 'create', '--org', org.organization_id, '--data', server.dataDir, '--json'])).stdout);
    const intruder = client(server.url, key.key);
    const thread = await api.post(`/v1/agents/${agentId}/threads`, {}, { headers: { 'x-sp-end-user': 'owner' } });
    const response = await intruder.get(`/v1/agents/${agentId}/threads/${thread.body.thread_id}`);
    expect(errorShape(response)).toMatchObject({ status: 404, code: 'agent_not_found' });
  });
});

describe('activity logs', () => {
  it('records who did what in which thread, newest first, never with message text, and pages with a cursor', async () => {
    const agent = await readyAgent(api);
    const thread = await api.post(`/v1/agents/${agent.agent_id}/threads`, { title: 'secret title text' }, { headers: ALICE });
    const alice = (await api.get('/v1/session', { headers: ALICE })).body.user.id;
    const first = await api.get(`/v1/agents/${agent.agent_id}/logs?limit=1`);
    expect(first.status).toBe(200);
    expect(first.body.entries).toEqual([
      {
        log_id: expect.any(Number),
        user_id: alice,
        actor_email: '',
        actor_display_name: 'partner key',
        direction: 'user',
        route: 'thread_create',
        created_at: expect.any(String),
        thread_id: thread.body.thread_id,
        request_id: thread.headers.get('x-request-id'),
      },
    ]);
    expect(first.body.next_cursor).not.toBe('');
    const second = await api.get(`/v1/agents/${agent.agent_id}/logs?limit=1&cursor=${first.body.next_cursor}`);
    expect(second.body.entries).toHaveLength(1);
    expect(second.body.entries[0]).toMatchObject({ route: 'agent_create', thread_id: '', user_id: expect.stringMatching(/^org_/) });
    expect(second.body.next_cursor).toBe('');
    expect(JSON.stringify([first.body, second.body])).not.toContain('secret title text');
  });

  it('refuses limit outside 1..100 and a foreign cursor with 400', async () => {
    for (const query of ['limit=0', 'limit=101', 'limit=abc', 'cursor=xyz', `cursor=${'9'.repeat(2049)}`]) {
      const response = await api.get(`/v1/agents/${agentId}/logs?${query}`);
      expect(errorShape(response), query).toMatchObject({ status: 400, code: 'invalid_request' });
    }
    expect((await api.get(`/v1/agents/${agentId}/logs?limit=100`)).status).toBe(200);
    expect((await api.get(`/v1/agents/${agentId}/logs?limit=1`)).status).toBe(200);
  });
});
