/**
 * Serving the /v1 API from your own node:http server next to your own routes: the handler passes
 * paths outside the API to `next`. The same handler mounts in Express (express-app.ts) and
 * Fastify (fastify-app.ts); Hono, Next.js, Bun and Deno take `createFetchHandler` (hono-app.ts).
 * Run: npx tsx examples/mount-handler.ts
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMemoryService, inMemoryStore } from '@memory-agents/core';
import { createHandler } from '@memory-agents/http';

export async function main(): Promise<{ url: string; key: string; close(): Promise<void> }> {
  const service = createMemoryService({ store: inMemoryStore() });
  await service.start();
  const org = await service.admin.createOrganization({ name: 'Acme' });
  const { key } = await service.admin.createKey({ organizationId: org.organizationId });
  const api = createHandler(service);

  const server = http.createServer((request, response) => {
    void api(request, response, () => {
      // Not an API path: the host application's own route.
      response.setHeader('Content-Type', 'text/plain');
      response.end('hello from the host application\n');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
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
