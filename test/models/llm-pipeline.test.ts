import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, errorShape, readyAgent, type Client } from '../support/client.js';
import { removeDataDir, startServerProcess, type ServerProcess } from '../support/server.js';
import { ask, newThread, observeAndSettle, parseSse, said, threadPaths } from '../learning/learning-support.js';
import { API_KEY, chatRequests, EXTRACTION_USAGE, modelArgs, obedientModel, startScriptedOpenaiServer, systemPrompt, userPrompt, type ScriptedOpenaiServer } from './model-support.js';

/**
 * The product with an OpenAI-compatible model configured, over real HTTP: the built CLI server
 * talks to a scripted provider on loopback (the provider is outside our process). Tests in this
 * file share one server and run in order; each scripts the provider's next replies.
 */
let provider: ScriptedOpenaiServer;
let server: ServerProcess;
let api: Client;
let agentId: string;
let threadId: string;
let learnedId: string;

beforeAll(async () => {
  provider = await startScriptedOpenaiServer({ fallback: { chat: { type: 'compute', reply: obedientModel } } });
  const dataDir = await mkdtemp(join(tmpdir(), 'ma-e2e-models-'));
  server = await startServerProcess({ dataDir, args: ['--data', dataDir, ...modelArgs(provider)], env: { MEMORY_AGENTS_MODEL_API_KEY: API_KEY } });
  api = client(server.url, server.key);
  agentId = (await readyAgent(api, { role: 'travel agent', objective: 'help Ana plan trips' })).agent_id;
  threadId = await newThread(api, agentId);
});
afterAll(async () => {
  await server?.stop();
  if (server) await removeDataDir(server.dataDir);
  await provider?.close();
});

