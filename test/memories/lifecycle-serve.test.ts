import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, readyAgent, type Client } from '../support/client.js';
import { removeDataDir, runCli, startServerProcess, type ServerProcess } from '../support/server.js';
import { newThread, pollStatus, said, threadPaths } from '../learning/learning-support.js';

// Forgetting (issue 42) through the built `serve` on the embedded default: the operator's restore
// window (`--restore-window-days`) is the one a forgotten memory gets, and the memory is hidden and
// restored over HTTP; a bad window is refused before the server starts.

let server: ServerProcess;
let api: Client;

beforeAll(async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'ma-e2e-'));
  server = await startServerProcess({ dataDir, args: ['--data', dataDir, '--restore-window-days', '30', '--expired-retention-days', '0'] });
  api = client(server.url, server.key);
}, 120_000);
afterAll(async () => {
  await server?.stop();
  if (server) await removeDataDir(server.dataDir);
});

describe('forget and restore through serve', () => {
  it('gives a forgotten memory the operator window, hides it from recall, and restores it', async () => {
    const agentId = (await readyAgent(api, { role: 'support', objective: 'help' })).agent_id;
    const threadId = await newThread(api, agentId);
    const paths = threadPaths(agentId, threadId);
    const accepted = await api.post(paths.observe, { observations: [said('My locker number at the gym is 4417.')] });
    expect(accepted.status, accepted.text).toBe(202);
    expect((await pollStatus(api, paths.status(accepted.body.observation_id))).status).toBe('committed');
    const memoryId = (await api.get(`/v1/agents/${agentId}/memories`)).body.memories[0].memory_id as string;

    const forgotten = await api.post(`/v1/agents/${agentId}/memories/${memoryId}/forget`, { reason: 'asked to' });
    expect(forgotten.status, forgotten.text).toBe(200);
    const { at, restore_until: until } = forgotten.body.forgotten as { at: string; restore_until: string };
    expect(Date.parse(until) - Date.parse(at)).toBe(30 * 86_400_000);
    expect((await api.post(`/v1/agents/${agentId}/recall`, { query: 'What is my gym locker number?' })).body.memory_context).not.toContain('4417');

    const restored = await api.post(`/v1/agents/${agentId}/memories/${memoryId}/restore`);
    expect(restored.status, restored.text).toBe(200);
    expect((await api.post(`/v1/agents/${agentId}/recall`, { query: 'What is my gym locker number?' })).body.memory_context).toContain('4417');
  });

  it('serve refuses a --restore-window-days or --expired-retention-days out of range (exit 2, one line)', async () => {
    for (const [option, bad] of [['--restore-window-days', '0'], ['--restore-window-days', '-1'], ['--restore-window-days', 'week'], ['--restore-window-days', '3651'], ['--expired-retention-days', '-1'], ['--expired-retention-days', '36501'], ['--expired-retention-days', 'never']] as const) {
      const result = await runCli(['serve', '--port', '0', '--data', `${server.dataDir}-never`, option, bad]);
      expect({ option, bad, code: result.code }).toEqual({ option, bad, code: 2 });
      expect(result.stderr).toContain(option);
    }
  });
});
