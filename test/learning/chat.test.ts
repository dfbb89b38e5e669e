import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, errorShape, readyAgent, type Client } from '../support/client.js';
import { removeDataDir, runCli, startServerProcess, type ServerProcess } from '../support/server.js';
import { asPerson, ask, filler, newThread, observeAndSettle, parseSse, pollStatus, said, threadPaths } from './learning-support.js';

let server: ServerProcess;
let api: Client;
let other: Client;
let agentId: string;
let learnedIn: string;
let learned: any;
const NOTHING = "I don't have anything in memory about that yet.";
const CHAT_KEYS = ['agent_id', 'citations', 'duration_ms', 'learning', 'memory_context', 'message', 'model', 'stages', 'thread_id', 'turn_id'];
const NIMBUS = [
  'Project Nimbus started in January 2024 with a budget of 40,000 euros.',
  'Project Nimbus is led by Priya Raman from the Oslo office.',
  'Project Nimbus ships its first beta on 12 June.',
  'Project Nimbus uses PostgreSQL for storage.',
  'Project Nimbus has eleven engineers on the team.',
  'Project Nimbus was renamed from Cirrus in February.',
  'Project Nimbus weekly sync happens on Thursdays at 10:00.',
  'Project Nimbus risk register lists the vendor contract as the top risk.',
];

beforeAll(async () => {
  server = await startServerProcess();
  api = client(server.url, server.key);
  const org = JSON.parse((await runCli(['orgs', 'create', '--name', 'Other', '--data', server.dataDir, '--json'])).stdout);
  const key = JSON.parse((await runCli(['keys', 'create', '--org', org.organization_id, '--data', server.dataDir, '--json'])).stdout);
  other = client(server.url, key.key);
  agentId = (await readyAgent(api)).agent_id;
  learnedIn = await newThread(api, agentId);
  learned = await observeAndSettle(api, agentId, learnedIn, [
    said('My sister Ingrid lives in Tromsø and works as a marine biologist.', { speaker: 'Maya', timestamp: '2024-05-08T09:00:00Z' }),
    ...NIMBUS.map((fact) => said(fact, { speaker: 'Maya', timestamp: '2024-05-09T09:00:00Z' })),
  ]);
  expect(learned.status).toBe('committed');
});
afterAll(async () => {
  await server.stop();
  await removeDataDir(server.dataDir);
});

describe('chat: retrieval scope', () => {
  it('answers from memory learned in another thread of the same agent, with verified citations', async () => {
    const me = asPerson(api);
    const threadId = await newThread(me, agentId);
    const response = await me.post(threadPaths(agentId, threadId).chat, ask('Where does Ingrid live?'));
    expect(response.status).toBe(200);
    expect(Object.keys(response.body).sort()).toEqual(CHAT_KEYS);
    expect(response.body).toMatchObject({ agent_id: agentId, thread_id: threadId, model: 'extractive-v1', learning: [] });
    expect(response.body.message).toContain('Tromsø');
    expect(response.body.memory_context).toContain('Ingrid lives in Tromsø');
    expect(Number.isInteger(response.body.duration_ms) && response.body.duration_ms >= 0).toBe(true);
    const names = response.body.stages.map((stage: { name: string }) => stage.name);
    expect(names).toEqual(expect.arrayContaining(['memory_context', 'generate', 'record']));
    for (const stage of response.body.stages) expect(Number.isInteger(stage.duration_ms) && stage.duration_ms >= 0).toBe(true);
    const ingrid = response.body.citations.find((citation: { label: string }) => citation.label.includes('(turn 1)'));
    expect(ingrid).toEqual({
      source_id: learned.observation_id,
      label: 'Maya, 2024-05-08 (turn 1)',
      media_type: 'text/plain',
      href: `/v1/agents/${agentId}/threads/${learnedIn}/observe/${learned.observation_id}/status`,
      verified: true,
    });
    for (const citation of response.body.citations) expect(citation.source_id).toMatch(/^obs_[0-9A-HJKMNP-TV-Z]{26}$/);
    // The href of a turn citation is a real, reachable status.
    expect((await api.get(ingrid.href)).status).toBe(200);
  });

  it('never answers from another agent or another organization', async () => {
    const me = asPerson(api);
    const sibling = (await readyAgent(me)).agent_id;
    const siblingThread = await newThread(me, sibling);
    const fromSibling = await me.post(threadPaths(sibling, siblingThread).chat, ask('Where does Ingrid live?'));
    expect(fromSibling.status).toBe(200);
    expect(fromSibling.body).toMatchObject({ message: NOTHING, memory_context: '', citations: [] });

    const foreignAgent = (await readyAgent(other)).agent_id;
    const foreignThread = await newThread(other, foreignAgent);
    expect((await observeAndSettle(other, foreignAgent, foreignThread, [said('Ingrid lives in Bergen and sails on weekends.')])).status).toBe('committed');
    const foreign = await other.post(threadPaths(foreignAgent, foreignThread).chat, ask('Where does Ingrid live?'));
    expect(foreign.body.message).toContain('Bergen');
    expect(foreign.body.memory_context).not.toContain('Tromsø');
    const ours = await me.post(threadPaths(agentId, await newThread(me, agentId)).chat, ask('Where does Ingrid live?'));
    expect(ours.body.memory_context).not.toContain('Bergen');
    // The other organization cannot reach our agent or thread at all.
    const probe = await other.post(threadPaths(agentId, await newThread(me, agentId)).chat, ask('Where does Ingrid live?'));
    expect(probe.status).toBe(404);
    expect(probe.body.code).toBe('agent_not_found');
  });

  it('says so plainly when memory holds nothing relevant', async () => {
    const me = asPerson(api);
    const response = await me.post(threadPaths(agentId, await newThread(me, agentId)).chat, ask('What is the airspeed velocity of an unladen swallow?'));
    expect(response.status).toBe(200);
    expect(response.body.message).toBe(NOTHING);
    expect(response.body.citations).toEqual([]);
  });
});

