/**
 * What the client and the route table cost per call, against another build (issue 40: the client's
 * calls are derived from the contract, routes bind contract entries).
 *
 *   npm run build && npx tsx bench/client-overhead.ts --baseline BASE [--calls 20000] [--rounds 5]
 *
 * Times are CPU time of this process (user + system) per call, medians over rounds.
 * BASE is another checkout's root with its packages built (e.g. main). Rounds alternate builds and
 * which of them goes first.
 * 1. Client: `memories.search` and `threads.observe` against a fetch that answers `{}` at once, so
 *    only the client's own work is timed (path, headers, body, reading the answer). Positional
 *    (before issue 40) or options-object calls are told apart by the call's arity.
 * 2. HTTP: `GET /v1/session` and `POST .../memories/search` (empty agent: 404 after the route,
 *    authentication and body read) through each build's fetch handler on an in-memory service.
 */
import { argument } from './support/args.js';

const baseline = argument('baseline', '');
if (!baseline) throw new Error('--baseline BASE (a checkout with built packages) is required');
const calls = Number(argument('calls', '20000'));
const rounds = Number(argument('rounds', '5'));
const here = new URL('../', import.meta.url).pathname;

type Loaded = { name: string; client: any; http: any; core: any };
async function load(root: string, name: string): Promise<Loaded> {
  const client = await import(`${root}/packages/client/dist/index.js`);
  const http = await import(`${root}/packages/http/dist/index.js`);
  const core = await import(`${root}/packages/core/dist/index.js`);
  return { name, client, http, core };
}

/** CPU time (user + system) this process spent since `started`, in µs: steadier than wall time on a loaded machine. */
function cpuMicros(started: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(started);
  return used.user + used.system;
}

const ok = async () => new Response('{}', { status: 200, headers: { 'content-type': 'application/json' } });

async function clientRound(build: Loaded): Promise<number> {
  const client = build.client.createClient({ baseUrl: 'http://api.test', apiKey: 'sp_x_y', fetch: ok });
  const positional = client.memories.search.length > 1;
  const started = process.cpuUsage();
  for (let i = 0; i < calls; i++) {
    if (positional) {
      await client.memories.search('agent_1', { query: 'invoices', limit: 5 });
      await client.threads.observe('agent_1', 'thread_1', { observations: [{ content: [{ type: 'text', text: 'hi' }] }] }, { idempotencyKey: `k${i}` });
    } else {
      await client.memories.search({ agentId: 'agent_1', query: 'invoices', limit: 5 });
      await client.threads.observe({ agentId: 'agent_1', threadId: 'thread_1', observations: [{ content: [{ type: 'text', text: 'hi' }] }], idempotencyKey: `k${i}` });
    }
  }
  return cpuMicros(started) / (calls * 2);
}

async function httpSetup(build: Loaded) {
  const service = build.core.createMemoryService({ store: build.core.inMemoryStore(), logger: build.core.silentLogger });
  await service.start();
  const org = await service.admin.createOrganization({ name: 'Bench' });
  const { key } = await service.admin.createKey({ organizationId: org.organizationId });
  const handler = build.http.createFetchHandler(service, { logger: build.core.silentLogger });
  return { service, key, handler };
}

async function httpRound(setup: Awaited<ReturnType<typeof httpSetup>>): Promise<number> {
  const headers = { authorization: `Bearer ${setup.key}` };
  const started = process.cpuUsage();
  const n = Math.floor(calls / 4);
  for (let i = 0; i < n; i++) {
    await (await setup.handler(new Request('http://h/v1/session', { headers }))).text();
    const search = new Request('http://h/v1/agents/agent_01ARZ3NDEKTSV4RRFFQ69G5FAV/memories/search', {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: '{"query":"invoices"}',
    });
    await (await setup.handler(search)).text();
  }
  return cpuMicros(started) / (n * 2);
}

const builds = [await load(baseline.replace(/\/$/, ''), 'baseline'), await load(here.replace(/\/$/, ''), 'this build')];
const setups = await Promise.all(builds.map(httpSetup));
const results = builds.map(() => ({ client: [] as number[], http: [] as number[] }));
for (let round = 0; round < rounds; round++) {
  // Alternate which build goes first, so neither always runs on the other's garbage.
  for (const at of round % 2 === 0 ? [0, 1] : [1, 0]) {
    results[at]!.client.push(await clientRound(builds[at]!));
    results[at]!.http.push(await httpRound(setups[at]!));
  }
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
for (const [at, build] of builds.entries()) {
  console.log(`${build.name}: client ${median(results[at]!.client).toFixed(2)} µs CPU/call, http ${median(results[at]!.http).toFixed(1)} µs CPU/request (medians of ${rounds} rounds)`);
}
console.log(`ratio (this/baseline): client ${(median(results[1]!.client) / median(results[0]!.client)).toFixed(2)}, http ${(median(results[1]!.http) / median(results[0]!.http)).toFixed(2)}`);
for (const setup of setups) await setup.service.stop();
