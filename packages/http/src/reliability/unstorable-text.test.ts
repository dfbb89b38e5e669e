import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresStore } from '@memory-agents/adapter-postgres';
import { startTestServer, type TestServer } from './test-server.js';

/**
 * The requests of the issue that answered 500 (PostgreSQL stores neither U+0000 nor an unpaired
 * surrogate): each is now 422 invalid_request naming the field, on a PGlite store; chat and
 * chat/stream answer alike.
 * @see issue "Reliability hardening", item 1
 */
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ store: postgresStore({ dataDir: 'memory://' }) });
});
afterAll(() => server.close());

const post = (method: string, path: string, body: unknown) =>
  fetch(`${server.url}${path}`, { method, headers: { authorization: `Bearer ${server.key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });

const config = (patch: Record<string, unknown>) => ({ agent_config: { role: 'r', objective: 'o', ...patch } });
const observe = (observation: Record<string, unknown>) => ({ observations: [{ content: [{ type: 'text', text: 'fine' }], ...observation }] });

describe.each([
  ['NUL', '\u0000'],
  ['a lone surrogate', '\uD800'],
])('text with %s', (_name, bad) => {
  const cases: [string, string, () => string, unknown, string][] = [
    ['agent role', 'POST', () => '/v1/agents', config({ role: `r${bad}` }), 'agent_config.role'],
    ['agent objective', 'POST', () => '/v1/agents', config({ objective: bad }), 'agent_config.objective'],
    ['agent metadata key', 'POST', () => '/v1/agents', config({ metadata: { [`k${bad}`]: 1 } }), 'agent_config.metadata'],
    ['agent metadata value', 'PATCH', () => `/v1/agents/${server.agentId}`, config({ metadata: { k: { deep: [bad] } } }), 'agent_config.metadata'],
    ['thread title', 'POST', () => `/v1/agents/${server.agentId}/threads`, { title: bad }, 'title'],
    ['thread metadata key', 'POST', () => `/v1/agents/${server.agentId}/threads`, { metadata: { [bad]: 'v' } }, 'metadata'],
    ['observe text', 'POST', () => `${server.base}/observe`, { observations: [{ content: [{ type: 'text', text: `a${bad}b` }] }] }, 'observations.0.content.0.text'],
    ['observe speaker', 'POST', () => `${server.base}/observe`, observe({ speaker: bad }), 'observations.0.speaker'],
    ['observe tag', 'POST', () => `${server.base}/observe`, observe({ tags: [bad] }), 'observations.0.tags.0'],
    ['chat message', 'POST', () => `${server.base}/chat`, { turn_id: 't', message: bad }, 'message'],
    ['chat turn_id', 'POST', () => `${server.base}/chat`, { turn_id: bad, message: 'm' }, 'turn_id'],
    ['chat/stream message', 'POST', () => `${server.base}/chat/stream`, { turn_id: 't', message: bad }, 'message'],
    ['chat/stream turn_id', 'POST', () => `${server.base}/chat/stream`, { turn_id: bad, message: 'm' }, 'turn_id'],
    ['observe-and-respond', 'POST', () => `${server.base}/observe-and-respond`, { turn_id: 't', message: bad }, 'message'],
    ['observe-and-enrich', 'POST', () => `${server.base}/observe-and-enrich`, { turn_id: bad, message: 'm' }, 'turn_id'],
  ];
  it.each(cases)('%s: 422 invalid_request naming the field', async (_label, method, path, body, field) => {
    const response = await post(method, path(), body);
    expect(response.status).toBe(422);
    const answer = (await response.json()) as Record<string, string>;
    expect(answer).toMatchObject({ code: 'invalid_request', request_id: expect.any(String) });
    expect(answer.error).toContain(field);
  });
});