describe('chat: answer length', () => {
  const cited = (text: string) => (text.match(/\[\d+\]/g) ?? []).length;

  it('brief keeps 2 to 4 facts, standard more, detailed every relevant fact as a list', async () => {
    const me = asPerson(api);
    const path = threadPaths(agentId, await newThread(me, agentId)).chat;
    const brief = (await me.post(path, ask('Tell me about Project Nimbus', { answer_length: 'brief' }))).body;
    const standard = (await me.post(path, ask('Tell me about Project Nimbus', { answer_length: 'standard' }))).body;
    const implicit = (await me.post(path, ask('Tell me about Project Nimbus'))).body;
    const detailed = (await me.post(path, ask('Tell me about Project Nimbus', { answer_length: 'detailed' }))).body;
    expect(cited(brief.message)).toBeGreaterThanOrEqual(2);
    expect(cited(brief.message)).toBeLessThanOrEqual(4);
    expect(cited(standard.message)).toBeGreaterThan(cited(brief.message));
    expect(implicit.message).toBe(standard.message);
    expect(detailed.message.startsWith('From memory:\n- ')).toBe(true);
    expect(detailed.message.split('\n').filter((line: string) => line.startsWith('- '))).toHaveLength(NIMBUS.length);
    for (const fact of NIMBUS) expect(detailed.message).toContain(fact.slice(0, -1));
    expect(detailed.citations.length).toBeGreaterThan(brief.citations.length);
    const refused = await me.post(path, ask('Tell me about Project Nimbus', { answer_length: 'long' }));
    expect(refused.status).toBe(422);
  });
});

