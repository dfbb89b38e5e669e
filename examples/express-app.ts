/**
 * The /v1 API inside an Express 5 application, mounted under a prefix next to the app's own
 * routes: `app.use('/api/memory', handler)` serves `/api/memory/v1/...`. The app parses JSON
 * globally with `express.json()`; the handler then takes the parsed `req.body` (raise the parser's
 * 100 kB default limit: an `observe` may carry MBs). Citation links carry the prefix (`req.baseUrl`).
 * Run: npx tsx examples/express-app.ts
 */
import type { AddressInfo } from 'node:net';
import express from 'express';
import { createMemoryService, inMemoryStore } from '@memory-agents/core';
import { createHandler } from '@memory-agents/http';

export async function main(): Promise<{ url: string; key: string; close(): Promise<void> }> {
  const service = createMemoryService({ store: inMemoryStore() });
  await service.start();
  const org = await service.admin.createOrganization({ name: 'Acme' });
  const { key } = await service.admin.createKey({ organizationId: org.organizationId });

  const app = express();
  app.use(express.json({ limit: '32mb' }));
  app.get('/health', (_request, response) => {
    response.type('text/plain').send('hello from the host application\n');
  });
  app.use('/api/memory', createHandler(service));

  const server = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/api/memory`,
    key,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await service.stop();
    },
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const running = await main();
  console.log(`API on ${running.url}/v1 with key ${running.key}; Ctrl-C to stop`);
}
