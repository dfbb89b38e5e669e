import { readFile } from 'node:fs/promises';
import { CONTRACT_ENTRIES } from '@memory-agents/core/contract';
import { ROUTES } from '@memory-agents/http';
import { describe, expect, it } from 'vitest';
import { createClient } from './create-client.js';

// Every operation of the contract (@memory-agents/core/contract) has an HTTP route, a client call
// and a line in docs/api.md; a new operation missing any of them fails here (issue 40).

const DOCS = new URL('../../../docs/api.md', import.meta.url);
const named = (entry: (typeof CONTRACT_ENTRIES)[number]) => `${entry.group}.${entry.name} (${entry.operation.method} ${entry.operation.path})`;

type Recorded = { method: string; url: URL; headers: Headers };

function recordingClient(recorded: Recorded[]) {
  return createClient({
    baseUrl: 'http://api.test',
    apiKey: 'sp_test_secret',
    fetch: async (input, init) => {
      recorded.push({ method: init?.method ?? 'GET', url: new URL(String(input)), headers: new Headers(init?.headers) });
      return new Response('{}', { status: 200, headers: { 'content-type': 'application/json' } });
    },
  });
}

/** `{agent_id}` -> `agentId`, the name the client's options object gives each path id. */
const camel = (name: string) => name.replace(/_(\w)/g, (_match, letter: string) => letter.toUpperCase());

describe('the contract', () => {
  it('lists each operationId and each method and path once', () => {
    const ids = CONTRACT_ENTRIES.map(({ operation }) => operation.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    const routes = CONTRACT_ENTRIES.map(({ operation }) => `${operation.method} ${operation.path}`);
    expect(new Set(routes).size).toBe(routes.length);
  });

  it('every operation has exactly one HTTP route, and every route serves an operation', () => {
    const missing = CONTRACT_ENTRIES.filter(({ operation }) => ROUTES.filter((route) => route.operation === operation).length !== 1);
    expect(missing.map(named), 'operations with no route (or two): bind it in packages/http/src/routes/').toEqual([]);
    const stray = ROUTES.filter((route) => !CONTRACT_ENTRIES.some(({ operation }) => operation === route.operation));
    expect(stray.map((route) => `${route.method} ${route.path}`), 'routes outside the contract').toEqual([]);
  });

  it('every operation has a client call that sends exactly its method and path, with each id in its place', async () => {
    const recorded: Recorded[] = [];
    const client = recordingClient(recorded) as unknown as Record<string, Record<string, (options: Record<string, unknown>) => unknown>>;
    const wrong: string[] = [];
    for (const entry of CONTRACT_ENTRIES) {
      const call = client[entry.group]?.[entry.name];
      if (typeof call !== 'function') {
        wrong.push(`${named(entry)}: no client call (regenerate: npm run generate -w @memory-agents/client)`);
        continue;
      }
      const names = [...entry.operation.path.matchAll(/\{(\w+)\}/g)].map((match) => match[1]!);
      const ids = Object.fromEntries(names.map((name, at) => [camel(name), `id ${at}/${name}`]));
      const options = { ...ids, ...(entry.operation.upload ? { file: new File(['x'], 'x.txt', { type: 'text/plain' }) } : {}) };
      const before = recorded.length;
      const result = call(options);
      // A stream starts on its first read; the empty answer is no stream, which is not what is tested.
      if (result && typeof (result as AsyncIterator<unknown>).next === 'function') await (result as AsyncIterator<unknown>).next().catch(() => undefined);
      else await result;
      const sent = recorded.slice(before);
      const expected = entry.operation.path.replace(/\{(\w+)\}/g, (_match, name: string) => encodeURIComponent(ids[camel(name)] as string));
      if (sent.length !== 1 || sent[0]!.method !== entry.operation.method || sent[0]!.url.pathname !== expected) {
        wrong.push(`${named(entry)}: sent ${sent.map((request) => `${request.method} ${request.url.pathname}`).join(', ') || 'nothing'}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('every operation has its line in docs/api.md', async () => {
    const docs = await readFile(DOCS, 'utf8');
    const undocumented = CONTRACT_ENTRIES.filter(({ operation }) => !docs.includes(`| \`${operation.method} ${operation.path}\` | ${operation.status} |`));
    expect(undocumented.map(named), 'add a row to the Endpoints table of docs/api.md').toEqual([]);
  });

  it('the client has no call beyond the contract but the waits that poll it', () => {
    const client = recordingClient([]) as unknown as Record<string, unknown>;
    const calls = Object.entries(client).flatMap(([group, member]) =>
      typeof member === 'function' ? [group] : Object.keys(member as object).map((name) => `${group}.${name}`),
    );
    const contract = new Set(CONTRACT_ENTRIES.map(({ group, name }) => `${group}.${name}`));
    expect(calls.filter((call) => !contract.has(call)).sort()).toEqual(['agents.waitUntilReady', 'erasures.waitUntilDone', 'waitForObservation']);
  });
});

describe('a call', () => {
  it('splits its options object into ids, request options and the body or query', async () => {
    const recorded: Recorded[] = [];
    const client = recordingClient(recorded);
    const controller = new AbortController();
    await client.memories.search({ agentId: 'agent/1', query: 'invoices', limit: 3, endUser: 'ana', signal: controller.signal, headers: { 'x-trace': 't1' } });
    await client.memories.list({ agentId: 'agent_1', limit: 5, thread_id: 'thread_1' });
    expect(recorded[0]!.url.pathname).toBe('/v1/agents/agent%2F1/memories/search');
    expect(Object.fromEntries(recorded[0]!.headers)).toMatchObject({ 'x-sp-end-user': 'ana', 'x-trace': 't1', 'content-type': 'application/json' });
    expect(recorded[1]!.url.search).toBe('?limit=5&thread_id=thread_1');
  });

  it('refuses a missing id before sending anything', async () => {
    const recorded: Recorded[] = [];
    const client = recordingClient(recorded);
    await expect(client.threads.get({ agentId: 'agent_1' } as never)).rejects.toThrow('threads.get needs `threadId` (a non-empty string).');
    await expect(client.agents.get({ agentId: '' })).rejects.toThrow(/agents\.get needs `agentId`/);
    expect(recorded).toEqual([]);
  });
});