describe('chat: request limits', () => {
  it('accepts max_context_chars 100 and 100,000, refuses 99 and 100,001; memory_context never exceeds it', async () => {
    const me = asPerson(api);
    const path = threadPaths(agentId, await newThread(me, agentId)).chat;
    for (const max of [100, 150, 300, 1_000, 100_000]) {
      const response = await me.post(path, ask('Tell me about Project Nimbus and Ingrid', { max_context_chars: max }));
      expect(response.status).toBe(200);
      expect(response.body.memory_context.length).toBeLessThanOrEqual(max);
      expect(response.body.memory_context.length).toBeGreaterThan(0);
    }
    const wide = await me.post(path, ask('Tell me about Project Nimbus', { max_context_chars: 100_000 }));
    for (const fact of NIMBUS) expect(wide.body.memory_context).toContain(fact);
    for (const bad of [99, 100_001, 0, 1.5, '400']) {
      const response = await me.post(path, ask('Nimbus?', { max_context_chars: bad }));
      expect(errorShape(response)).toMatchObject({ status: 422, code: 'invalid_request' });
    }
  });

  it('accepts turn_id of 1 and 200 characters and message of 1 and 2,000; refuses 0/201 and 0/2,001 with 422', async () => {
    const me = asPerson(api);
    const path = threadPaths(agentId, await newThread(me, agentId)).chat;
    const one = await me.post(path, { turn_id: 'x', message: 'N' });
    expect(one.status).toBe(200);
    expect(one.body.turn_id).toBe('x');
    const long = await me.post(path, { turn_id: 't'.repeat(200), message: `Nimbus ${filler(1_993)}` });
    expect(long.status).toBe(200);
    expect(long.body.turn_id).toBe('t'.repeat(200));
    for (const body of [
      { turn_id: '', message: 'hi' },
      { turn_id: 't'.repeat(201), message: 'hi' },
      { turn_id: 't', message: '' },
      { turn_id: 't', message: 'm'.repeat(2_001) },
      { message: 'hi' },
      { turn_id: 't' },
      { turn_id: 't', message: 'hi', temperature: 0.2 },
    ]) {
      expect(errorShape(await me.post(path, body))).toMatchObject({ status: 422, code: 'invalid_request' });
    }
  });

  it('refuses 11 distinct images with 413 before looking them up, and an unknown image with 404', async () => {
    const me = asPerson(api);
    const path = threadPaths(agentId, await newThread(me, agentId)).chat;
    const image = (i: number) => `img_${i.toString(16).padStart(32, '0')}`;
    const eleven = await me.post(path, ask('What is in these?', { images: Array.from({ length: 11 }, (_, i) => image(i)) }));
    expect(errorShape(eleven)).toMatchObject({ status: 413, code: 'payload_too_large' });
    // Eleven items naming ten distinct images is within the limit: the unknown id is what fails.
    const repeated = await me.post(path, ask('What is in these?', { images: [...Array.from({ length: 10 }, (_, i) => image(i)), image(0)] }));
    expect(errorShape(repeated)).toMatchObject({ status: 404, code: 'not_found' });
    const unknown = await me.post(path, ask('What is in this?', { images: [image(99)] }));
    expect(errorShape(unknown)).toMatchObject({ status: 404, code: 'not_found' });
    const malformed = await me.post(path, ask('What is in this?', { images: ['img_XYZ'] }));
    expect(errorShape(malformed)).toMatchObject({ status: 422, code: 'invalid_request' });
    const none = await me.post(path, ask('Where does Ingrid live?', { images: [] }));
    expect(none.status).toBe(200);
  });

  it('answers 404 for an unknown thread and for another person\'s thread', async () => {
    const me = asPerson(api);
    const unknown = await me.post(threadPaths(agentId, 'thread_01ARZ3NDEKTSV4RRFFQ69G5FAV').chat, ask('hi'));
    expect(errorShape(unknown)).toMatchObject({ status: 404, code: 'thread_not_found' });
    const alices = await newThread(me, agentId, { 'x-sp-end-user': 'alice' });
    const asBob = await me.post(threadPaths(agentId, alices).chat, ask('hi'), { headers: { 'x-sp-end-user': 'bob' } });
    expect(errorShape(asBob)).toMatchObject({ status: 404, code: 'thread_not_found' });
  });
});

describe('chat: recording', () => {
  it('records the turn as a user and an agent message (with source ids) and two activity entries without text', async () => {
    const me = asPerson(api);
    const threadId = await newThread(me, agentId, { 'x-sp-end-user': 'carol' });
    const response = await me.post(threadPaths(agentId, threadId).chat, ask('Who leads Project Nimbus?'), { headers: { 'x-sp-end-user': 'carol' } });
    expect(response.status).toBe(200);
    const thread = await api.get(threadPaths(agentId, threadId).thread);
    expect(thread.body.messages).toHaveLength(2);
    const [user, agent] = thread.body.messages;
    expect(user).toMatchObject({ speaker: 'user', text: 'Who leads Project Nimbus?', source_ids: [] });
    expect(agent).toMatchObject({ speaker: 'agent', text: response.body.message });
    expect(agent.source_ids).toEqual([...new Set(response.body.citations.map((c: { source_id: string }) => c.source_id))]);
    expect(agent.source_ids).toContain(learned.observation_id);

    const logs = await me.get(`/v1/agents/${agentId}/logs?limit=100`);
    const entries = logs.body.entries.filter((entry: { thread_id: string; route: string }) => entry.thread_id === threadId && entry.route === 'chat');
    expect(entries.map((entry: { direction: string }) => entry.direction).sort()).toEqual(['agent', 'user']);
    for (const entry of entries) {
      expect(entry.user_id).toMatch(/^eu_/);
      expect(JSON.stringify(entry)).not.toContain('Nimbus');
      expect(JSON.stringify(entry)).not.toContain('Priya');
    }
  });
});

