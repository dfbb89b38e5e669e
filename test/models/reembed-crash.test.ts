import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, readyAgent } from '../support/client.js';
import { removeDataDir, runCli, startServerProcess, type ServerProcess } from '../support/server.js';
import { ask, newThread, observeAndSettle, said, threadPaths } from '../learning/learning-support.js';
import { API_KEY, modelArgs, obedientModel, startScriptedOpenaiServer, type ScriptedOpenaiServer } from './model-support.js';

/**
 * Switching embedders on a live data dir (issue 39) with a real server process: the re-embed a
 * server starts when its embedding model changed is killed (SIGKILL) mid-way, and the next start
 * continues where it stopped and finishes: every memory re-embedded, none lost, at most one batch
 * embedded twice.
 */

/** Generous: three server starts on a possibly busy machine (not a timing assertion). */
const TIMEOUT_MS = 300_000;
/** The service's batch (core's REEMBED_BATCH): what a kill may cost twice. */
const BATCH = 256;
const MEMORIES = 600;

let provider: ScriptedOpenaiServer;
/** Re-embedding batches the provider was asked for so far. */
let reembedBatches = 0;
let dir = '';

beforeAll(async () => {
  provider = await startScriptedOpenaiServer({
    fallback: {
      chat: { type: 'compute', reply: obedientModel },
      // Re-embedding batches (more than one text) answer a little late, and the second one not
      // before the kill (held for a minute): the kill lands while it is in flight, whatever the
      // machine's load (a fixed delay let a slow test see every batch requested before its kill).
      embeddings: {
        type: 'compute',
        reply: (body: { input?: unknown }) => {
          if (!Array.isArray(body.input) || body.input.length < 2) return { type: 'embeddings' };
          return { type: 'embeddings', delayMs: ++reembedBatches === 2 ? 60_000 : 400 };
        },
      },
    },
  });
  dir = await mkdtemp(join(tmpdir(), 'ma-e2e-reembed-'));
});
afterAll(async () => {
  await provider?.close();
  await removeDataDir(dir);
});

/** The inputs of the embedding requests of re-embedding batches (more than one text) so far. */
const batchInputs = () =>
  provider.requests.filter((request) => request.route === 'embeddings' && Array.isArray(request.body?.input) && request.body.input.length > 1).map((request) => request.body.input as string[]);

async function until<T>(check: () => Promise<T | null | undefined | false> | T | null | undefined | false): Promise<T> {
  for (;;) {
    const value = await check();
    if (value) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const status = async () => JSON.parse((await runCli(['reembed', 'status', '--data', dir, '--json'])).stdout) as { reembedding: string; done?: number; total?: number; from?: string; to?: string };

describe('re-embedding a data dir survives a kill of the server', () => {
  it('continues after SIGKILL where it stopped, and finishes with every memory', async () => {
    const newEmbedder = ['--data', dir, ...modelArgs(provider, ['--embedding-model', 'scripted-embed', '--embedding-dimensions', '8', '--memory-writer', 'verbatim'])];
    const env = { MEMORY_AGENTS_MODEL_API_KEY: API_KEY };

    // 1. The offline default learns MEMORIES memories (one per turn, verbatim writer).
    const first = await startServerProcess({ dataDir: dir });
    const key = first.key!;
    const api = client(first.url, key);
    const agentId = (await readyAgent(api)).agent_id;
    const threadId = await newThread(api, agentId);
    for (let start = 0; start < MEMORIES; start += 100) {
      const turns = Array.from({ length: 100 }, (_, i) => said(`Note ${start + i}: the parcel for room ${start + i} arrived on floor ${(start + i) % 7}.`));
      expect((await observeAndSettle(api, agentId, threadId, turns)).status).toBe('committed');
    }
    expect(await first.stop()).toBe(0);

    // 2. Restarted with a network embedder: it re-embeds in the background; killed mid-way.
    let second: ServerProcess | null = await startServerProcess({ dataDir: dir, args: newEmbedder, env });
    try {
      expect(second.output()).toMatch(/Re-embedding the memory index in the background \(\d+ of 600 memories, hashed-ngrams-v1:384 -> /);
      await until(() => batchInputs().length >= 2);
      const midway = await status();
      expect(midway).toMatchObject({ from: 'hashed-ngrams-v1:384', to: expect.stringContaining('scripted-embed'), total: MEMORIES });
      expect(midway.reembedding).toMatch(/^\d+ of 600 memories$/);
      await second.stop('SIGKILL');
      second = null;
    } finally {
      await second?.stop('SIGKILL');
    }
    const beforeResume = batchInputs().flat().length;
    expect(beforeResume).toBeLessThan(MEMORIES);

    // 3. The next start continues and finishes.
    const third = await startServerProcess({ dataDir: dir, args: newEmbedder, env });
    try {
      expect(third.output()).toContain('Re-embedding the memory index in the background');
      await until(async () => (await status()).reembedding === 'none');
      const embedded = batchInputs().flat();
      // Every memory embedded, at most one batch (the one in flight at the kill) twice.
      expect(new Set(embedded).size).toBe(MEMORIES);
      expect(embedded.length).toBeLessThanOrEqual(MEMORIES + BATCH);
      const again = client(third.url, key);
      const ready = await fetch(`${third.url}/readyz`).then((response) => response.json());
      expect(ready).toEqual({ status: 'ready', checks: { store: 'ok', index: 'ok' } });
      // Nothing lost: every memory is listed; and learning works under the new embedder.
      let listed = 0;
      let cursor: string | null = null;
      do {
        const page: { status: number; body: { memories: unknown[]; next_cursor: string | null } } = await again.get(`/v1/agents/${agentId}/memories?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
        expect(page.status).toBe(200);
        listed += page.body.memories.length;
        cursor = page.body.next_cursor;
      } while (cursor);
      expect(listed).toBe(MEMORIES);
      const learned = await observeAndSettle(again, agentId, threadId, [said('The parcel for the roof garden arrived on Friday.')]);
      expect(learned.status).toBe('committed');
      const response = await again.post(threadPaths(agentId, threadId).chat, ask('When did the parcel for the roof garden arrive?'));
      expect(response.status).toBe(200);
      expect(response.body.message).toContain('roof garden');
    } finally {
      await third.stop();
    }
  }, TIMEOUT_MS);
});
