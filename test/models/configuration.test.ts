import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCanvas } from '@napi-rs/canvas';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postForm } from '../documents/document-support.js';
import { client, readyAgent } from '../support/client.js';
import { removeDataDir, runCli, startServerProcess } from '../support/server.js';
import { ask, newThread, observeAndSettle, said, threadPaths } from '../learning/learning-support.js';
import { API_KEY, chatRequests, modelArgs, obedientModel, startScriptedOpenaiServer, userPrompt, type ScriptedOpenaiServer } from './model-support.js';

/** Model configuration of `memory-agents serve`, over real HTTP with the built CLI. */
/** Generous: these tests start one or two server processes on a possibly busy machine (not a timing assertion). */
const SERVER_TEST_TIMEOUT_MS = 240_000;
let provider: ScriptedOpenaiServer;
const dirs: string[] = [];
const dataDir = async () => {
  const dir = await mkdtemp(join(tmpdir(), 'ma-e2e-models-'));
  dirs.push(dir);
  return dir;
};

beforeAll(async () => {
  provider = await startScriptedOpenaiServer({ fallback: { chat: { type: 'compute', reply: obedientModel } } });
});
afterAll(async () => {
  await provider?.close();
  for (const dir of dirs) await removeDataDir(dir);
});

describe('models: configuration', () => {
  it('keeps the offline defaults when no model is configured', async () => {
    const before = provider.requests.length;
    const server = await startServerProcess();
    dirs.push(server.dataDir);
    try {
      expect(server.output()).toContain('models: answers extractive (offline); embeddings hashed n-grams (offline); memory writer verbatim');
      const api = client(server.url, server.key);
      const agentId = (await readyAgent(api)).agent_id;
      const threadId = await newThread(api, agentId);
      expect((await observeAndSettle(api, agentId, threadId, [said('Ana keeps bees on her roof in Porto.')])).status).toBe('committed');
      const response = await api.post(threadPaths(agentId, threadId).chat, ask('Who keeps bees?'));
      expect(response.status).toBe(200);
      expect(response.body.model).toBe('extractive-v1');
      expect(response.body.message).toContain('bees');
      expect(response.body.citations).toEqual([expect.objectContaining({ verified: true })]);
      expect(provider.requests.length).toBe(before);
    } finally {
      await server.stop();
    }
  }, SERVER_TEST_TIMEOUT_MS);

  it.each([
    [['--model', 'm'], '--model needs --model-url'],
    [['--model-url', 'http://127.0.0.1:1/v1'], '--model-url needs --model'],
    [['--memory-writer', 'llm'], '--memory-writer llm needs --model-url and --model'],
    [['--model-url', 'http://127.0.0.1:1/v1', '--model', 'm', '--embedding-model', 'e'], '--embedding-model needs --embedding-dimensions'],
    [['--model-url', 'ftp://127.0.0.1/v1', '--model', 'm'], '--model-url must be an http(s) URL'],
    [['--api-key', 'sk-secret-flag'], "Unknown option '--api-key'"],
  ])('refuses serve %j with a usage error', async (args, message) => {
    const result = await runCli(['serve', '--port', '0', '--data', await dataDir(), ...args]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
  });

  it('re-embeds the data dir after the embedding model changed, then learns new turns under it, and answers throughout', async () => {
    const dir = await dataDir();
    const first = await startServerProcess({ dataDir: dir, args: ['--data', dir] });
    const api = client(first.url, first.key);
    const agentId = (await readyAgent(api)).agent_id;
    const threadId = await newThread(api, agentId);
    expect((await observeAndSettle(api, agentId, threadId, [said('Ana keeps bees on her roof in Porto.', { speaker: 'Ana' })])).status).toBe('committed');
    expect(await first.stop()).toBe(0);

    const second = await startServerProcess({
      dataDir: dir,
      args: ['--data', dir, ...modelArgs(provider, ['--embedding-model', 'scripted-embed', '--embedding-dimensions', '8'])],
      env: { MEMORY_AGENTS_MODEL_API_KEY: API_KEY },
    });
    try {
      expect(second.output()).toContain('embeddings scripted-embed (8 dims)');
      // Issue 39: the server re-embeds the index for the new model (one memory here) and learning
      // goes on under it; no turn fails `embedder_mismatch`.
      const again = client(second.url, first.key);
      const status = await observeAndSettle(again, agentId, threadId, [said('Ana also grows lavender.', { speaker: 'Ana' })]);
      expect(status).toMatchObject({ status: 'committed' });
      expect(JSON.stringify(status)).not.toContain('embedder_mismatch');
      // Answers keep working (full text while re-embedding, both channels after).
      const response = await again.post(threadPaths(agentId, threadId).chat, ask('Who keeps bees?'));
      expect(response.status).toBe(200);
      expect(response.body.message).toMatch(/^From memory: Ana keeps bees on her roof in Porto\. \[\d+\]$/);
      expect(response.body.citations).toEqual([expect.objectContaining({ verified: true })]);
      expect(second.output()).not.toContain(API_KEY);
    } finally {
      await second.stop();
    }
  }, SERVER_TEST_TIMEOUT_MS);

  it('uses a network embedder for learning and chat, sending dimensions and the key', async () => {
    const dir = await dataDir();
    const server = await startServerProcess({
      dataDir: dir,
      args: ['--data', dir, ...modelArgs(provider, ['--embedding-model', 'scripted-embed', '--embedding-dimensions', '8', '--memory-writer', 'verbatim'])],
      env: { MEMORY_AGENTS_MODEL_API_KEY: API_KEY },
    });
    try {
      const before = provider.requests.length;
      const api = client(server.url, server.key);
      const agentId = (await readyAgent(api)).agent_id;
      const threadId = await newThread(api, agentId);
      expect((await observeAndSettle(api, agentId, threadId, [said('Ana keeps bees on her roof in Porto.', { speaker: 'Ana' })])).status).toBe('committed');
      const response = await api.post(threadPaths(agentId, threadId).chat, ask('Who keeps bees?'));
      expect(response.status).toBe(200);
      const embeddings = provider.requests.slice(before).filter((request) => request.route === 'embeddings');
      expect(embeddings.length).toBeGreaterThanOrEqual(2);
      expect(embeddings[0]!.body).toMatchObject({ model: 'scripted-embed', dimensions: 8, input: ['Ana keeps bees on her roof in Porto.'] });
      expect(embeddings[0]!.headers.authorization).toBe(`Bearer ${API_KEY}`);
      // --memory-writer verbatim: no extraction call.
      expect(chatRequests(provider).slice(-1)[0]!.body.stream).toBeUndefined();
      expect(provider.requests.slice(before).filter((request) => request.route === 'chat')).toHaveLength(1);
    } finally {
      await server.stop();
    }
  }, SERVER_TEST_TIMEOUT_MS);

  it('sends chat images to the model as image parts, and charges nothing when the model is down', async () => {
    const dir = await dataDir();
    const server = await startServerProcess({ dataDir: dir, args: ['--data', dir, ...modelArgs(provider)], env: { MEMORY_AGENTS_MODEL_API_KEY: API_KEY } });
    try {
      const created = JSON.parse((await runCli(['orgs', 'create', '--name', 'Billed', '--credits', '100', '--data', dir, '--json'])).stdout);
      const key = JSON.parse((await runCli(['keys', 'create', '--org', created.organization_id, '--data', dir, '--json'])).stdout).key as string;
      const api = client(server.url, key);
      const agentId = (await readyAgent(api)).agent_id;
      const threadId = await newThread(api, agentId);

      const canvas = createCanvas(16, 12);
      canvas.getContext('2d').fillRect(0, 0, 8, 8);
      const png = new Uint8Array(await canvas.encode('png'));
      const uploaded = await postForm(server.url, key, '/v1/images', { data: png, filename: 'chart.png', type: 'image/png' });
      expect(uploaded.status).toBe(201);
      const before = chatRequests(provider).length;
      const answered = await api.post(threadPaths(agentId, threadId).chat, ask('What does the chart show?', { images: [uploaded.body.image_id] }));
      expect(answered.status).toBe(200);
      const [request] = chatRequests(provider).slice(before);
      const user = request!.body.messages.find((message: { role: string }) => message.role === 'user');
      expect(user.content).toEqual([
        { type: 'text', text: expect.stringContaining('Question: What does the chart show?') },
        { type: 'image_url', image_url: { url: `data:image/png;base64,${Buffer.from(png).toString('base64')}` } },
      ]);
      expect(userPrompt(request!)).toContain('Memory items: none.');

      const billed = (await api.get('/v1/billing')).body;
      provider.enqueue('chat', { type: 'status', status: 503 }, { type: 'status', status: 503 });
      const refused = await api.post(threadPaths(agentId, threadId).chat, ask('What does the chart show?'));
      expect(refused.status).toBe(503);
      expect(refused.body.code).toBe('answer_model_unavailable');
      const after = (await api.get('/v1/billing')).body;
      expect(after.balance).toBe(billed.balance);
      expect(after.entries).toEqual(billed.entries);
    } finally {
      await server.stop();
    }
  }, SERVER_TEST_TIMEOUT_MS);
});
