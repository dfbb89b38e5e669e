import { ROUTES } from '@memory-agents/http';
import { describe, expect, it } from 'vitest';
import { createClient } from './create-client.js';

// Every route of the /v1 API is reachable through a client method: a route added without one
// fails here (issue 40). Each method is called with placeholder arguments against a fetch that
// records what it was asked and answers an empty 200; the recorded requests are matched against
// the route table's method and path templates.

/** Methods that only compose others (polling): they reach no route of their own. */
const COMPOSED = new Set(['agents.waitUntilReady', 'erasures.waitUntilDone', 'waitForObservation']);

type Recorded = { method: string; path: string };

function recordingClient(recorded: Recorded[]) {
  return createClient({
    baseUrl: 'http://api.test',
    apiKey: 'sp_test_secret',
    fetch: async (input, init) => {
      recorded.push({ method: init?.method ?? 'GET', path: new URL(String(input)).pathname });
      return new Response('{}', { status: 200, headers: { 'content-type': 'application/json' } });
    },
  });
}

/** Every function of the client, by its dotted name. */
function methodsOf(value: object, prefix = ''): [string, (...args: unknown[]) => unknown][] {
  return Object.entries(value).flatMap(([name, member]): [string, (...args: unknown[]) => unknown][] => {
    const dotted = prefix + name;
    if (typeof member === 'function') return [[dotted, member as (...args: unknown[]) => unknown]];
    return member && typeof member === 'object' ? methodsOf(member, `${dotted}.`) : [];
  });
}

/** Calls a method with placeholder ids, then with a file in each position until it sends a request. */
async function callWithPlaceholders(method: (...args: unknown[]) => unknown, recorded: Recorded[]): Promise<void> {
  const ids = ['id_1', 'id_2', 'id_3', 'id_4'];
  const attempts = [ids, ...ids.map((_, at) => ids.map((id, i) => (i === at ? new File(['x'], 'x.txt', { type: 'text/plain' }) : id)))];
  for (const args of attempts) {
    const before = recorded.length;
    try {
      const result = method(...args);
      if (result && typeof (result as AsyncIterator<unknown>).next === 'function') await (result as AsyncIterator<unknown>).next();
      else await result;
    } catch {
      // A placeholder of the wrong kind (a file where an id goes), or the empty answer read as a
      // stream: what matters is the request that went out.
    }
    if (recorded.length > before) return;
  }
}

/** A route template as a pattern over the placeholder-filled paths. */
const templatePattern = (path: string) => new RegExp(`^${path.replace(/\{[^}]+\}/g, '[^/]+')}$`);

describe('the client covers the route table', () => {
  it('every /v1 route has a client method that sends exactly its method and path', async () => {
    const recorded: Recorded[] = [];
    const client = recordingClient(recorded);
    const methods = methodsOf(client).filter(([name]) => !COMPOSED.has(name));
    const unsent: string[] = [];
    for (const [name, method] of methods) {
      const before = recorded.length;
      await callWithPlaceholders(method, recorded);
      if (recorded.length === before) unsent.push(name);
    }
    expect(unsent, 'client methods that sent no request').toEqual([]);

    const uncovered = ROUTES.filter((route) => !recorded.some((request) => request.method === route.method && templatePattern(route.path).test(request.path)));
    expect(
      uncovered.map((route) => `${route.method} ${route.path}`),
      'routes with no client method: add one to packages/client/src/create-client.ts',
    ).toEqual([]);
    // And no client method sends a request no route answers.
    const stray = recorded.filter((request) => !ROUTES.some((route) => route.method === request.method && templatePattern(route.path).test(request.path)));
    expect(stray, 'client requests no route answers').toEqual([]);
  });
});
