/**
 * Footprint of `memory-agents serve` on the embedded default (PGlite + LanceDB + disk blobs):
 * cold start and resident memory, measured from outside on the built CLI.
 *
 *   npm run build && npx tsx bench/server-footprint.ts [--file TAMReview.pdf] [--baseline DIR/packages/server/dist/cli.js] [--starts N] [--embedder local|NAME|DIR]
 *
 * `--starts N` (with `--baseline`) measures only the fresh and restart starts, alternating the two
 * builds N times (the order flipped each round), for cold starts on a noisy machine.
 *
 * For each build (the current one, and with `--baseline` another build's `cli.js`, e.g. the
 * previous commit's copied by `bench/snapshot-build.sh`; the two run one after the other):
 * - `fresh`: `serve` on a new data dir. `cold_start_ms` is process spawn -> first answered request
 *   (`GET /v1/agents`, polled every 20 ms until it answers 200); `rss_idle_mb` is VmRSS 3 s after
 *   spawn (the "idle RSS 3 s after start").
 * - `restart`: the same, `serve` started again on that data dir.
 * - `rss_after_chat_mb`: after one agent, one observe of 20 turns (committed) and one chat.
 * - `rss_after_pdf_mb`: after one `observe-file` upload of `--file` (from ../shared/fixtures/docs)
 *   until committed (`pdf_ms`: upload sent -> committed); `rss_10s_after_pdf_mb` 10 s later (the
 *   document converter's child process exits 5 s after its last request). Peak (`VmHWM`) is
 *   reported beside each; it is the server process's own, without the converter's child.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { argument } from './support/args.js';

const CLI = fileURLToPath(new URL('../packages/server/dist/cli.js', import.meta.url));
const DOCS = fileURLToPath(new URL('../../shared/fixtures/docs/', import.meta.url));

const file = argument('file', 'TAMReview.pdf');
const baselineCli = argument('baseline', '');
// --embedder local|NAME|DIR: the current build serves with the local sentence model (a baseline of the
// same cli.js then measures the hashed default in the same run).
const embedderArgs = argument('embedder', '') ? ['--embedder', argument('embedder', '')] : [];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** VmRSS and VmHWM of a process, MB. */
function memory(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0);
  return { rss: Math.round(kb('VmRSS') / 1024), peak: Math.round(kb('VmHWM') / 1024) };
}

type Started = { child: ChildProcess; url: string; key: string | null; coldStartMs: number; idle: { rss: number; peak: number } };