describe('models: LLM-written memories and grounded answers', () => {
  it('learns through the LLM writer: one extraction call per batch, with the key only in the Authorization header', async () => {
    const before = chatRequests(provider).length;
    const status = await observeAndSettle(api, agentId, threadId, [
      said('Ana lives in Porto.', { speaker: 'Ana', timestamp: '2026-03-02T10:00:00Z' }),
      said("Ana's sister Marta plays the cello in an orchestra.", { speaker: 'Ana', timestamp: '2026-03-02T10:01:00Z' }),
    ]);
    expect(status).toMatchObject({ status: 'committed', learning: null });
    learnedId = status.observation_id;
    const calls = chatRequests(provider).slice(before);
    expect(calls).toHaveLength(1);
    expect(calls[0]!.body.response_format).toEqual({ type: 'json_object' });
    expect(userPrompt(calls[0]!)).toMatch(/^> Turn 2 \| speaker: Ana \| said at: 2026-03-02T10:01:00(\.000)?Z \(Monday\)$/m);
    expect(calls[0]!.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(server.output()).not.toContain(API_KEY);
    expect(server.output()).toMatch(/models: answers scripted-chat at http:\/\/127\.0\.0\.1:\d+\/v1, key from MEMORY_AGENTS_MODEL_API_KEY; embeddings hashed n-grams \(offline\); memory writer llm/);
    // The receipt reports the provider's usage of that call, split over the two turns by text length
    // (issue 33); the hashed embedder reports none.
    const receipt = (await api.get(`${threadPaths(agentId, threadId).thread}/observe/${learnedId}/receipt`)).body;
    const model = 'openai-compatible:scripted-chat';
    expect(receipt.model_tokens).toEqual([{ model, input_tokens: EXTRACTION_USAGE.prompt_tokens, output_tokens: EXTRACTION_USAGE.completion_tokens }]);
    // 120 input tokens over 19 and 51 characters (70): 32 and the remainder 88; 30 output: 8 and 22.
    expect(receipt.turns.map((turn: any) => turn.model_tokens)).toEqual([
      [{ model, input_tokens: 32, output_tokens: 8 }],
      [{ model, input_tokens: 88, output_tokens: 22 }],
    ]);
  });

  it('answers with a numbered, grounded prompt and cites exactly the items the model cited (verified against the turn)', async () => {
    const before = chatRequests(provider).length;
    const response = await api.post(threadPaths(agentId, threadId).chat, ask('Who plays the cello?', { answer_length: 'brief' }));
    expect(response.status).toBe(200);
    expect(response.body.model).toBe('openai-compatible:scripted-chat');
    expect(response.body.message).toMatch(/^From memory: Ana's sister Marta plays the cello in an orchestra\. \[\d+\]$/);
    const [request] = chatRequests(provider).slice(before);
    expect(systemPrompt(request!)).toMatch(/^Your role: travel agent\nYour objective: help Ana plan trips/);
    expect(systemPrompt(request!)).toContain('Cite the items you rely on with their numbers in square brackets');
    // answer_length is an instruction to the model; nothing is cut.
    expect(systemPrompt(request!)).toContain('2 to 4 sentences');
    expect(request!.body.max_tokens).toBeUndefined();
    expect(userPrompt(request!)).toMatch(/^Memory items:\n<memory-data id="([0-9a-f]{16})">\n> \[\d+\] [^]*\n<\/memory-data id="\1">\n\nQuestion: /);
    expect(userPrompt(request!)).toMatch(/^> \[\d+\] \(date: 2026-03-02T10:01:00\.000Z; speaker: Ana\) Ana's sister Marta plays the cello in an orchestra\.$/m);
    expect(userPrompt(request!).endsWith('Question: Who plays the cello?')).toBe(true);
    expect(response.body.citations).toEqual([
      {
        source_id: learnedId,
        label: 'Ana, 2026-03-02 (turn 2)',
        media_type: 'text/plain',
        href: `/v1/agents/${agentId}/threads/${threadId}/observe/${learnedId}/status`,
        verified: true,
      },
    ]);
  });

  it('returns no citation when the model cites nothing', async () => {
    provider.enqueue('chat', { type: 'answer', text: 'I do not remember that.' });
    const response = await api.post(threadPaths(agentId, threadId).chat, ask('What is the capital of Peru?'));
    expect(response.status).toBe(200);
    expect(response.body.citations).toEqual([]);
  });

  it('deletes the memory a newer fact supersedes (update), so chat no longer sees it', async () => {
    const before = chatRequests(provider).length;
    const status = await observeAndSettle(api, agentId, threadId, [said('Ana moved to Lisbon.', { speaker: 'Ana', timestamp: '2026-04-10T10:00:00Z' })]);
    expect(status.status).toBe('committed');
    const calls = chatRequests(provider).slice(before);
    expect(calls.map((call) => systemPrompt(call).split('.')[0])).toEqual(['You turn conversation turns into memories: short, self-contained facts worth remembering about the people, their lives, plans, preferences, events, and the things they said or shared', 'You keep a memory store consistent']);
    expect(userPrompt(calls[1]!)).toMatch(/^> M\d+\. Ana lives in Porto\./m);
    const response = await api.post(threadPaths(agentId, threadId).chat, ask('Where does Ana live, Porto or Lisbon?'));
    expect(response.status).toBe(200);
    expect(response.body.memory_context).toContain('Ana moved to Lisbon.');
    expect(response.body.memory_context).not.toContain('Ana lives in Porto.');
    expect(response.body.message).toMatch(/^From memory: Ana moved to Lisbon\. \[\d+\]$/);
  });

  it('streams the provider deltas through chat/stream and cites from the streamed text', async () => {
    provider.enqueue('chat', { type: 'stream', chunks: ['Marta ', 'plays ', 'the cello ', '[1].'] });
    const response = await fetch(`${server.url}${threadPaths(agentId, threadId).stream}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.key}`, 'content-type': 'application/json' },
      body: JSON.stringify(ask('Who plays the cello?')),
    });
    expect(response.status).toBe(200);
    const events = parseSse(await response.text()).filter((event) => event.event !== 'comment');
    expect(events.map((event) => event.event)).toEqual(['context', 'delta', 'delta', 'delta', 'delta', 'done']);
    expect(events.filter((event) => event.event === 'delta').map((event) => event.data.text)).toEqual(['Marta ', 'plays ', 'the cello ', '[1].']);
    const done = events.at(-1)!.data;
    expect(done.message).toBe('Marta plays the cello [1].');
    expect(done.citations).toHaveLength(1);
    expect(done.citations[0]).toMatchObject({ source_id: learnedId, verified: true });
    expect(chatRequests(provider).at(-1)!.body.stream).toBe(true);
  });
});

describe('models: failures map to the spec', () => {
  it('is 503 answer_model_unavailable when the provider stays down after the retries', async () => {
    const before = chatRequests(provider).length;
    provider.enqueue('chat', { type: 'status', status: 503 }, { type: 'status', status: 502 });
    const response = await api.post(threadPaths(agentId, threadId).chat, ask('Who plays the cello?'));
    expect(errorShape(response)).toEqual({ status: 503, code: 'answer_model_unavailable', keys: ['code', 'error', 'request_id'], requestIdMatches: true });
    // One attempt and --model-max-retries 1.
    expect(chatRequests(provider).length - before).toBe(2);
  });

  it('is an error event with answer_model_unavailable on chat/stream', async () => {
    provider.enqueue('chat', { type: 'status', status: 500 }, { type: 'status', status: 500 });
    const response = await fetch(`${server.url}${threadPaths(agentId, threadId).stream}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.key}`, 'content-type': 'application/json' },
      body: JSON.stringify(ask('Who plays the cello?')),
    });
    const events = parseSse(await response.text()).filter((event) => event.event !== 'comment');
    expect(events.map((event) => event.event)).toEqual(['context', 'error']);
    expect(events[1]!.data.code).toBe('answer_model_unavailable');
  });

  it.each([
    ['model_unavailable', [{ type: 'status', status: 500 }, { type: 'status', status: 500 }]],
    ['generation_unparseable', [{ type: 'answer', text: 'not json' }, { type: 'answer', text: 'still not json' }]],
    ['generation_failed', [{ type: 'status', status: 400, body: '{"error":{"message":"unknown model"}}' }]],
    ['generation_timeout', [{ type: 'stall' }]],
  ] as const)('reports the writer failure as learning.reason %s on the observation status', async (reason, replies) => {
    provider.enqueue('chat', ...replies);
    const status = await observeAndSettle(api, agentId, threadId, [said(`A turn that will not be learned (${reason}).`, { speaker: 'Ana' }), said('A second turn.', { speaker: 'Ana' })]);
    expect(status).toMatchObject({
      status: 'failed',
      learning: { status: 'not_learned', not_learned_turns: [{ first: 1, last: 2 }], reason, action: 'resend' },
    });
  });

  it('aborts the provider request when the client disconnects from chat/stream', async () => {
    provider.enqueue('chat', { type: 'stream', chunks: Array.from({ length: 200 }, (_, i) => `word${i} `), delayMs: 50 });
    const index = provider.requests.length;
    const controller = new AbortController();
    const response = await fetch(`${server.url}${threadPaths(agentId, threadId).stream}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.key}`, 'content-type': 'application/json' },
      body: JSON.stringify(ask('Who plays the cello?')),
      signal: controller.signal,
    });
    const reader = response.body!.getReader();
    let seen = '';
    while (!seen.includes('event: delta')) seen += new TextDecoder().decode((await reader.read()).value);
    controller.abort();
    await provider.waitForClientClose(index);
    expect(provider.requests[index]!.closedByClient).toBe(true);
  });

  it('aborts the provider request when the client disconnects from chat', async () => {
    provider.enqueue('chat', { type: 'stall' });
    const before = provider.requests.length;
    const controller = new AbortController();
    const pending = fetch(`${server.url}${threadPaths(agentId, threadId).chat}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.key}`, 'content-type': 'application/json' },
      body: JSON.stringify(ask('Who plays the cello?')),
      signal: controller.signal,
    }).catch((error: unknown) => error);
    await provider.waitForRequests(before + 1);
    controller.abort();
    await pending;
    await provider.waitForClientClose(before);
    expect(provider.requests[before]!.closedByClient).toBe(true);
  });
});
