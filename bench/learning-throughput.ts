/**
 * Learning throughput on the embedded default: the built server process (PGlite + LanceDB + disk
 * blobs in a fresh data dir), the default memory writer and the hashed n-gram embedder.
 *
 *   npm run build && npx tsx bench/learning-throughput.ts [--runs 10] [--turns 100] [--chars 300] [--poll-ms 2]
 *     [--baseline DIR/packages/server/dist/cli.js] [--server-node-args "--cpu-prof --cpu-prof-dir=/tmp/prof"]
 *
 * Each run sends one `observe` of `--turns` observations of `--chars` characters
 * and polls the status (every `--poll-ms`, default 2 ms) from the 202 until `committed`. Reported: turns/s of that
 * interval (median, best, worst over the runs, after one warm-up run that is not counted), and the
 * 202 latency of the observe call itself. Runs alternate between two agents so each run starts with
 * the agent idle and an index that already holds memories.
 *
 * With `--baseline CLI` (another build's `cli.js`, e.g. the previous commit's build copied by
 * `bench/snapshot-build.sh`), a second server runs that build and every run observes on both, in
 * alternating order, so the two medians come from the same minutes of a shared, noisy machine.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const CLI = fileURLToPath(new URL('../packages/server/dist/cli.js', import.meta.url));

function argument(name: string, fallback: string): string {
  const index = process.argv.indexOf(`--${name}`);
  return index >= 0 && process.argv[index + 1] ? process.argv[index + 1]! : fallback;
}

const runs = Number(argument('runs', '10'));
const turns = Number(argument('turns', '100'));
const chars = Number(argument('chars', '300'));
const pollMs = Number(argument('poll-ms', '2'));
const baselineCli = argument('baseline', '');
const serverNodeArgs = argument('server-node-args', '').split(' ').filter(Boolean);

const WORDS = 'the a meeting project budget sister moved Lisbon March dinner friday doctor appointment garden tomatoes birthday party guitar lesson train ticket Oslo conference slides deadline'.split(' ');

/** A 300-character conversational turn, different for every (run, turn). */
function turnText(run: number, turn: number): string {
  let text = `Turn ${turn} of run ${run}: `;
  let state = run * 7919 + turn * 104729 + 1;
  while (text.length < chars) {
    state = (state * 1103515245 + 12345) % 2147483648;
    text += `${WORDS[state % WORDS.length]}${state % 9 === 0 ? '. ' : ' '}`;
  }
  return text.slice(0, chars);
}

type Server = { url: string; key: string; child: ReturnType<typeof spawn>; dataDir: string };

async function startServer(cli: string): Promise<Server> {
  const dataDir = await mkdtemp(join(tmpdir(), 'ma-bench-learning-'));
  const child = spawn(process.execPath, [...serverNodeArgs, cli, 'serve', '--port', '0', '--data', dataDir], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  while (!/listening on (http:\/\/\S+)/.test(output)) {
    if (child.exitCode !== null) throw new Error(output);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return { url: /listening on (http:\/\/\S+)/.exec(output)![1]!, key: /^\s+(sp_\S+)$/m.exec(output)![1]!, child, dataDir };
}

async function stopServer(server: Server): Promise<void> {
  server.child.kill('SIGTERM');
  if (server.child.exitCode === null) await new Promise((resolve) => server.child.once('exit', resolve));
  await rm(server.dataDir, { recursive: true, force: true });
}

/** A server ready to learn: two agents with one thread each, and its measurements. */
async function prepare(server: Server) {
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${server.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${server.key}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, body: (await response.json()) as any };
  };
  // Two agents with one thread each (thread creation is rate-limited: 5 per 10 s per subject).
  const threads: string[] = [];
  for (let i = 0; i < 2; i++) {
    const created = await call('POST', '/v1/agents', { agent_config: { role: 'bench', objective: 'learn fast' } });
    while ((await call('GET', `/v1/agents/${created.body.agent_id}`)).body.status !== 'ready') await new Promise((resolve) => setTimeout(resolve, 10));
    const thread = await call('POST', `/v1/agents/${created.body.agent_id}/threads`, {});
    if (thread.status !== 201) throw new Error(`thread: ${thread.status} ${JSON.stringify(thread.body)}`);
    threads.push(`/v1/agents/${created.body.agent_id}/threads/${thread.body.thread_id}`);
  }
  const rates: number[] = [];
  const accepts: number[] = [];
  /** One observe of `turns` turns, timed from the 202 until `committed`. */
  const run = async (index: number) => {
    const base = threads[index % 2]!;
    const observations = Array.from({ length: turns }, (_, turn) => ({ content: [{ type: 'text', text: turnText(index, turn) }] }));
    const sent = performance.now();
    const accepted = await call('POST', `${base}/observe`, { observations });
    const acceptedAt = performance.now();
    if (accepted.status !== 202) throw new Error(`observe: ${accepted.status} ${JSON.stringify(accepted.body)}`);
    let status: any;
    for (;;) {
      status = (await call('GET', `${base}/observe/${accepted.body.observation_id}/status`)).body;
      if (['committed', 'failed', 'cancelled'].includes(status.status)) break;
      await new Promise((resolve) => setTimeout(resolve, pollMs));
    }
    const committedAt = performance.now();
    if (status.status !== 'committed') throw new Error(`run ${index}: ${JSON.stringify(status)}`);
    if (index === 0) return; // warm-up
    rates.push(turns / ((committedAt - acceptedAt) / 1000));
    accepts.push(acceptedAt - sent);
  };
  return { run, rates, accepts };
}

function summary(rates: number[], accepts: number[]) {
  const sorted = [...rates].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)]!;
  const acceptMedian = [...accepts].sort((a, b) => a - b)[Math.floor(accepts.length / 2)]!;
  return {
    per_run: rates.map(Math.round),
    turns_per_second: { median: Math.round(median), best: Math.round(sorted.at(-1)!), worst: Math.round(sorted[0]!) },
    observe_202_ms_median: Number(acceptMedian.toFixed(1)),
  };
}

async function main() {
  const servers: Server[] = [];
  try {
    servers.push(await startServer(CLI));
    if (baselineCli) servers.push(await startServer(baselineCli));
    const benches = await Promise.all(servers.map(prepare));
    for (let run = 0; run <= runs; run++) {
      // Alternating which build goes first, so neither always runs right after the other.
      const order = run % 2 === 0 ? benches : [...benches].reverse();
      for (const bench of order) await bench.run(run);
    }
    const current = summary(benches[0]!.rates, benches[0]!.accepts);
    const baseline = benches[1] ? summary(benches[1].rates, benches[1].accepts) : undefined;
    console.log(
      JSON.stringify(
        {
          machine: { cpus: (await import('node:os')).cpus().length, node: process.version, load: (await import('node:os')).loadavg().map((n) => Number(n.toFixed(1))) },
          turns,
          chars,
          runs,
          poll_ms: pollMs,
          ...current,
          ...(baseline
            ? { baseline: { cli: baselineCli, ...baseline }, median_ratio: Number((current.turns_per_second.median / baseline.turns_per_second.median).toFixed(2)) }
            : {}),
        },
        null,
        2,
      ),
    );
  } finally {
    for (const server of servers) await stopServer(server);
  }
}

await main();
