import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMemoryService, inMemoryStore, type MemoryServiceOptions } from '@memory-agents/core';
import { createHandler } from '@memory-agents/http';
import { client, type ApiResponse, type Client } from '../support/client.js';

const SILENT = { debug() {}, info() {}, warn() {}, error() {} };

/** A fixed moment: with a frozen clock no window slides during a test, so boundaries are exact. */
export const FROZEN = Date.parse('2026-03-01T12:00:00.000Z');

export type InProcessServer = {
  url: string;
  key: string;
  api: Client;
  service: ReturnType<typeof createMemoryService>;
  organizationId: string;
  close(): Promise<void>;
};

/**
 * The service mounted with `createHandler` on a loopback port, over real HTTP, for what the CLI
 * server cannot do: a frozen clock (exact window boundaries), a memory writer that fails turns.
 */
export async function startInProcessServer(
  options: Partial<MemoryServiceOptions> = {},
  organization: { credits?: string; limits?: Record<string, unknown> } = {},
): Promise<InProcessServer> {
  const service = createMemoryService({ store: inMemoryStore(), logger: SILENT, clock: { now: () => FROZEN }, ...options });
  await service.start();
  const org = await service.admin.createOrganization({
    name: 'billing',
    ...(organization.credits === undefined ? {} : { credits: organization.credits }),
    ...(organization.limits === undefined ? {} : { limits: organization.limits as never }),
  });
  const { key } = await service.admin.createKey({ organizationId: org.organizationId });
  const server: Server = createServer(createHandler(service, { logger: SILENT }));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    key,
    api: client(url, key),
    service,
    organizationId: org.organizationId,
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await service.stop();
    },
  };
}

/** The three rate-limit headers (and Retry-After) of a response, as numbers. */
export function rateHeaders(response: ApiResponse) {
  const number = (name: string) => (response.headers.get(name) === null ? null : Number(response.headers.get(name)));
  return {
    limit: number('x-ratelimit-limit'),
    remaining: number('x-ratelimit-remaining'),
    reset: number('x-ratelimit-reset'),
    retryAfter: number('retry-after'),
  };
}

/** Headers acting for one person. */
export const as = (person: string) => ({ headers: { 'x-sp-end-user': person } });
