import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, errorShape, readyAgent, type Client } from '../support/client.js';
import { removeDataDir, runCli, startServerProcess, type ServerProcess } from '../support/server.js';
import { asPerson, newThread, observeAndSettle, said, threadPaths } from './learning-support.js';

// GET .../threads/{thread_id}/observations: an extension for the inspector, so a person can see a
// thread's observations without knowing their ids.

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

describe('listing a thread observations', () => {
  let agentId: string;
  let threadId: string;
  let list: string;
  const sent: string[] = [];
  let alice: Client;
  beforeAll(async () => {
    alice = asPerson(api, 'alice-observations');
    agentId = (await readyAgent(api)).agent_id;
    threadId = await newThread(alice, agentId);
    list = `${threadPaths(agentId, threadId).thread}/observations`;
    for (let i = 0; i < 3; i++) sent.push((await observeAndSettle(alice, agentId, threadId, [said(`Observation number ${i} about the garden.`)])).observation_id);
  });

  it('pages the observations newest first, each exactly as its status route answers it', async () => {
    const first = await alice.get(`${list}?limit=2`);
    expect(first.status).toBe(200);
    expect(first.body.observations.map((o: { observation_id: string }) => o.observation_id)).toEqual([sent[2], sent[1]]);
    const status = await alice.get(threadPaths(agentId, threadId).status(sent[2]!));
    expect(first.body.observations[0]).toEqual(status.body);
    expect(first.body.next_cursor).not.toBe('');
    const rest = await alice.get(`${list}?limit=2&cursor=${first.body.next_cursor}`);
    expect(rest.body.observations.map((o: { observation_id: string }) => o.observation_id)).toEqual([sent[0]]);
    expect(rest.body.next_cursor).toBe('');
    // limit at its bounds: 1 and 100
    expect((await alice.get(`${list}?limit=1`)).body.observations).toHaveLength(1);
    expect((await alice.get(`${list}?limit=100`)).body.observations).toHaveLength(3);
  });

  it('refuses a bad limit, a bad cursor and an unknown parameter with the spec error shape', async () => {
    for (const query of ['limit=0', 'limit=101', 'limit=x', 'other=1']) {
      expect(errorShape(await alice.get(`${list}?${query}`))).toMatchObject({ status: 400, code: 'invalid_request' });
    }
    expect(errorShape(await alice.get(`${list}?cursor=abc`))).toMatchObject({ status: 400, code: 'invalid_request' });
  });

  it('answers 404 to another organization and to another person, with no hint', async () => {
    expect(errorShape(await other.get(list))).toMatchObject({ status: 404, code: 'agent_not_found' });
    expect(errorShape(await asPerson(api, 'bob-observations').get(list))).toMatchObject({ status: 404, code: 'thread_not_found' });
    expect(errorShape(await alice.get(`/v1/agents/${agentId}/threads/thread_${'0'.repeat(26)}/observations`))).toMatchObject({ status: 404, code: 'thread_not_found' });
  });
});
