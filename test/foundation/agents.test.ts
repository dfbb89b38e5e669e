import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, errorShape, eventually, readyAgent, type Client } from '../support/client.js';
import { removeDataDir, runCli, startServerProcess, type ServerProcess } from '../support/server.js';

let server: ServerProcess;
let api: Client;
let other: Client;

beforeAll(async () => {
  server = await startServerProcess();
  api = client(server.url, server.key);
  const org = JSON.parse((await runCli(['orgs', 'create', '--name', 'Other', '--data', server.dataDir, '--json'])).stdout);
  const key = JSON.parse((await runCli(['keys', 'create', '--org', org.organization_id, '--data', server.dataDir, '--json'])).stdout);
  other = client(server.url, key.key);
});
afterAll(async () => {
  await server.stop();
  await removeDataDir(server.dataDir);
});

const config = { role: 'support assistant', objective: 'remember customer issues', metadata: { team: 'blue' } };

describe('agents', () => {
  it('creates an agent with 202 initializing, then it becomes ready', async () => {
    const created = await api.post('/v1/agents', { agent_config: config });
    expect(created.status).toBe(202);
    expect(created.body).toEqual({
      agent_id: expect.stringMatching(/^agent_[0-9A-HJKMNP-TV-Z]{26}$/),
      status: 'initializing',
      created_at: expect.any(String),
      updated_at: expect.any(String),
      access: 'owner',
      agent_config: config,
      expires_at: null,
      resumed_from_turn: 0,
      visibility: 'external',
      threads: [],
    });
    const ready = await eventually(async () => {
      const agent = await api.get(`/v1/agents/${created.body.agent_id}`);
      return agent.body.status === 'ready' ? agent.body : null;
    });
    expect(ready.agent_config).toEqual(config);
  });

  it('accepts visibility external and refuses any other visibility with 422', async () => {
    expect((await api.post('/v1/agents', { agent_config: config, visibility: 'external' })).body.visibility).toBe('external');
    expect(errorShape(await api.post('/v1/agents', { agent_config: config, visibility: 'internal' }))).toMatchObject({ status: 422, code: 'invalid_request' });
  });

  it('validates agent_config limits at their edges with 422', async () => {
    const cases: [Record<string, unknown>, number][] = [
      [{ role: 'r'.repeat(200), objective: 'o' }, 202],
      [{ role: 'r'.repeat(201), objective: 'o' }, 422],
      [{ role: '', objective: 'o' }, 422],
      [{ role: 'r', objective: 'o'.repeat(2000) }, 202],
      [{ role: 'r', objective: 'o'.repeat(2001) }, 422],
      [{ role: 'r', objective: '' }, 422],
      [{ role: 'r', objective: 'o', metadata: Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`k${i}`, i])) }, 202],
      [{ role: 'r', objective: 'o', metadata: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, i])) }, 422],
      [{ objective: 'o' }, 422],
      [{ role: 'r', objective: 'o', extra: true }, 422],
    ];
    for (const [agentConfig, status] of cases) {
      const response = await api.post('/v1/agents', { agent_config: agentConfig });
      expect(response.status, JSON.stringify(agentConfig).slice(0, 80)).toBe(status);
      if (status === 422) expect(response.body.code).toBe('invalid_request');
    }
    expect((await api.post('/v1/agents', {})).status).toBe(422);
    expect((await api.call('POST', '/v1/agents')).status).toBe(422);
  });

  it('lists live agents newest first', async () => {
    const first = await readyAgent(api, config);
    const second = await readyAgent(api, config);
    const list = await api.get('/v1/agents');
    expect(list.status).toBe(200);
    const ids = list.body.map((agent: { agent_id: string }) => agent.agent_id);
    expect(ids.indexOf(second.agent_id)).toBeLessThan(ids.indexOf(first.agent_id));
  });

  it('PATCH accepts an empty object and replaces agent_config whole', async () => {
    const agent = await readyAgent(api, config);
    const unchanged = await api.patch(`/v1/agents/${agent.agent_id}`, {});
    expect(unchanged.status).toBe(200);
    expect(unchanged.body.agent_config).toEqual(config);
    const replaced = await api.patch(`/v1/agents/${agent.agent_id}`, { agent_config: { role: 'new role', objective: 'new objective' } });
    expect(replaced.body.agent_config).toEqual({ role: 'new role', objective: 'new objective' });
    expect((await api.get(`/v1/agents/${agent.agent_id}`)).body.agent_config).toEqual({ role: 'new role', objective: 'new objective' });
    expect((await api.patch(`/v1/agents/${agent.agent_id}`, { agent_config: { role: 'x' } })).status).toBe(422);
    expect((await api.patch(`/v1/agents/${agent.agent_id}`, { status: 'ready' })).status).toBe(422);
  });

  it('deletes with 202 deleting, then the agent and its threads are 404 and it leaves the list', async () => {
    const agent = await readyAgent(api, config);
    const thread = await api.post(`/v1/agents/${agent.agent_id}/threads`, { title: 'to go' });
    expect(thread.status).toBe(201);
    const deleted = await api.delete(`/v1/agents/${agent.agent_id}`);
    expect(deleted.status).toBe(202);
    expect(deleted.body).toEqual({ agent_id: agent.agent_id, status: 'deleting' });
    expect(errorShape(await api.get(`/v1/agents/${agent.agent_id}`))).toMatchObject({ status: 404, code: 'agent_not_found' });
    expect((await api.get(`/v1/agents/${agent.agent_id}/threads/${thread.body.thread_id}`)).body.code).toBe('agent_not_found');
    expect((await api.delete(`/v1/agents/${agent.agent_id}`)).status).toBe(404);
    const list = await api.get('/v1/agents');
    expect(list.body.map((a: { agent_id: string }) => a.agent_id)).not.toContain(agent.agent_id);
  });

  it('answers 404 agent_not_found alike for another organization\'s agent and for an id that does not exist', async () => {
    const mine = await readyAgent(api, config);
    const theirs = await other.get(`/v1/agents/${mine.agent_id}`);
    const missing = await other.get('/v1/agents/agent_01HZZZZZZZZZZZZZZZZZZZZZZZ');
    const garbage = await other.get('/v1/agents/not-an-id');
    for (const response of [theirs, missing, garbage]) expect(errorShape(response)).toMatchObject({ status: 404, code: 'agent_not_found' });
    expect(theirs.body.error.replace(mine.agent_id, 'ID')).toBe(missing.body.error.replace('agent_01HZZZZZZZZZZZZZZZZZZZZZZZ', 'ID'));
    expect((await other.patch(`/v1/agents/${mine.agent_id}`, {})).status).toBe(404);
    expect((await other.delete(`/v1/agents/${mine.agent_id}`)).status).toBe(404);
    expect((await other.post(`/v1/agents/${mine.agent_id}/threads`, {})).body.code).toBe('agent_not_found');
    expect((await other.get(`/v1/agents/${mine.agent_id}/logs`)).body.code).toBe('agent_not_found');
    expect((await other.get('/v1/agents')).body.map((a: { agent_id: string }) => a.agent_id)).not.toContain(mine.agent_id);
  });

  it('refuses restore_from naming an agent the organization does not own', async () => {
    const mine = await readyAgent(api, config);
    const response = await other.post('/v1/agents', { agent_config: config, restore_from: mine.agent_id });
    expect(errorShape(response)).toMatchObject({ status: 404, code: 'agent_not_found' });
  });
});

