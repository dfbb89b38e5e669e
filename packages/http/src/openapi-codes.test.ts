import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryService, inMemoryStore, silentLogger } from '@memory-agents/core';
import { createHandler } from './create-handler.js';
import { buildOpenApiDocument } from './openapi.js';
import { ROUTES } from './routes/index.js';

// The error codes the document lists per route must include what the route really answers: each
// route is called with unknown ids, an empty body, malformed JSON and a form without its file,
// and every error answer must be documented under its status for that operation.
type Responses = Record<string, { description: string }>;
const document = buildOpenApiDocument(ROUTES) as { paths: Record<string, Record<string, { responses: Responses }>> };

let server: Server;
let url: string;
let key: string;
let agentId: string;
let threadId: string;
const service = createMemoryService({ store: inMemoryStore(), logger: silentLogger });

beforeAll(async () => {
  await service.start();
  const org = await service.admin.createOrganization({ name: 'Acme' });
  key = (await service.admin.createKey({ organizationId: org.organizationId })).key;
  server = createServer(createHandler(service, { logger: silentLogger }));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const agent = (await (await fetch(`${url}/v1/agents`, { method: 'POST', headers, body: JSON.stringify({ agent_config: { role: 'r', objective: 'o' } }) })).json()) as { agent_id: string };
  agentId = agent.agent_id;
  await service.idle();
  const thread = (await (await fetch(`${url}/v1/agents/${agentId}/threads`, { method: 'POST', headers, body: '{}' })).json()) as { thread_id: string };
  threadId = thread.thread_id;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await service.stop();
});

const UNKNOWN: Record<string, string> = {
  agent_id: 'agent_00000000000000000000000000',
  thread_id: 'thread_00000000000000000000000000',
  observation_id: 'obs_00000000000000000000000000',
  source_id: `src_${'0'.repeat(32)}`,
  memory_id: 'mem_00000000000000000000000000',
};

function fill(path: string, ids: Record<string, string>): string {
  return path.replace(/\{(\w+)\}/g, (_match, name: string) => ids[name] ?? UNKNOWN[name]!);
}

describe('documented error codes', () => {
  it('cover what every route answers to unknown ids, empty and malformed bodies and a form without a file', async () => {
    const undocumented: string[] = [];
    let errors = 0;
    for (const route of ROUTES) {
      const documented = document.paths[route.path]![route.method.toLowerCase()]!.responses;
      const attempts: { path: string; body?: string | FormData; type?: string }[] = [{ path: fill(route.path, {}) }];
      if (route.method !== 'DELETE') {
        const real = fill(route.path, { agent_id: agentId, thread_id: threadId });
        if (route.body) attempts.push({ path: real, body: '{}', type: 'application/json' }, { path: real, body: '{"no', type: 'application/json' });
        else if (route.upload) {
          const form = new FormData();
          form.append('strategy', 'auto');
          attempts.push({ path: real, body: form });
        } else attempts.push({ path: real });
      }
      for (const attempt of attempts) {
        const response = await fetch(`${url}${attempt.path}`, {
          method: route.method,
          headers: { authorization: `Bearer ${key}`, ...(attempt.type ? { 'content-type': attempt.type } : {}) },
          ...(attempt.body === undefined ? {} : { body: attempt.body }),
        });
        if (response.ok) {
          await response.body?.cancel();
          continue;
        }
        errors++;
        const { code } = (await response.json()) as { code: string };
        const description = documented[String(response.status)]?.description ?? '';
        if (!description.includes(`\`${code}\``)) undocumented.push(`${route.operationId}: ${response.status} ${code}`);
      }
    }
    expect(undocumented).toEqual([]);
    expect(errors).toBeGreaterThan(ROUTES.length);
  });
});
