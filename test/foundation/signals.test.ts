import { describe, expect, it } from 'vitest';
import { client, readyAgent } from '../support/client.js';
import { removeDataDir, startServerProcess } from '../support/server.js';

/** Issue 29: repeated SIGTERMs (a supervisor, `kill` of a process group and its leader) must not cut a graceful shutdown short. */
describe('memory-agents serve under repeated signals', () => {
  it('finishes the graceful shutdown on two quick SIGTERMs (exit 0), and the data dir reopens with the acknowledged observation', async () => {
    const first = await startServerProcess();
    const dataDir = first.dataDir;
    try {
      const api = client(first.url, first.key);
      const agent = await readyAgent(api);
      const thread = await api.post(`/v1/agents/${agent.agent_id}/threads`, { title: 'signals' });
      const path = `/v1/agents/${agent.agent_id}/threads/${thread.body.thread_id}`;
      const observed = await api.post(`${path}/observe`, {
        observations: Array.from({ length: 30 }, (_, i) => ({ content: [{ type: 'text', text: `Fact ${i}: the blue locker holds spare key number ${i}.` }] })),
      });
      expect(observed.status, observed.text).toBe(202);

      first.child.kill('SIGTERM');
      await new Promise((resolve) => setTimeout(resolve, 30));
      first.child.kill('SIGTERM');
      expect(await first.stop()).toBe(0);
      expect(first.child.signalCode).toBeNull();
      expect(first.output()).toContain('SIGTERM again, still shutting down');

      const restarted = await startServerProcess({ dataDir });
      try {
        const again = client(restarted.url, first.key);
        const status = await again.get(`${path}/observe/${observed.body.observation_id}/status`);
        expect(status.status, status.text).toBe(200);
        expect(status.body.observation_id).toBe(observed.body.observation_id);
      } finally {
        expect(await restarted.stop('SIGTERM')).toBe(0);
      }
    } finally {
      await first.stop();
      await removeDataDir(dataDir);
    }
  });
});
