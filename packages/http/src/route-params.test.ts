import { ERROR_CODES, createMemoryService, inMemoryStore, silentLogger, type ErrorCode, type MemoryService } from '@memory-agents/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetchHandler } from './create-fetch-handler.js';
import type { Route } from './route.js';
import { ROUTES } from './routes/index.js';

// Every `{name}` of every route, sent missing (an empty segment) or as a value no resource has:
// each answer is the spec's error for it (404 `not_found` for a path no route has, or one of the
// route's own codes), never a crash (500 `internal_error`).

const RATES = Object.fromEntries(
  ['thread_create', 'observe', 'observe_respond', 'chat', 'observe_file', 'image_upload'].map((operation) => [
    operation,
    { subject: { limit: 100_000, windowSeconds: 10 }, organization: { limit: 100_000, windowSeconds: 10 } },
  ]),
);

/** Values a path segment may carry that name nothing: not an id, a well-formed unknown id, bad escapes, a decoded slash, NUL, very long. */
const BAD_VALUES = ['x', 'agent_01ARZ3NDEKTSV4RRFFQ69G5FAV', 'src_00000000000000000000000000000000', '%E0%A4%A', 'a%2Fb', '%00', '..', 'a'.repeat(5000)];

let service: MemoryService;
let api: ReturnType<typeof createFetchHandler>;
let key: string;
let valid: Record<string, string>;

beforeAll(async () => {
  // Webhooks on (an opt-in extension): their routes answer about the path, not 503.
  service = createMemoryService({ store: inMemoryStore(), logger: silentLogger, webhooks: {} });
  await service.start();
  const org = await service.admin.createOrganization({ name: 'Acme', limits: { rateLimits: RATES } as never });
  key = (await service.admin.createKey({ organizationId: org.organizationId })).key;
  api = createFetchHandler(service, { logger: silentLogger });
  const caller = await service.as(org.organizationId);
  const agent = await service.agents.create({ caller, body: { agent_config: { role: 'r', objective: 'o' } } });
  await service.idle();
  const thread = await service.threads.create({ caller, agentId: agent.agent_id, body: {} });
  const observed = await service.observe({ caller, agentId: agent.agent_id, threadId: thread.thread_id, body: { observations: [{ content: [{ type: 'text', text: 'Invoices go to billing.' }] }] } });
  await service.idle();
  valid = { agent_id: agent.agent_id, thread_id: thread.thread_id, observation_id: observed.observation_id, source_id: 'src_0123456789abcdef0123456789abcdef' };
});
afterAll(async () => {
  await service.stop();
});

/** A request body the route accepts in shape, so what is answered is about the path. */
function bodyOf(route: Route): string | FormData | undefined {
  if (route.upload) {
    const form = new FormData();
    form.append('file', new Blob(['Invoices go to billing.'], { type: 'text/plain' }), 'a.txt');
    return form;
  }
  if (!route.body) return undefined;
  if (route.operationId === 'recall') return JSON.stringify({ query: 'invoices' });
  if (route.operationId === 'observe') return JSON.stringify({ observations: [{ content: [{ type: 'text', text: 'hi' }] }] });
  if (route.operationId === 'updateAgent') return JSON.stringify({});
  return JSON.stringify({ turn_id: 't1', message: 'Where do invoices go?' });
}

async function send(route: Route, params: Record<string, string>) {
  const path = route.path.replace(/\{(\w+)\}/g, (_match, name: string) => params[name]!);
  const body = bodyOf(route);
  const headers: Record<string, string> = { authorization: `Bearer ${key}` };
  if (typeof body === 'string') headers['content-type'] = 'application/json';
  const response = await api(new Request(`http://host${path}`, { method: route.method, headers, ...(body === undefined ? {} : { body }) }));
  const text = await response.text();
  return { status: response.status, body: JSON.parse(text) as { code: ErrorCode; error: string } };
}

const withParams = ROUTES.filter((route) => route.path.includes('{'));

describe('route params', () => {
  it('every route with params is covered', () => {
    expect(withParams.length).toBeGreaterThan(15);
  });

  for (const route of withParams) {
    const names = [...route.path.matchAll(/\{(\w+)\}/g)].map((match) => match[1]!);
    for (const name of names) {
      it(`${route.method} ${route.path}: {${name}} missing is 404 not_found`, async () => {
        const answer = await send(route, { ...valid, [name]: '' });
        expect(answer.status).toBe(404);
        expect(answer.body.code).toBe('not_found');
      });

      it(`${route.method} ${route.path}: {${name}} naming nothing is one of the route's errors`, async () => {
        for (const value of BAD_VALUES) {
          const answer = await send(route, { ...valid, [name]: value });
          const allowed: string[] = [...route.codes, 'invalid_request', 'not_found'];
          expect({ value, code: answer.body.code }).toEqual({ value, code: expect.toBeOneOf(allowed) });
          expect(answer.status).toBeGreaterThanOrEqual(400);
          expect(answer.status).toBeLessThan(500);
          if (answer.body.code !== 'invalid_request') expect(answer.status).toBe(ERROR_CODES[answer.body.code].status);
          expect(answer.body.error.length).toBeGreaterThan(10);
        }
      });
    }
  }
});
