import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, errorShape, readyAgent, type Client } from '../support/client.js';
import { removeDataDir, runCli, startServerProcess, type ServerProcess } from '../support/server.js';
import { asPerson, ask, filler, newThread, observeAndSettle, pollStatus, said, threadPaths } from './learning-support.js';

let server: ServerProcess;
let api: Client;
let other: Client;
const ALICE = { 'x-sp-end-user': 'alice' };
const BOB = { 'x-sp-end-user': 'bob' };
const STATUS_KEYS = ['agent_id', 'error', 'learning', 'observation_id', 'queue_depth', 'queued', 'resumed_at', 'status', 'thread_id', 'turns_processed', 'turns_total'];

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

/** A job big enough to still be running after a few requests: 100 observations of 30,000 characters. */
const bigJob = () => Array.from({ length: 100 }, (_, i) => said(filler(30_000, i)));

describe('observe: validation', () => {
  let agentId: string;
  let threadId: string;
  let paths: ReturnType<typeof threadPaths>;
  beforeAll(async () => {
    agentId = (await readyAgent(api)).agent_id;
    threadId = await newThread(api, agentId);
    paths = threadPaths(agentId, threadId);
  });

  const refused = async (body: unknown) => {
    const response = await asPerson(api).post(paths.observe, body);
    expect(errorShape(response)).toEqual({ status: 422, code: 'invalid_request', keys: ['code', 'error', 'request_id'], requestIdMatches: true });
  };

  it('accepts 1 and 100 observations, refuses 0 and 101 with 422', async () => {
    expect((await observeAndSettle(api, agentId, threadId, [said('one')])).status).toBe('committed');
    const hundred = await observeAndSettle(api, agentId, threadId, Array.from({ length: 100 }, (_, i) => said(`observation number ${i}`)));
    expect(hundred).toMatchObject({ status: 'committed', turns_total: 100, turns_processed: 100 });
    await refused({ observations: [] });
    await refused({ observations: Array.from({ length: 101 }, (_, i) => said(`o${i}`)) });
    await refused({});
    await refused({ observations: 'hello' });
  });

  it('accepts 20 blocks and 100,000 characters per block; refuses 21 blocks, 100,001 characters and an empty content', async () => {
    const blocks = (n: number) => ({ content: Array.from({ length: n }, (_, i) => ({ type: 'text', text: `block ${i}` })) });
    expect((await observeAndSettle(api, agentId, threadId, [blocks(20)])).status).toBe('committed');
    await refused({ observations: [blocks(21)] });
    await refused({ observations: [blocks(0)] });
    expect((await observeAndSettle(api, agentId, threadId, [said(filler(100_000))])).status).toBe('committed');
    await refused({ observations: [said(filler(100_001))] });
  });

  it('accepts img_url of 2,048 characters and refuses 2,049', async () => {
    const url = (length: number) => `https://example.com/${'a'.repeat(length - 20)}`;
    expect(url(2048)).toHaveLength(2048);
    const ok = await observeAndSettle(api, agentId, threadId, [{ content: [{ type: 'text', text: 'a picture', img_url: url(2048) }] }]);
    expect(ok.status).toBe('committed');
    await refused({ observations: [{ content: [{ type: 'text', text: 'a picture', img_url: url(2049) }] }] });
  });

  it('takes speaker, timestamp and tags as optional, and refuses unknown fields and block types', async () => {
    const full = await observeAndSettle(api, agentId, threadId, [said('with everything', { speaker: 'Dana', timestamp: '2024-05-08T10:00:00Z', tags: ['a', 'b'] })]);
    expect(full.status).toBe('committed');
    expect((await observeAndSettle(api, agentId, threadId, [said('with nothing')])).status).toBe('committed');
    await refused({ observations: [said('x', { mood: 'happy' })] });
    await refused({ observations: [said('x')], extra: true });
    await refused({ observations: [{ content: [{ type: 'text', text: 'x', lang: 'en' }] }] });
    await refused({ observations: [{ content: [{ type: 'image', text: 'x' }] }] });
    await refused({ observations: [said('x', { timestamp: 'yesterday' })] });
    await refused({ observations: [said('x', { speaker: '' })] });
  });

  it('answers 404 for an unknown thread, another person\'s thread, another organization\'s thread and an unknown observation', async () => {
    const unknown = await api.post(`/v1/agents/${agentId}/threads/thread_01ARZ3NDEKTSV4RRFFQ69G5FAV/observe`, { observations: [said('x')] });
    expect(errorShape(unknown)).toMatchObject({ status: 404, code: 'thread_not_found' });
    const alices = await newThread(api, agentId, ALICE);
    const asBob = await api.post(threadPaths(agentId, alices).observe, { observations: [said('x')] }, { headers: BOB });
    expect(errorShape(asBob)).toMatchObject({ status: 404, code: 'thread_not_found' });
    const asOther = await other.post(paths.observe, { observations: [said('x')] });
    expect(asOther.status).toBe(404);
    expect(['agent_not_found', 'thread_not_found']).toContain(asOther.body.code);
    const unknownJob = await api.get(paths.status('obs_01ARZ3NDEKTSV4RRFFQ69G5FAV'));
    expect(errorShape(unknownJob)).toMatchObject({ status: 404, code: 'not_found' });
    // Alice reaches her own job; Bob and the other organization do not.
    const settled = await observeAndSettle(api, agentId, alices, [said('alice says hi')], ALICE);
    expect((await api.get(threadPaths(agentId, alices).status(settled.observation_id), { headers: BOB })).status).toBe(404);
    expect((await other.get(threadPaths(agentId, alices).status(settled.observation_id))).status).toBe(404);
    // A job is only found under its own thread.
    expect((await api.get(paths.status(settled.observation_id))).status).toBe(404);
  });
});

