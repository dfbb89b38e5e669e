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
        observations: Array.from({ length: 100 }, (_, i) => ({ content: [{ type: 'text', text: `Fact ${i}: the blue locker holds spare key number ${i}.` }] })),
      });
      expect(observed.status, observed.text).toBe(202);

      first.child.kill('SIGTERM');
      const until = Date.now() + 10_000;
      while (!first.output().includes('SIGTERM, shutting down') && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 2));
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

  it('stops at once on a second SIGINT during the shutdown, saying so (exit 130)', async () => {
    const server = await startServerProcess();
    try {
      // A learning job in progress, so the graceful shutdown (which waits for it) is still running
      // when the second SIGINT comes.
      const api = client(server.url, server.key);
      const agent = await readyAgent(api);
      const thread = await api.post(`/v1/agents/${agent.agent_id}/threads`, { title: 'interrupted' });
      const observed = await api.post(`/v1/agents/${agent.agent_id}/threads/${thread.body.thread_id}/observe`, {
        observations: Array.from({ length: 100 }, (_, i) => ({ content: [{ type: 'text', text: `Note ${i}: crate ${i} went to dock ${i % 7} on the morning shift.` }] })),
      });
      expect(observed.status, observed.text).toBe(202);
      server.child.kill('SIGINT');
      const until = Date.now() + 10_000;
      while (!server.output().includes('SIGINT, shutting down') && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 2));
      server.child.kill('SIGINT');
      expect(await server.stop()).toBe(130);
      expect(server.output()).toContain('second SIGINT, stopping at once without finishing the shutdown');
    } finally {
      await server.stop();
      await removeDataDir(server.dataDir);
    }
  });
});
