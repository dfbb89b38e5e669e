/**
 * Reliability under hostile input: the fuzz test's generator at volume.
 *
 *   npm run build && npx tsx bench/reliability-fuzz.ts [--requests 10000] [--concurrency 8] [--seed 20261124]
 *
 * Starts the server in process on the embedded default (PGlite + LanceDB in a temp data dir, the
 * node:http server of startServer with its default limits), opens the organization's request
 * windows, creates a ready agent and a thread, then sends `--requests` hostile requests drawn by
 * fast-check from every route of the route table (`--concurrency` in flight). Counts answers by
 * status and route; a 5xx, an error body outside the spec's shape, or a request without an answer
 * (reset, timeout) is a failure and the first ones are printed. Ends with a health check. Exit
 * code 1 on any failure.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { silentLogger } from '@memory-agents/core';
import { startServer } from '@memory-agents/server';
import { openFuzzTarget } from '../test/reliability/fuzz-target.js';
import { describeRequest, hostileRequest, sendAndCheck, type FuzzOutcome } from '../test/reliability/hostile-requests.js';
import { argument } from './support/args.js';

const requests = Number(argument('requests', '10000'));
const concurrency = Number(argument('concurrency', '8'));
const seed = Number(argument('seed', '20261124'));

const dataDir = await mkdtemp(join(tmpdir(), 'ma-fuzz-bench-'));
const server = await startServer({ dataDir, port: 0, logger: silentLogger });
let failed = false;
try {
  const target = await openFuzzTarget(server);
  const drawn = fc.sample(hostileRequest(target), { seed, numRuns: requests });
  const byStatus = new Map<number, number>();
  const byRoute = new Map<string, number>();
  const failures: FuzzOutcome[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < drawn.length) {
        const request = drawn[next++]!;
        const outcome = await sendAndCheck(target, request);
        byStatus.set(outcome.status, (byStatus.get(outcome.status) ?? 0) + 1);
        byRoute.set(request.route, (byRoute.get(request.route) ?? 0) + 1);
        if (outcome.problem !== null) failures.push(outcome);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const count = (test: (status: number) => boolean) => [...byStatus].filter(([status]) => test(status)).reduce((sum, [, n]) => sum + n, 0);
  const health = await fetch(`${target.url}/v1/session`, { headers: { authorization: `Bearer ${target.key}` } });
  console.log(`requests: ${drawn.length} in ${seconds.toFixed(1)} s (${(drawn.length / seconds).toFixed(0)}/s), concurrency ${concurrency}, seed ${seed}`);
  console.log(`2xx: ${count((s) => s >= 200 && s < 300)}  4xx: ${count((s) => s >= 400 && s < 500)}  5xx: ${count((s) => s >= 500)}  no answer (reset/timeout): ${count((s) => s === 0)}`);
  console.log(`error bodies outside the spec's shape: ${failures.filter((f) => f.problem?.startsWith('error body')).length}`);
  console.log(`by status: ${[...byStatus].sort(([a], [b]) => a - b).map(([status, n]) => `${status}: ${n}`).join(', ')}`);
  console.log(`by route: ${[...byRoute].sort(([a], [b]) => a.localeCompare(b)).map(([route, n]) => `${route} ${n}`).join(', ')}`);
  console.log(`health afterwards: GET /v1/session ${health.status}`);
  for (const failure of failures.slice(0, 10)) console.log(`FAIL ${failure.status} ${failure.problem}\n  ${describeRequest(failure.request).slice(0, 1500)}`);
  failed = failures.length > 0 || health.status !== 200;
} finally {
  await server.close();
  await rm(dataDir, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