/** Spawns `serve`, times the first answered request, and reads RSS 3 s after the spawn. */
async function serve(cli: string, dataDir: string, key: string | null, extra: string[] = []): Promise<Started> {
  const spawned = performance.now();
  const child = spawn(process.execPath, [cli, 'serve', '--port', '0', '--data', dataDir, ...extra], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  while (!/listening on (http:\/\/\S+)/.test(output)) {
    if (child.exitCode !== null) throw new Error(output);
    await sleep(5);
  }
  const url = /listening on (http:\/\/\S+)/.exec(output)![1]!;
  const usedKey = key ?? /^\s+(sp_\S+)$/m.exec(output)![1]!;
  for (;;) {
    const response = await fetch(`${url}/v1/agents`, { headers: { authorization: `Bearer ${usedKey}` } }).catch(() => null);
    if (response?.status === 200) {
      await response.arrayBuffer();
      break;
    }
    await response?.arrayBuffer();
    await sleep(20);
  }
  const coldStartMs = Math.round(performance.now() - spawned);
  await sleep(Math.max(0, 3000 - (performance.now() - spawned)));
  return { child, url, key: usedKey, coldStartMs, idle: memory(child.pid!) };
}

async function stop(child: ChildProcess): Promise<void> {
  child.kill('SIGTERM');
  if (child.exitCode === null) await new Promise((resolve) => child.once('exit', resolve));
}

async function measure(cli: string, extra: string[] = []) {
  const dataDir = await mkdtemp(join(tmpdir(), 'ma-bench-footprint-'));
  try {
    const fresh = await serve(cli, dataDir, null, extra);
    await stop(fresh.child);
    const restart = await serve(cli, dataDir, fresh.key, extra);
    const { url, key, child } = restart;
    const call = async (method: string, path: string, body?: unknown) => {
      const response = await fetch(`${url}${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: response.status, body: (await response.json()) as any };
    };
    const waitCommitted = async (base: string, observationId: string) => {
      for (;;) {
        const status = (await call('GET', `${base}/observe/${observationId}/status`)).body;
        if (['committed', 'failed', 'cancelled'].includes(status.status)) return status.status as string;
        await sleep(50);
      }
    };
    try {
      const agent = (await call('POST', '/v1/agents', { agent_config: { role: 'bench', objective: 'footprint' } })).body;
      while ((await call('GET', `/v1/agents/${agent.agent_id}`)).body.status !== 'ready') await sleep(20);
      const thread = (await call('POST', `/v1/agents/${agent.agent_id}/threads`, {})).body;
      const base = `/v1/agents/${agent.agent_id}/threads/${thread.thread_id}`;
      const observations = Array.from({ length: 20 }, (_, i) => ({ content: [{ type: 'text', text: `Turn ${i}: Caroline moved to Lisbon in March and plays the guitar on Fridays.` }] }));
      const observed = await call('POST', `${base}/observe`, { observations });
      await waitCommitted(base, observed.body.observation_id);
      const chat = await call('POST', `${base}/chat`, { turn_id: 't1', message: 'Where did Caroline move?' });
      if (chat.status !== 200) throw new Error(`chat: ${chat.status} ${JSON.stringify(chat.body)}`);
      const afterChat = memory(child.pid!);
      const pdfStarted = performance.now();
      const form = new FormData();
      form.append('file', new Blob([await readFile(join(DOCS, file))]), file);
      form.append('allow_duplicate', 'true');
      const uploaded = await fetch(`${url}${base}/observe-file`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
      const accepted = (await uploaded.json()) as any;
      if (uploaded.status !== 202) throw new Error(`observe-file: ${uploaded.status} ${JSON.stringify(accepted)}`);
      const pdfStatus = await waitCommitted(base, accepted.observation_id);
      const pdfMs = Math.round(performance.now() - pdfStarted);
      const afterPdf = memory(child.pid!);
      await sleep(10_000);
      const settledAfterPdf = memory(child.pid!);
      return {
        cli,
        fresh: { cold_start_ms: fresh.coldStartMs, rss_idle_mb: fresh.idle.rss, peak_mb: fresh.idle.peak },
        restart: { cold_start_ms: restart.coldStartMs, rss_idle_mb: restart.idle.rss, peak_mb: restart.idle.peak },
        rss_after_chat_mb: afterChat.rss,
        peak_after_chat_mb: afterChat.peak,
        rss_after_pdf_mb: afterPdf.rss,
        peak_after_pdf_mb: afterPdf.peak,
        rss_10s_after_pdf_mb: settledAfterPdf.rss,
        pdf: { file, status: pdfStatus, pdf_ms: pdfMs },
      };
    } finally {
      await stop(child);
    }
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}

/** `--starts N`: only fresh and restart starts, the two builds alternated N times (order flipped each round). */
async function starts(rounds: number) {
  const runs: Record<string, { fresh_ms: number[]; fresh_mb: number[]; restart_ms: number[]; restart_mb: number[] }> = {};
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? [CLI, baselineCli] : [baselineCli, CLI];
    for (const cli of order) {
      const name = cli === CLI ? 'current' : 'baseline';
      const run = (runs[name] ??= { fresh_ms: [], fresh_mb: [], restart_ms: [], restart_mb: [] });
      const dataDir = await mkdtemp(join(tmpdir(), 'ma-bench-footprint-'));
      try {
        const fresh = await serve(cli, dataDir, null);
        await stop(fresh.child);
        const restart = await serve(cli, dataDir, fresh.key);
        await stop(restart.child);
        run.fresh_ms.push(fresh.coldStartMs);
        run.fresh_mb.push(fresh.idle.rss);
        run.restart_ms.push(restart.coldStartMs);
        run.restart_mb.push(restart.idle.rss);
      } finally {
        await rm(dataDir, { recursive: true, force: true });
      }
    }
  }
  return runs;
}

const rounds = Number(argument('starts', '0'));
if (rounds > 0) {
  if (!baselineCli) throw new Error('--starts needs --baseline');
  const runs = await starts(rounds);
  console.log(JSON.stringify({ machine: { cpus: cpus().length, node: process.version, load: loadavg().map((n) => Number(n.toFixed(1))) }, ...runs }, null, 2));
  process.exit(0);
}

const current = await measure(CLI, embedderArgs);
const baseline = baselineCli ? await measure(baselineCli) : undefined;
console.log(
  JSON.stringify(
    { machine: { cpus: cpus().length, node: process.version, load: loadavg().map((n) => Number(n.toFixed(1))) }, current, ...(baseline ? { baseline } : {}) },
    null,
    2,
  ),
);
