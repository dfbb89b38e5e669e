import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMemoryService, inMemoryStore, RATE_LIMITED_OPERATIONS, silentLogger, type MemoryService, type Store } from '@memory-agents/core';
import { createHandler, type HandlerOptions } from '../create-handler.js';
import { handleClientError } from '../node/client-error.js';

/** A service behind a real loopback node:http server, with one key, a ready agent and a thread (tests only). */
export type TestServer = {
  service: MemoryService;
  server: Server;
  url: string;
  key: string;
  agentId: string;
  threadId: string;
  /** `/v1/agents/{agent}/threads/{thread}` */
  base: string;
  close(): Promise<void>;
};

/** Request-rate windows wide enough that a test never meets them. */
export const UNMETERED = Object.fromEntries(
  RATE_LIMITED_OPERATIONS.map((operation) => [operation, { subject: { limit: 1_000_000, windowSeconds: 1 }, organization: { limit: 1_000_000, windowSeconds: 1 } }]),
);

export async function startTestServer(options: { store?: Store; limits?: Record<string, unknown>; handler?: HandlerOptions } = {}): Promise<TestServer> {
  const service = createMemoryService({ store: options.store ?? inMemoryStore(), logger: silentLogger });
  await service.start();
  const org = await service.admin.createOrganization({ name: 'Acme', limits: { rateLimits: UNMETERED, ...options.limits } });
  const { key } = await service.admin.createKey({ organizationId: org.organizationId });
  const server = createServer(createHandler(service, { logger: silentLogger, ...options.handler }));
  server.on('clientError', handleClientError);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${url}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return (await response.json()) as Record<string, string>;
  };
  const agent = await call('POST', '/v1/agents', { agent_config: { role: 'r', objective: 'o' } });
  await service.idle();
  const thread = await call('POST', `/v1/agents/${agent.agent_id}/threads`, {});
  return {
    service,
    server,
    url,
    key,
    agentId: agent.agent_id!,
    threadId: thread.thread_id!,
    base: `/v1/agents/${agent.agent_id}/threads/${thread.thread_id}`,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await service.stop();
    },
  };
}
