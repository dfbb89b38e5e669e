import { randomBytes } from 'node:crypto';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMemoryService, silentLogger, type MemoryService, type WebhookOptions } from '@memory-agents/core';
import { postgresUrl } from '@memory-agents/core/testing';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
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

  describe('one process', () => {
    const cleanups: (() => Promise<void>)[] = [];
    afterEach(async () => {
      while (cleanups.length > 0) await cleanups.pop()!();
    });

    /** Polls until `check` holds; fails with `what` after a generous bound. */
    async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
      for (let i = 0; i < 2000; i++) {
        if (await check()) return;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      throw new Error(`timed out waiting until ${what}`);
    }

    /** A receiver answering 200, or (`hang`) holding every request open until `release()`. */
    async function receiver(hang: boolean) {
      let holding = hang;
      const received: { observationId: string }[] = [];
      const open = new Set<ServerResponse>();
      const server = createServer((request, response) => {
        let body = '';
        request.on('data', (chunk) => (body += chunk));
        request.on('end', () => {
          received.push({ observationId: JSON.parse(body).data.observation_id });
          if (!holding) return response.end();
          open.add(response);
          response.on('close', () => open.delete(response));
        });
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const release = () => {
        holding = false;
        for (const response of open) response.end();
      };
      cleanups.push(async () => {
        release();
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
      });
      return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/in`, received, open, release };
    }

    async function service() {
      const schema = `ma_webhooks_${randomBytes(6).toString('hex')}`;
      // A long attempt limit: a hanging receiver's attempt stays open for the whole test.
      const memory = createMemoryService({ store: postgresStore({ connectionString: databaseUrl!, schema }), logger: silentLogger, webhooks: { allowedHosts: ['127.0.0.1'], pollMs: 20, retryBaseMs: 10, timeoutMs: 120_000 } });
      await memory.start();
      cleanups.push(async () => {
        const client = new pg.Client({ connectionString: databaseUrl });
        await client.connect();
        await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
        await client.end();
      });
      cleanups.push(() => memory.stop());
      const organization = async (name: string) => {
        const caller = await memory.as((await memory.admin.createOrganization({ name })).organizationId);
        const agent = await memory.agents.create({ caller, body: { agent_config: { role: 'r', objective: 'o' } } });
        await until(async () => (await memory.agents.get({ caller, agentId: agent.agent_id })).status === 'ready', 'the agent is ready');
        const thread = await memory.threads.create({ caller, agentId: agent.agent_id });
        /** Observes in a thread (a new one unless given) and waits until it is learned. */
        const learned = async (text: string, threadId = thread.thread_id) => {
          const { observation_id } = await memory.observe({ caller, agentId: agent.agent_id, threadId, body: { observations: [{ speaker: 'ana', content: [{ type: 'text', text }] }] } });
          await until(async () => (await memory.observationStatus({ caller, agentId: agent.agent_id, threadId, observationId: observation_id })).status === 'committed', 'learned');
          return observation_id;
        };
        const newThread = async () => (await memory.threads.create({ caller, agentId: agent.agent_id })).thread_id;
        return { caller, learned, newThread };
      };
      return { memory, organization };
    }

    it('sends another organization\'s event while a slow receiver\'s attempts are open, holding at most 4 of them', async () => {
      const slow = await receiver(true);
      const fast = await receiver(false);
      const { memory, organization } = await service();
      const a = await organization('Slow');
      const b = await organization('Fast');
      await memory.webhooks.create({ caller: a.caller, body: { url: slow.url, events: ['observation.committed'] } });
      await memory.webhooks.create({ caller: b.caller, body: { url: fast.url, events: ['observation.committed'] } });
      for (let i = 0; i < 6; i++) await a.learned(`Slow fact ${i}.`, await a.newThread());
      await until(() => slow.open.size >= 1, 'a slow attempt is open');
      const sent = await b.learned('Fast fact.');
      await until(() => fast.received.length === 1, 'the fast receiver got its event while the slow attempts are open');
      expect(fast.received[0]!.observationId).toBe(sent);
      expect(slow.open.size).toBeGreaterThanOrEqual(1);
      expect(slow.open.size).toBeLessThanOrEqual(4);
      slow.release();
      await until(() => slow.received.length === 6, 'every slow event once answered');
    }, 120_000);

    it('keeps the events of a disabled endpoint and sends them, in order, once it is re-enabled', async () => {
      const target = await receiver(false);
      const { memory, organization } = await service();
      const a = await organization('Paused');
      const { webhook_id } = await memory.webhooks.create({ caller: a.caller, body: { url: target.url, events: ['observation.committed'] } });
      const before = await a.learned('Before.');
      await until(() => target.received.length === 1, 'the first event');
      await memory.webhooks.update({ caller: a.caller, webhookId: webhook_id, body: { enabled: false } });
      const during = [await a.learned('During one.'), await a.learned('During two.')];
      const log = (await memory.webhooks.deliveries({ caller: a.caller, webhookId: webhook_id })).deliveries;
      expect(log.map((d) => d.status)).toEqual(['pending', 'pending', 'delivered']);
      await memory.webhooks.update({ caller: a.caller, webhookId: webhook_id, body: { enabled: true } });
      await until(() => target.received.length === 3, 'the kept events after re-enabling');
      expect(target.received.map((r) => r.observationId)).toEqual([before, ...during]);
    }, 120_000);
  });
});