describe('agent quota', () => {
  it('allows 100 live agents and refuses the 101st with 409 agent_quota_exceeded; deleted agents do not count', async () => {
    const org = JSON.parse((await runCli(['orgs', 'create', '--name', 'Quota', '--data', server.dataDir, '--json'])).stdout);
    const key = JSON.parse((await runCli(['keys', 'create', '--org', org.organization_id, '--data', server.dataDir, '--json'])).stdout);
    const quota = client(server.url, key.key);
    const ids: string[] = [];
    for (let i = 0; i < 100; i++) {
      const response = await quota.post('/v1/agents', { agent_config: { role: 'r', objective: `agent ${i}` } });
      expect(response.status).toBe(202);
      ids.push(response.body.agent_id);
    }
    const refused = await quota.post('/v1/agents', { agent_config: { role: 'r', objective: 'one too many' } });
    expect(errorShape(refused)).toMatchObject({ status: 409, code: 'agent_quota_exceeded', requestIdMatches: true });
    expect((await quota.delete(`/v1/agents/${ids[0]}`)).status).toBe(202);
    expect((await quota.post('/v1/agents', { agent_config: { role: 'r', objective: 'replacement' } })).status).toBe(202);
    expect((await quota.get('/v1/agents')).body).toHaveLength(100);
  });
});
