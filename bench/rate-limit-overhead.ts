/**
 * Rate-limit and auth overhead per request on the embedded default.
 *
 *   npm run build && npx tsx bench/rate-limit-overhead.ts [--requests 20000] [--connections 16] [--seconds 15]
 *   DATABASE_URL=postgres://... npx tsx bench/rate-limit-overhead.ts   # also times the shared limiter
 *   npx tsx bench/rate-limit-overhead.ts --cpu-prof DIR   # the server writes a V8 CPU profile into DIR
 *   npx tsx bench/rate-limit-overhead.ts --cli BASE/packages/server/dist/cli.js   # another build
 *
 * 1. Requests/s and latency of `GET /v1/session` on the built server process (PGlite data dir,
 *    in-process limiter: authentication reads the key and the organization, every response gets
 *    its X-RateLimit-* headers) against a bare node:http handler answering a small JSON body in a
 *    child process of its own. Same loopback load generator for both: keep-alive agent,
 *    `--connections` requests in flight, bounded by `--requests` and `--seconds`; one warm-up pass
 *    of 10% is not counted.
 * 2. The limiter alone, in process: `limits.take()` per call on the in-process windows (what a
 *    limited route adds on the embedded default), and on PostgreSQL when DATABASE_URL is set (what
 *    it adds when limits hold across processes).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createMemoryService, inMemoryStore, silentLogger, type Store } from '@memory-agents/core';
import { postgresStore } from '@memory-agents/adapter-postgres';
import { argument } from './support/args.js';

// `--cli PATH`: another build's cli.js (e.g. copied by bench/snapshot-build.sh) to compare.
const CLI = argument('cli', '') || fileURLToPath(new URL('../packages/server/dist/cli.js', import.meta.url));

const requests = Number(argument('requests', '20000'));
const connections = Number(argument('connections', '16'));
const seconds = Number(argument('seconds', '15'));
const cpuProfileDir = argument('cpu-prof', '');

/** Starts a child process and resolves the URL it prints (`listening on http://...`). */
function startChild(args: string[]): Promise<{ url: string; key: string | null; child: ChildProcess }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
      const match = /listening on (http:\/\/\S+)/.exec(output);
      if (match) resolve({ url: match[1]!, key: /^\s+(sp_\S+)$/m.exec(output)?.[1] ?? null, child });
    });
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.once('exit', (code) => reject(new Error(`exited ${code}: ${output}`)));
  });
}

const BARE = `
const http = require('node:http');
const body = JSON.stringify({ authenticated: true, organization_id: 'org_x', organization_name: 'bench' });
http.createServer((req, res) => {
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(body);
}).listen(0, '127.0.0.1', function () { console.log('listening on http://127.0.0.1:' + this.address().port); });
`;

type LoadResult = { done: number; errors: number; seconds: number; rps: number; p50: number; p99: number };

/** Sends GETs over keep-alive connections, `connections` in flight, until `total` or `maxSeconds`. */
async function load(url: string, headers: Record<string, string>, total: number, maxSeconds: number): Promise<LoadResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  const target = new URL(url);
  const latencies: number[] = [];
  let sent = 0;
  let errors = 0;
  const started = performance.now();
  const deadline = started + maxSeconds * 1000;
  const one = () =>
    new Promise<void>((resolve) => {
      const t0 = performance.now();
      const request = http.request({ host: target.hostname, port: target.port, path: target.pathname, method: 'GET', agent, headers }, (response) => {
        response.resume();
        response.on('end', () => {
          if (response.statusCode !== 200) errors++;
          latencies.push(performance.now() - t0);
          resolve();
        });
      });
      request.on('error', () => {
        errors++;
        resolve();
      });
      request.end();
    });
  const worker = async () => {
    while (sent < total && performance.now() < deadline) {
      sent++;
      await one();
    }
  };
  await Promise.all(Array.from({ length: connections }, worker));
  const elapsed = (performance.now() - started) / 1000;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? NaN;
  return { done: latencies.length, errors, seconds: elapsed, rps: latencies.length / elapsed, p50: at(0.5), p99: at(0.99) };
}

async function measure(name: string, url: string, headers: Record<string, string>): Promise<LoadResult> {
  await load(url, headers, Math.ceil(requests / 10), seconds);
  const result = await load(url, headers, requests, seconds);
  console.log(
    `${name.padEnd(34)} ${result.rps.toFixed(0).padStart(7)} req/s  p50 ${result.p50.toFixed(2)} ms  p99 ${result.p99.toFixed(2)} ms  (${result.done} requests, ${result.errors} errors, ${result.seconds.toFixed(1)} s)`,
  );
  return result;
}

