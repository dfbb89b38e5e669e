/**
 * Learning throughput on the embedded default: the built server process (PGlite + LanceDB + disk
 * blobs in a fresh data dir), the default memory writer and the hashed n-gram embedder.
 *
 *   npm run build && npx tsx bench/learning-throughput.ts [--runs 10] [--turns 100] [--chars 300] [--poll-ms 2]
 *     [--baseline DIR/packages/server/dist/cli.js] [--embedder local|NAME|DIR] [--baseline-same-embedder] [--server-node-args "--cpu-prof --cpu-prof-dir=/tmp/prof"]
 *
 * Each run sends one `observe` of `--turns` observations of `--chars` characters
 * and polls the status (every `--poll-ms`, default 2 ms) from the 202 until `committed`. Reported: turns/s of that
 * interval (median, best, worst over the runs, after one warm-up run that is not counted), and the
 * 202 latency of the observe call itself, and the median turns/s timed from the send instead (the
 * worker starts before the 202 is written, so on a loaded machine part of a job can run before the
 * 202 arrives and flatter the first figure). Runs alternate between two agents so each run starts with
 * the agent idle and an index that already holds memories.
 *
 * With `--policy ten-rules` (issue 44), the same server holds two more agents whose config has a
 * ten-rule extraction policy ({@link TEN_RULE_POLICY}: redaction, ten exclude rules of keywords,
 * patterns, speakers and categories, five categories), and every run observes on both, in
 * alternating order: `policy_ratio` is the policy's median turns/s over the empty policy's.
 *
 * With `--baseline CLI` (another build's `cli.js`, e.g. the previous commit's build copied by
 * `bench/snapshot-build.sh`), a second server runs that build and every run observes on both, in
 * alternating order, so the two medians come from the same minutes of a shared, noisy machine.
 */
import { readFileSync } from 'node:fs';
import { argument } from './support/args.js';
import { BUILT_CLI as CLI, conversationalTurn, startBuiltServer, stopBuiltServer, type BuiltServer } from './support/built-server.js';

const runs = Number(argument('runs', '10'));
const turns = Number(argument('turns', '100'));
const chars = Number(argument('chars', '300'));
const pollMs = Number(argument('poll-ms', '2'));
const baselineCli = argument('baseline', '');
const serverNodeArgs = argument('server-node-args', '').split(' ').filter(Boolean);
const policyMode = argument('policy', '');

/** Ten rules most turns pass (so both sides learn as much), and categories most memories get. */
export const TEN_RULE_POLICY = {
  redact: ['card_number', 'email', 'iban', 'phone'],
  categories: [
    { name: 'work', description: 'job, meetings, projects', keywords: ['meeting', 'project', 'deadline', 'conference', 'slides'] },
    { name: 'health', keywords: ['doctor', 'appointment'] },
    { name: 'travel', keywords: ['train', 'ticket', 'Oslo', 'Lisbon'] },
    { name: 'family', keywords: ['sister', 'birthday'] },
    { name: 'smalltalk', keywords: ['weather', 'weekend'] },
  ],
  exclude: [
    { keywords: ['password', 'pin code'] },
    { keywords: ['salary'] },
    { patterns: ['order #?\\d{4,12}'] },
    { patterns: ['\\bssn\\b'] },
    { speakers: ['bot'] },
    { categories: ['smalltalk'] },
    { patterns: ['(?:visa|mastercard) \\d{4}'] },
    { keywords: ['diagnosis'] },
    { speakers: ['system'], keywords: ['debug'] },
    { categories: ['smalltalk'], keywords: ['rain'] },
  ],
};

/** A `chars`-character conversational turn, different for every (run, turn). */
const turnText = (run: number, turn: number) => conversationalTurn(`Turn ${turn} of run ${run}: `, run * 7919 + turn * 104729 + 1, chars);

type Server = BuiltServer;

// --metrics: this build serves with Prometheus metrics on (their own address), to state their cost.
const metricsArgs = process.argv.includes('--metrics') ? ['--metrics', '--metrics-listen', '127.0.0.1:0'] : [];
// --embedder local|NAME|DIR: this build learns with the local sentence model (with --baseline the
// baseline build learns with the hashed embedder, in the same minutes; add --baseline-same-embedder
// to give the baseline the same model, to compare two builds with the model).
const embedderArgs = argument('embedder', '') ? ['--embedder', argument('embedder', '')] : [];
const baselineArgs = process.argv.includes('--baseline-same-embedder') ? embedderArgs : [];
const startServer = (cli: string, serveArgs: string[] = []) => startBuiltServer(cli, { dataDirPrefix: 'ma-bench-learning-', nodeArgs: serverNodeArgs, serveArgs });
const stopServer = stopBuiltServer;