describe('chat/stream', () => {
  it('sends context, deltas and done (the full chat response), and records the turn', async () => {
    const me = asPerson(api);
    const threadId = await newThread(me, agentId);
    const response = await fetch(`${server.url}${threadPaths(agentId, threadId).stream}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.key}`, 'content-type': 'application/json' },
      body: JSON.stringify(ask('Who leads Project Nimbus?', { turn_id: 'stream-1' })),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(response.headers.get('x-request-id')).toMatch(/\S/);
    const events = parseSse(await response.text()).filter((event) => event.event !== 'comment');
    expect(events[0]!.event).toBe('context');
    expect(Object.keys(events[0]!.data).sort()).toEqual(['citations', 'memory_context']);
    expect(events.at(-1)!.event).toBe('done');
    const deltas = events.slice(1, -1);
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.every((event) => event.event === 'delta')).toBe(true);
    const done = events.at(-1)!.data;
    expect(Object.keys(done).sort()).toEqual(CHAT_KEYS);
    expect(done).toMatchObject({ agent_id: agentId, thread_id: threadId, turn_id: 'stream-1', learning: [] });
    expect(deltas.map((event) => event.data.text).join('')).toBe(done.message);
    expect(done.message).toContain('Priya Raman');
    expect(done.memory_context).toBe(events[0]!.data.memory_context);
    expect(done.stages.map((stage: { name: string }) => stage.name)).toEqual(expect.arrayContaining(['memory_context', 'generate', 'record']));
    const thread = await me.get(threadPaths(agentId, threadId).thread);
    expect(thread.body.messages.map((message: { speaker: string }) => message.speaker)).toEqual(['user', 'agent']);
  });

  it('refuses before streaming with a JSON error (validation 422, unknown thread 404)', async () => {
    const me = asPerson(api);
    const invalid = await me.post(threadPaths(agentId, await newThread(me, agentId)).stream, { turn_id: '', message: 'hi' });
    expect(errorShape(invalid)).toMatchObject({ status: 422, code: 'invalid_request' });
    expect(invalid.headers.get('content-type')).toMatch(/^application\/json/);
    const unknown = await me.post(threadPaths(agentId, 'thread_01ARZ3NDEKTSV4RRFFQ69G5FAV').stream, ask('hi'));
    expect(errorShape(unknown)).toMatchObject({ status: 404, code: 'thread_not_found' });
  });
});

describe('observe-and-respond and observe-and-enrich', () => {
  it('observe-and-respond answers like chat, returns the observation id, and learns the message and the answer', async () => {
    const me = asPerson(api);
    const agent = (await readyAgent(me)).agent_id;
    const threadId = await newThread(me, agent);
    const paths = threadPaths(agent, threadId);
    const response = await me.post(paths.respond, ask('My favourite colour is teal and my cat is called Biscuit.'));
    expect(response.status).toBe(200);
    expect(Object.keys(response.body).sort()).toEqual([...CHAT_KEYS, 'observation_id'].sort());
    expect(response.body.message).toBe(NOTHING);
    expect(response.body.observation_id).toMatch(/^obs_[0-9A-HJKMNP-TV-Z]{26}$/);
    const settled = await pollStatus(api, paths.status(response.body.observation_id));
    expect(settled).toMatchObject({ status: 'committed', turns_total: 2, turns_processed: 2 });
    const later = await me.post(threadPaths(agent, await newThread(me, agent)).chat, ask('What is my cat called?'));
    expect(later.body.message).toContain('Biscuit');
    expect(later.body.citations.some((c: { source_id: string; verified: boolean }) => c.source_id === response.body.observation_id && c.verified)).toBe(true);
    // The answer was learned as the second turn, spoken by the agent.
    expect(later.body.memory_context).toContain(NOTHING);
    const thread = await me.get(paths.thread);
    expect(thread.body.messages.map((message: { speaker: string }) => message.speaker)).toEqual(['user', 'agent']);
  });

  it('observe-and-enrich returns memory context and citations without an answer, and learns the message', async () => {
    const me = asPerson(api);
    const agent = (await readyAgent(me)).agent_id;
    const threadId = await newThread(me, agent);
    const paths = threadPaths(agent, threadId);
    const first = await me.post(paths.enrich, ask('The spare key is under the third flowerpot.'));
    expect(first.status).toBe(200);
    expect(Object.keys(first.body).sort()).toEqual(['agent_id', 'citations', 'memory_context', 'observation_id', 'stages', 'thread_id', 'turn_id']);
    expect(first.body.memory_context).toBe('');
    expect(first.body.stages.map((stage: { name: string }) => stage.name)).toContain('memory_context');
    expect((await pollStatus(api, paths.status(first.body.observation_id))).status).toBe('committed');
    const second = await me.post(paths.enrich, ask('Where is the spare key?', { max_context_chars: 100 }));
    expect(second.body.memory_context).toContain('flowerpot');
    expect(second.body.memory_context.length).toBeLessThanOrEqual(100);
    expect(second.body.citations[0]).toMatchObject({ source_id: first.body.observation_id, verified: true, media_type: 'text/plain' });
    for (const body of [{ turn_id: 't', message: '' }, { turn_id: 't', message: 'x', answer_length: 'brief' }, { turn_id: 't', message: 'x', max_context_chars: 99 }]) {
      expect((await me.post(paths.enrich, body)).status).toBe(422);
    }
    expect((await pollStatus(api, paths.status(second.body.observation_id))).status).toBe('committed');
  });
});
