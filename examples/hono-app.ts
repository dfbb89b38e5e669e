/**
 * The /v1 API inside a Hono application through the fetch handler (`Request -> Response`), served
 * on Node by @hono/node-server. The same `app.fetch` runs unchanged on Bun (`Bun.serve`), Deno
 * (`Deno.serve`) and Cloudflare-style runtimes with Node compatibility.
 * Run: npx tsx examples/hono-app.ts
 */
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { createMemoryService, inMemoryStore } from '@memory-agents/core';
import { createFetchHandler } from '@memory-agents/http';

export async function main(): Promise<{ url: string; key: string; close(): Promise<void> }> {
  const service = createMemoryService({ store: inMemoryStore() });
  await service.start();
  const org = await service.admin.createOrganization({ name: 'Acme' });
  const { key } = await service.admin.createKey({ organizationId: org.organizationId });
  const api = createFetchHandler(service);

  const app = new Hono();
  app.get('/health', (c) => c.text('hello from the host application\n'));
  // `c.req.raw` is the unread Web Request with its full path (`app.mount` would strip a prefix).
  app.all('/v1/*', (c) => api(c.req.raw));

  const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const started = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(started));
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    key,
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await service.stop();
    },
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const running = await main();
  console.log(`API on ${running.url}/v1 with key ${running.key}; Ctrl-C to stop`);
}