/** Calls of `limits.take()` per second on a store's windows (distinct subjects, so most are admitted). */
async function limiterRate(name: string, store: Store, calls: number): Promise<void> {
  const service = createMemoryService({ store, logger: silentLogger });
  await service.start();
  try {
    const org = await service.admin.createOrganization({ name: 'bench' });
    const { key } = await service.admin.createKey({ organizationId: org.organizationId });
    const callers = await Promise.all(
      Array.from({ length: 100 }, (_, i) => service.authenticate({ authorization: `Bearer ${key}`, endUser: `person-${i}`, secFetchSite: undefined, requestId: 'r' })),
    );
    for (let i = 0; i < Math.min(200, calls); i++) await service.limits.take({ caller: callers[i % callers.length]!, operation: 'observe' });
    const started = performance.now();
    for (let i = 0; i < calls; i++) await service.limits.take({ caller: callers[i % callers.length]!, operation: 'observe' });
    const elapsed = performance.now() - started;
    console.log(`${name.padEnd(34)} ${((calls / elapsed) * 1000).toFixed(0).padStart(7)} take/s  ${((elapsed / calls) * 1000).toFixed(1)} µs per call  (${calls} calls)`);
  } finally {
    await service.stop();
  }
}

/** `authenticate()` calls per second on a store (the two reads every request makes: key, organization). */
async function authRate(name: string, store: Store, calls: number): Promise<void> {
  const service = createMemoryService({ store, logger: silentLogger });
  await service.start();
  try {
    const org = await service.admin.createOrganization({ name: 'bench' });
    const { key } = await service.admin.createKey({ organizationId: org.organizationId });
    const request = { authorization: `Bearer ${key}`, endUser: undefined, secFetchSite: undefined, requestId: 'r' };
    for (let i = 0; i < 100; i++) await service.authenticate(request);
    const started = performance.now();
    for (let i = 0; i < calls; i++) await service.authenticate(request);
    const elapsed = performance.now() - started;
    console.log(`${name.padEnd(34)} ${((calls / elapsed) * 1000).toFixed(0).padStart(7)} auth/s  ${((elapsed / calls) * 1000).toFixed(1)} µs per call  (${calls} calls)`);
  } finally {
    await service.stop();
  }
}

/** The baseline of `authRate` on a shared store: the two reads authentication made before it had one. */
async function twoReadsRate(name: string, store: Store, calls: number): Promise<void> {
  await store.init();
  try {
    const [org] = await store.organizations.list();
    const [key] = await store.keys.list({ organizationId: org!.id });
    const read = async () => {
      const found = await store.keys.get({ keyId: key!.keyId });
      await store.organizations.get({ id: found!.organizationId });
    };
    for (let i = 0; i < 100; i++) await read();
    const started = performance.now();
    for (let i = 0; i < calls; i++) await read();
    const elapsed = performance.now() - started;
    console.log(`${name.padEnd(34)} ${((calls / elapsed) * 1000).toFixed(0).padStart(7)} auth/s  ${((elapsed / calls) * 1000).toFixed(1)} µs per call  (${calls} calls, the two reads of before)`);
  } finally {
    await store.close();
  }
}

async function main(): Promise<void> {
  console.log(`node ${process.version}, ${connections} connections, up to ${requests} requests or ${seconds} s per run\n`);
  const bare = await startChild(['-e', BARE]);
  const dataDir = await mkdtemp(join(tmpdir(), 'ma-bench-rl-'));
  const profile = cpuProfileDir === '' ? [] : ['--cpu-prof', `--cpu-prof-dir=${cpuProfileDir}`];
  const server = await startChild([...profile, CLI, 'serve', '--port', '0', '--data', dataDir]);
  try {
    const bareResult = await measure('bare node:http handler', `${bare.url}/`, {});
    const sessionResult = await measure('GET /v1/session (embedded default)', `${server.url}/v1/session`, { authorization: `Bearer ${server.key}` });
    const perRequest = 1000 / sessionResult.rps - 1000 / bareResult.rps;
    console.log(`\nauth + rate-limit headers + routing add ${(perRequest * 1000).toFixed(0)} µs of server time per request (${((sessionResult.rps / bareResult.rps) * 100).toFixed(0)}% of the bare rate)\n`);
  } finally {
    bare.child.kill('SIGTERM');
    server.child.kill('SIGTERM');
    await new Promise((resolve) => server.child.once('exit', resolve));
    await rm(dataDir, { recursive: true, force: true });
  }
  await limiterRate('limits.take(), in-process windows', inMemoryStore(), 200_000);
  const pgliteDir = await mkdtemp(join(tmpdir(), 'ma-bench-auth-'));
  await authRate('authenticate(), PGlite data dir', postgresStore({ dataDir: pgliteDir }), 5_000);
  await rm(pgliteDir, { recursive: true, force: true });
  await authRate('authenticate(), in-memory store', inMemoryStore(), 50_000);
  if (process.env.DATABASE_URL) {
    const schema = `ma_bench_${Date.now()}`;
    await limiterRate('limits.take(), PostgreSQL windows', postgresStore({ connectionString: process.env.DATABASE_URL, schema }), 2_000);
    await authRate('authenticate(), PostgreSQL', postgresStore({ connectionString: process.env.DATABASE_URL, schema }), 2_000);
    await twoReadsRate('key then organization, PostgreSQL', postgresStore({ connectionString: process.env.DATABASE_URL, schema }), 2_000);
    const pg = (await import('pg')).default;
    const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await client.connect();
    await client.query(`DROP SCHEMA ${schema} CASCADE`);
    await client.end();
  }
}

await main();
