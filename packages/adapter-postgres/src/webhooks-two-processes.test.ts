import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMemoryService, silentLogger, type MemoryService, type WebhookOptions } from '@memory-agents/core';
import { postgresUrl } from '@memory-agents/core/testing';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { postgresStore } from './postgres-store.js';

const databaseUrl = postgresUrl('webhooks across two processes');

// Two services on one PostgreSQL schema stand for two server processes: both run the delivery
// worker; every event reaches the receiver once (each claim goes to one of them), and each
// thread's events arrive in the order they happened.
describe.skipIf(!databaseUrl)('webhooks on PostgreSQL, two processes on one database', () => {
  it('delivers every event once, in order per thread, whichever process claims it', async () => {
    const schema = `ma_webhooks_${randomBytes(6).toString('hex')}`;
    const received: { id: string; observationId: string; threadId: string }[] = [];
    const receiver = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk) => (body += chunk));
      request.on('end', () => {
        const event = JSON.parse(body);
        received.push({ id: event.id, observationId: event.data.observation_id, threadId: event.data.thread_id });
        response.end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/in`;
    const webhooks: WebhookOptions = { allowedHosts: ['127.0.0.1'], pollMs: 20, retryBaseMs: 10 };
    const services: MemoryService[] = [];
    try {
      for (let i = 0; i < 2; i++) {
        const service = createMemoryService({ store: postgresStore({ connectionString: databaseUrl!, schema }), logger: silentLogger, webhooks });
        await service.start();
        services.push(service);
      }
      const [first, second] = services as [MemoryService, MemoryService];
      const org = await first.admin.createOrganization({ name: 'Acme' });
      const caller = await first.as(org.organizationId);
      await first.webhooks.create({ caller, body: { url, events: ['observation.committed'] } });
      const agent = await first.agents.create({ caller, body: { agent_config: { role: 'r', objective: 'o' } } });
      await first.idle();
      const threads = [await first.threads.create({ caller, agentId: agent.agent_id }), await first.threads.create({ caller, agentId: agent.agent_id })];
      const sent: Record<string, string[]> = {};
      for (let n = 0; n < 4; n++) {
        for (const [index, thread] of threads.entries()) {
          const service = index === 0 ? first : second;
          const observe = () => service.observe({ caller, agentId: agent.agent_id, threadId: thread.thread_id, body: { observations: [{ speaker: 'ana', content: [{ type: 'text', text: `Fact ${n} of thread ${index}.` }] }] } });
          // An agent learns one job at a time (429 meanwhile): send the next once it is taken.
          let accepted: Awaited<ReturnType<typeof observe>> | null = null;
          while (!accepted) {
            accepted = await observe().catch(async (error: { code?: string }) => {
              if (error.code !== 'rate_limit_exceeded') throw error;
              await new Promise((resolve) => setTimeout(resolve, 20));
              return null;
            });
          }
          const { observation_id } = accepted;
          (sent[thread.thread_id] ??= []).push(observation_id);
        }
      }
      for (let i = 0; i < 3000 && received.length < 8; i++) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(received).toHaveLength(8);
      expect(new Set(received.map((event) => event.id)).size).toBe(8);
      // Jobs of one agent settle in arrival order; their events then go out in that order per thread.
      for (const thread of threads) {
        expect(received.filter((event) => event.threadId === thread.thread_id).map((event) => event.observationId)).toEqual(sent[thread.thread_id]);
      }
    } finally {
      for (const service of services) await service.stop();
      receiver.closeAllConnections();
      await new Promise((resolve) => receiver.close(resolve));
      const client = new pg.Client({ connectionString: databaseUrl });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await client.end();
    }
  }, 60_000);
});