describe('observe: acceptance, status and the ingestion slot', () => {
  it('answers 202 with exactly the spec body, and the status has exactly the spec properties', async () => {
    const me = asPerson(api);
    const agentId = (await readyAgent(me)).agent_id;
    const threadId = await newThread(me, agentId);
    const paths = threadPaths(agentId, threadId);
    const accepted = await me.post(paths.observe, { observations: [said('Hello there.'), said('General Kenobi.')] });
    expect(accepted.status).toBe(202);
    expect(accepted.body).toEqual({ agent_id: agentId, thread_id: threadId, observation_id: expect.stringMatching(/^obs_[0-9A-HJKMNP-TV-Z]{26}$/), accepted: true });
    expect(accepted.headers.get('x-request-id')).toMatch(/\S/);
    const first = await me.get(paths.status(accepted.body.observation_id));
    expect(first.status).toBe(200);
    expect(Object.keys(first.body).sort()).toEqual(STATUS_KEYS);
    const done = await pollStatus(me, paths.status(accepted.body.observation_id));
    expect(done).toEqual({
      agent_id: agentId,
      thread_id: threadId,
      observation_id: accepted.body.observation_id,
      status: 'committed',
      turns_total: 2,
      turns_processed: 2,
      queue_depth: 0,
      error: null,
      queued: false,
      resumed_at: null,
      learning: null,
    });
  });

  it('holds the agent\'s one slot across all its threads until the job is committed (429, Retry-After: 1)', async () => {
    const me = asPerson(api);
    const agentId = (await readyAgent(me)).agent_id;
    const threadA = await newThread(me, agentId);
    const threadB = await newThread(me, agentId);
    const big = await me.post(threadPaths(agentId, threadA).observe, { observations: bigJob() });
    expect(big.status).toBe(202);
    const bigStatus = threadPaths(agentId, threadA).status(big.body.observation_id);

    // Right after the 202 the job cannot have learned 3 MB of text: the slot is taken.
    const busy = await me.post(threadPaths(agentId, threadB).observe, { observations: [said('in another thread')] });
    expect(errorShape(busy)).toEqual({ status: 429, code: 'rate_limit_exceeded', keys: ['code', 'details', 'error', 'request_id'], requestIdMatches: true });
    expect(busy.headers.get('retry-after')).toBe('1');
    expect(Number(busy.headers.get('x-ratelimit-reset'))).toBeGreaterThanOrEqual(Math.floor(Date.now() / 1000));
    expect(busy.body.details).toBe('capacity');
    expect((await me.post(threadPaths(agentId, threadA).observe, { observations: [said('same thread')] })).status).toBe(429);

    // While polling: an observe is refused for as long as the job is not committed, also once
    // every turn is read (turns_processed reaches turns_total before committed).
    let refusals = 0;
    let processed = 0;
    // A few attempts only, spread over the job, so the per-subject observe window is not what refuses.
    for (let poll = 0; ; poll++) {
      const before = (await me.get(bigStatus)).body;
      expect(before.learning).toBeNull();
      expect(before.turns_total).toBe(100);
      expect(before.turns_processed).toBeGreaterThanOrEqual(processed);
      expect(before.turns_processed).toBeLessThanOrEqual(100);
      processed = before.turns_processed;
      if (before.status === 'committed') break;
      expect(['queued', 'processing']).toContain(before.status);
      if (poll % 10 !== 0 || refusals >= 8) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        continue;
      }
      const attempt = await me.post(threadPaths(agentId, threadB).observe, { observations: [said('again')] });
      if (attempt.status === 429) {
        refusals++;
        expect(attempt.headers.get('retry-after')).toBe('1');
      } else {
        // Accepted only if the big job committed in between.
        expect(attempt.status).toBe(202);
        expect((await me.get(bigStatus)).body.status).toBe('committed');
        await pollStatus(me, threadPaths(agentId, threadB).status(attempt.body.observation_id));
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(refusals).toBeGreaterThan(0);
    expect((await pollStatus(me, bigStatus)).status).toBe('committed');
    const after = await observeAndSettle(me, agentId, threadB, [said('now it is free')]);
    expect(after.status).toBe('committed');
    // Another agent of the organization was never blocked.
    const otherAgent = (await readyAgent(me)).agent_id;
    expect((await observeAndSettle(me, otherAgent, await newThread(me, otherAgent), [said('unrelated')])).status).toBe('committed');
  });

  it('queues answering jobs FIFO behind a running observe on the thread (queue_depth counts the jobs ahead)', async () => {
    const me = asPerson(api);
    const agentId = (await readyAgent(me)).agent_id;
    const threadId = await newThread(me, agentId);
    const paths = threadPaths(agentId, threadId);
    const big = await me.post(paths.observe, { observations: bigJob() });
    expect(big.status).toBe(202);
    const first = await me.post(paths.enrich, ask('first queued message about lagoons'));
    const second = await me.post(paths.enrich, ask('second queued message about meadows'));
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    const secondStatus = (await me.get(paths.status(second.body.observation_id))).body;
    const firstStatus = (await me.get(paths.status(first.body.observation_id))).body;
    const bigNow = (await me.get(paths.status(big.body.observation_id))).body;
    if (bigNow.status !== 'committed') {
      // Nothing ahead could have finished while the big job still runs.
      expect(secondStatus.queue_depth).toBe(2);
      expect(firstStatus.queue_depth).toBe(1);
      expect(secondStatus.status).toBe('queued');
    }
    // FIFO: when the last job is committed, every job ahead of it already was.
    const lastDone = await pollStatus(me, paths.status(second.body.observation_id));
    expect(lastDone).toMatchObject({ status: 'committed', queue_depth: 0, turns_total: 1, turns_processed: 1 });
    expect((await me.get(paths.status(first.body.observation_id))).body.status).toBe('committed');
    expect((await me.get(paths.status(big.body.observation_id))).body).toMatchObject({ status: 'committed', queue_depth: 0 });
  });

  it('keeps the array order: turn n of the request is cited as turn n', async () => {
    const me = asPerson(api);
    const agentId = (await readyAgent(me)).agent_id;
    const threadId = await newThread(me, agentId);
    const facts = ['The falcon nests on the north tower.', 'The heron fishes in the moat.', 'The raven guards the cellar door.', 'The swallow sleeps under the bridge.', 'The owl hunts over the orchard.'];
    const settled = await observeAndSettle(me, agentId, threadId, facts.map((fact) => said(fact)));
    expect(settled.status).toBe('committed');
    for (const [i, bird] of ['falcon', 'heron', 'raven', 'swallow', 'owl'].entries()) {
      const answer = await me.post(threadPaths(agentId, threadId).chat, ask(`Where is the ${bird}?`, { answer_length: 'brief' }));
      expect(answer.status).toBe(200);
      expect(answer.body.message).toContain(facts[i]!.slice(0, -1));
      const citation = answer.body.citations.find((c: { label: string }) => c.label.endsWith(`(turn ${i + 1})`));
      expect(citation).toMatchObject({ source_id: settled.observation_id, verified: true });
    }
  });
});

describe('restore_from', () => {
  it('gives the new agent the memories of the other one and resumed_from_turn = turns it learned', async () => {
    const me = asPerson(api);
    const source = (await readyAgent(me)).agent_id;
    const thread = await newThread(me, source);
    const facts = ['Quentin keeps his bicycle in the blue shed.', 'The project codename is Marmalade.', 'Our office moved to Lisbon in March.'];
    expect((await observeAndSettle(me, source, thread, facts.map((fact) => said(fact)))).status).toBe('committed');
    expect((await observeAndSettle(me, source, thread, [said('The backup server is called Tortoise.')])).status).toBe('committed');

    const created = await me.post('/v1/agents', { agent_config: { role: 'assistant', objective: 'continue' }, restore_from: source });
    expect(created.status).toBe(202);
    const restored = await pollStatus(me, `/v1/agents/${created.body.agent_id}`, (agent) => agent.status === 'ready');
    expect(restored.resumed_from_turn).toBe(4);
    const restoredThread = await newThread(me, restored.agent_id);
    const answer = await me.post(threadPaths(restored.agent_id, restoredThread).chat, ask('What is the project codename?'));
    expect(answer.body.message).toContain('Marmalade');
    expect(answer.body.citations.length).toBeGreaterThan(0);

    // A restore of the restored agent counts what it restored plus what it learned itself.
    expect((await observeAndSettle(me, restored.agent_id, restoredThread, [said('The new codename is Quince.')])).status).toBe('committed');
    const again = await me.post('/v1/agents', { agent_config: { role: 'assistant', objective: 'continue' }, restore_from: restored.agent_id });
    const third = await pollStatus(me, `/v1/agents/${again.body.agent_id}`, (agent) => agent.status === 'ready');
    expect(third.resumed_from_turn).toBe(5);

    // A fresh agent starts at 0 and knows nothing of the others.
    const fresh = await readyAgent(me);
    expect(fresh.resumed_from_turn).toBe(0);
    const blank = await me.post(threadPaths(fresh.agent_id, await newThread(me, fresh.agent_id)).chat, ask('What is the project codename?'));
    expect(blank.body.message).not.toContain('Marmalade');
    expect(blank.body.citations).toEqual([]);
  });
});

describe('thread learning record', () => {
  it('is empty when everything was learned, pages with limit 1 to 100, and refuses other limits and cursors with 400', async () => {
    const me = asPerson(api);
    const agentId = (await readyAgent(me)).agent_id;
    const threadId = await newThread(me, agentId);
    const paths = threadPaths(agentId, threadId);
    expect((await observeAndSettle(me, agentId, threadId, [said('all of this is learned')])).status).toBe('committed');
    const record = await me.get(paths.learning);
    expect(record.status).toBe(200);
    expect(record.body).toEqual({ agent_id: agentId, thread_id: threadId, entries: [], next_cursor: null });
    for (const query of ['?limit=1', '?limit=100', '?limit=50&cursor=12']) expect((await me.get(`${paths.learning}${query}`)).status).toBe(200);
    for (const query of ['?limit=0', '?limit=101', '?limit=x', '?cursor=abc', '?cursor=0']) {
      expect(errorShape(await me.get(`${paths.learning}${query}`))).toMatchObject({ status: 400, code: 'invalid_request' });
    }
    expect(errorShape(await other.get(paths.learning))).toMatchObject({ status: 404 });
    expect(errorShape(await asPerson(api).get(paths.learning))).toMatchObject({ status: 404, code: 'thread_not_found' });
  });
});