/** CPU ms (user + system, every thread) the process used so far, from /proc; null where there is none. */
function cpuMs(pid: number | undefined): number | null {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime + stime, in clock ticks of 1/100 s
  } catch {
    return null;
  }
}

/** A server ready to learn: two agents with one thread each, and its measurements. */
async function prepare(server: Server, agentConfig: Record<string, unknown> = { role: 'bench', objective: 'learn fast' }) {
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
    const created = await call('POST', '/v1/agents', { agent_config: agentConfig });
    if (created.status !== 202) throw new Error(`agent: ${created.status} ${JSON.stringify(created.body)}`);
    while ((await call('GET', `/v1/agents/${created.body.agent_id}`)).body.status !== 'ready') await new Promise((resolve) => setTimeout(resolve, 10));
    const thread = await call('POST', `/v1/agents/${created.body.agent_id}/threads`, {});
    if (thread.status !== 201) throw new Error(`thread: ${thread.status} ${JSON.stringify(thread.body)}`);
    threads.push(`/v1/agents/${created.body.agent_id}/threads/${thread.body.thread_id}`);
  }
  const rates: number[] = [];
  const accepts: number[] = [];
  const fromSend: number[] = [];
  const cpu: number[] = [];
  /** One observe of `turns` turns, timed from the 202 until `committed`. */
  const run = async (index: number) => {
    const base = threads[index % 2]!;
    const observations = Array.from({ length: turns }, (_, turn) => ({ content: [{ type: 'text', text: turnText(index, turn) }] }));
    const cpuBefore = cpuMs(server.child.pid);
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
    fromSend.push(turns / ((committedAt - sent) / 1000));
    const cpuAfter = cpuMs(server.child.pid);
    if (cpuBefore !== null && cpuAfter !== null) cpu.push(cpuAfter - cpuBefore);
  };
  return { run, rates, accepts, fromSend, cpu };
}

function summary(rates: number[], accepts: number[], fromSend: number[], cpu: number[]) {
  const sorted = [...rates].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)]!;
  const acceptMedian = [...accepts].sort((a, b) => a - b)[Math.floor(accepts.length / 2)]!;
  return {
    per_run: rates.map(Math.round),
    turns_per_second: { median: Math.round(median), best: Math.round(sorted.at(-1)!), worst: Math.round(sorted[0]!) },
    observe_202_ms_median: Number(acceptMedian.toFixed(1)),
    // The worker starts before the 202 is written: on a loaded machine part of a job can run
    // before the 202 arrives. Timed from the send, the 202's own latency counts too.
    turns_per_second_from_send_median: Math.round([...fromSend].sort((a, b) => a - b)[Math.floor(fromSend.length / 2)]!),
    // CPU the server process used per run (all its threads: PGlite, LanceDB, embedding, HTTP), from
    // the send to `committed`: steadier than wall time on a shared machine. Ticks are 10 ms.
    ...(cpu.length > 0 ? { server_cpu_ms_per_run: { median: [...cpu].sort((a, b) => a - b)[Math.floor(cpu.length / 2)]!, mean: Math.round(cpu.reduce((a, b) => a + b, 0) / cpu.length) } } : {}),
  };
}

async function main() {
  const servers: Server[] = [];
  try {
    servers.push(await startServer(CLI, [...metricsArgs, ...embedderArgs]));
    if (baselineCli) servers.push(await startServer(baselineCli, baselineArgs));
    const benches = await Promise.all(servers.map((server) => prepare(server)));
    if (policyMode === 'ten-rules') benches.push(await prepare(servers[0]!, { role: 'bench', objective: 'learn fast', extraction_policy: TEN_RULE_POLICY }));
    else if (policyMode !== '') throw new Error(`--policy takes ten-rules, not ${policyMode}`);
    for (let run = 0; run <= runs; run++) {
      // Alternating which build goes first, so neither always runs right after the other.
      const order = run % 2 === 0 ? benches : [...benches].reverse();
      for (const bench of order) await bench.run(run);
    }
    const current = summary(benches[0]!.rates, benches[0]!.accepts, benches[0]!.fromSend, benches[0]!.cpu);
    const baseline = baselineCli && benches[1] ? summary(benches[1].rates, benches[1].accepts, benches[1].fromSend, benches[1].cpu) : undefined;
    const policy = policyMode ? benches.at(-1)! : undefined;
    const withPolicy = policy ? summary(policy.rates, policy.accepts, policy.fromSend, policy.cpu) : undefined;
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
          ...(withPolicy
            ? { ten_rule_policy: withPolicy, policy_ratio: Number((withPolicy.turns_per_second.median / current.turns_per_second.median).toFixed(2)) }
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
