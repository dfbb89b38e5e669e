/**
 * The /v1 API inside a Fastify 5 application. Fastify parses JSON itself; the route hands the
 * node handler the raw request with the parsed body on `raw.body`, and `reply.hijack()` lets the
 * handler write the raw response. Multipart bodies are left unread (a parser that does nothing),
 * so the handler streams uploads under its own limits.
 * Run: npx tsx examples/fastify-app.ts
 */
import Fastify from 'fastify';
import { createMemoryService, inMemoryStore } from '@memory-agents/core';
import { createHandler } from '@memory-agents/http';

export async function main(): Promise<{ url: string; key: string; close(): Promise<void> }> {
  const service = createMemoryService({ store: inMemoryStore() });
  await service.start();
  const org = await service.admin.createOrganization({ name: 'Acme' });
  const { key } = await service.admin.createKey({ organizationId: org.organizationId });
  const api = createHandler(service);

  // Fastify's 1 MiB default body limit would refuse a large `observe` before the handler sees it.
  const app = Fastify({ bodyLimit: 32 * 1024 * 1024 });
  app.addContentTypeParser('multipart/form-data', (_request, _payload, done) => done(null));
  app.get('/health', async () => 'hello from the host application\n');
  app.route({
    method: ['GET', 'POST', 'PATCH', 'DELETE'],
    url: '/v1/*',
    handler: async (request, reply) => {
      reply.hijack();
      await api(Object.assign(request.raw, { body: request.body }), reply.raw);
    },
  });

  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  return {
    url,
    key,
    async close() {
      await app.close();
      await service.stop();
    },
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const running = await main();
  console.log(`API on ${running.url}/v1 with key ${running.key}; Ctrl-C to stop`);
}
