import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { testModelDir } from '../../packages/local-embedder/src/test-model.js';
import { client, readyAgent } from '../support/client.js';
import { removeDataDir, runCli, startServerProcess } from '../support/server.js';
import { ask, newThread, observeAndSettle, said, threadPaths } from '../learning/learning-support.js';

/** `memory-agents serve --embedder`: the local sentence model behind the /v1 API (issue 39), with the built CLI. */
const SERVER_TEST_TIMEOUT_MS = 240_000;
const model = testModelDir('serve --embedder (real sentence model)');
const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await removeDataDir(dir);
});

describe('serve --embedder', () => {
  it.skipIf(!model)('learns and answers by meaning over HTTP, and says which model embeds', async () => {
    const server = await startServerProcess({ args: ['--data', await mkdtemp(join(tmpdir(), 'ma-e2e-local-')), '--embedder', model!] });
    dirs.push(server.dataDir);
    try {
      expect(server.output()).toContain(`embeddings local model ${model} (in process, offline)`);
      const api = client(server.url, server.key);
      const agentId = (await readyAgent(api)).agent_id;
      const threadId = await newThread(api, agentId);
      const turns = [
        said('At work I report to Priya Shah.', { timestamp: '2024-01-10T09:00:00Z' }),
        said('The weather has been lovely all week.', { timestamp: '2024-01-10T09:00:00Z' }),
      ];
      expect((await observeAndSettle(api, agentId, threadId, turns)).status).toBe('committed');
      const later = [said('After the reorg my boss is Tom Becker.', { timestamp: '2024-04-02T18:30:00Z' })];
      const status = await observeAndSettle(api, agentId, threadId, later);
      expect(status.status).toBe('committed');
      // The receipt names the model and the tokens it embedded.
      const receipt = await api.get(`${threadPaths(agentId, threadId).observe}/${status.observation_id}/receipt`);
      expect(receipt.status).toBe(200);
      expect(JSON.stringify(receipt.body)).toContain('onnx:8199be6f699a395f');

      // "Who is my boss?": the newer answer by meaning comes first though the older one shares "work".
      const recalled = await api.post(`/v1/agents/${agentId}/recall`, { query: 'Who is my boss at work?' });
      expect(recalled.status).toBe(200);
      expect(recalled.body.memory_context.split('\n')[0]).toContain('Tom Becker');
      const chat = await api.post(threadPaths(agentId, threadId).chat, ask('Who is my boss at work?'));
      expect(chat.status).toBe(200);
      expect(chat.body.message).toContain('Tom Becker');
      // as_of before the change: the older answer only.
      const then = await api.post(`/v1/agents/${agentId}/recall`, { query: 'Who is my boss at work?', as_of: '2024-02-01T00:00:00Z' });
      expect(then.body.memory_context).toContain('Priya Shah');
      expect(then.body.memory_context).not.toContain('Tom Becker');
    } finally {
      expect(await server.stop()).toBe(0);
    }
  }, SERVER_TEST_TIMEOUT_MS);

  it('refuses a model that is not there with what to run, before starting', async () => {
    const empty = await mkdtemp(join(tmpdir(), 'ma-e2e-models-'));
    dirs.push(empty);
    const local = await runCli(['serve', '--port', '0', '--data', join(empty, 'data'), '--embedder', 'local'], { MEMORY_AGENTS_MODELS_DIR: empty });
    expect(local.code).toBe(2);
    expect(local.stderr).toContain('--embedder local: no local model in the models cache; run: memory-agents models pull sentence-transformers/all-MiniLM-L6-v2');
    const missing = await runCli(['serve', '--port', '0', '--data', join(empty, 'data'), '--embedder', join(empty, 'nowhere')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`The model directory ${join(empty, 'nowhere')} does not exist`);
  });
});
