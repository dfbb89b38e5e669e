/**
 * Chat latency with 10,000 memories in one agent, through HTTP, on the embedded default (PGlite +
 * LanceDB in a fresh data dir), the default extractive model and hashed n-gram embedder.
 *
 *   npx tsx bench/chat-latency.ts [--memories 10000] [--chats 200] [--max-context-chars 4000] [--quiet-seconds 15]
 *                                 [--data-dir DIR] [--server PATH/packages/server/dist/index.js] [--cpu-prof]
 *                                 [--database-url URL] [--billing] [--metrics]
 *
 * `--data-dir` keeps the data dir: the first run loads the memories and writes `bench-chat.json`
 * (key, agent, thread) into it, later runs only chat. With `--server` the server is imported from
 * another build (e.g. the previous one, made by bench/snapshot-build.sh), so two builds can be
 * alternated on the same data in the same minutes. `--cpu-prof` writes a V8 CPU profile of the
 * timed chats (the server runs in this process) to `bench/.prof/`. `--database-url` serves from
 * PostgreSQL instead (state and memory index in that database; `--data-dir` then keeps only
 * `bench-chat.json` and the blobs); `--billing` turns billing on with ample credits, so each chat
 * also holds and settles its charge in the ledger (what a billed organization pays per answer).
 *
 * The server is `startServer` from packages/server (the same composition `memory-agents serve`
 * runs) listening on loopback in this process; the client is `fetch`, one chat at a time. The
 * organization's request-rate windows are raised for the run (200 chats are past the default 20 per
 * minute). Memories are LoCoMo turns (../shared/eval-data/locomo/locomo-dev.json), repeated with the
 * speaker names swapped per round until there are `--memories` of them, sent as observes of 100
 * turns; questions are LoCoMo questions. Reported: p50/p95/p99/max of the client-side round trip
 * and the median of each server stage.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { Session } from 'node:inspector/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { silentLogger } from '@memory-agents/core';
import { createServiceModels, modelSettings, startServer as startThisServer } from '@memory-agents/server';
import { argument } from './support/args.js';

const here = dirname(fileURLToPath(import.meta.url));

const memories = Number(argument('memories', '10000'));
const chats = Number(argument('chats', '200'));
const maxContextChars = Number(argument('max-context-chars', '4000'));
// The embedded default's memory index settles once learning pauses (LanceDB: 5 s after the last
// write, then ~3 s of compaction and index work at 10k memories), as between a bulk import and
// users chatting; 0 measures chats racing that work.
const quietSeconds = Number(argument('quiet-seconds', '15'));
const keptDataDir = argument('data-dir', '');
const serverModule = argument('server', '');
const cpuProfile = process.argv.includes('--cpu-prof');
const databaseUrl = argument('database-url', '');
const billing = process.argv.includes('--billing');
// --embedder local|NAME|DIR: the local sentence model, as `serve --embedder` takes it (its query embedding is in every chat's time).
const embedderSetting = argument('embedder', '');
type Kept = { key: string; organizationId: string; agentId: string; threadId: string; memories: number; loadSeconds: number };

const NAMES = ['Priya', 'Wei', 'Fatima', 'Olu', 'Ingrid', 'Mateo', 'Yuki', 'Aisha', 'Lars', 'Sofia', 'Ravi', 'Chen', 'Nate', 'Gina', 'Audrey', 'Calvin'];

type Locomo = { conversation: Record<string, unknown>; qa: { question: string }[] }[];
type Turn = { speaker: string; text: string };

async function corpus(): Promise<{ turns: Turn[]; questions: string[] }> {
  const data = JSON.parse(await readFile(join(here, '../../shared/eval-data/locomo/locomo-dev.json'), 'utf8')) as Locomo;
  const base: Turn[] = [];
  const speakers = new Set<string>();
  for (const conversation of data) {
    for (const [key, value] of Object.entries(conversation.conversation)) {
      if (!/^session_\d+$/.test(key) || !Array.isArray(value)) continue;
      for (const turn of value as { speaker: string; text: string }[]) {
        base.push({ speaker: turn.speaker, text: turn.text });
        speakers.add(turn.speaker);
      }
    }
  }
  const names = [...speakers];
  const turns: Turn[] = [];
  for (let round = 0; turns.length < memories; round++) {
    // Each round renames the speakers, so repeated turns are different memories about other people.
    const rename = (text: string) => names.reduce((result, name, i) => (round === 0 ? result : result.replaceAll(name, NAMES[(i + round * 5) % NAMES.length]!)), text);
    for (const turn of base) {
      if (turns.length >= memories) break;
      turns.push({ speaker: rename(turn.speaker), text: rename(turn.text) });
    }
  }
  const questions = data.flatMap((conversation) => conversation.qa.map((qa) => qa.question));
  return { turns, questions: Array.from({ length: chats }, (_, i) => questions[(i * 7) % questions.length]!) };
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

async function main() {
  const { turns, questions } = await corpus();
  const dataDir = keptDataDir || (await mkdtemp(join(tmpdir(), 'ma-bench-chat-')));
  const startServer: typeof startThisServer = serverModule ? (await import(serverModule)).startServer : startThisServer;
  const keptFile = join(dataDir, 'bench-chat.json');
  const kept = keptDataDir ? ((await readFile(keptFile, 'utf8').then(JSON.parse, () => null)) as Kept | null) : null;
  // --metrics: Prometheus metrics on (behind a token), to state their cost; a build without them ignores it.
  const metrics = process.argv.includes('--metrics') ? { metrics: { token: 'bench-metrics-token-0000' } } : {};
  const models = embedderSetting ? { models: await createServiceModels(modelSettings({ embedder: embedderSetting }, process.env), process.env) } : {};
  const server = await startServer({ ...(databaseUrl ? { databaseUrl, dataDir } : { dataDir }), port: 0, logger: silentLogger, ...metrics, ...models } as Parameters<typeof startServer>[0]);
  try {
    const key = kept ? { key: kept.key, organizationId: kept.organizationId } : server.firstKey!;
    const window = { limit: 1_000_000, windowSeconds: 60 };
    const everyWindow = { subject: window, organization: window };
    await server.service.admin
      .setLimits({ organizationId: key.organizationId, limits: { rateLimits: { chat: everyWindow, observe: everyWindow, thread_create: everyWindow } } as never })
      .catch(() => undefined); // a build without request-rate windows has nothing to raise
    if (billing) {
      await server.service.admin.configureBilling({ organizationId: key.organizationId, enabled: true });
      await server.service.admin.addCredits({ organizationId: key.organizationId, amount: '1000000' });
    }
    const call = async (method: string, path: string, body?: unknown) => {
      const response = await fetch(`${server.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: response.status, body: (await response.json()) as any };
    };
    let agentId = kept?.agentId ?? '';
    let threadId = kept?.threadId ?? '';
    if (!kept) {
      const created = await call('POST', '/v1/agents', { agent_config: { role: 'bench', objective: 'answer' } });
      agentId = created.body.agent_id;
      while ((await call('GET', `/v1/agents/${agentId}`)).body.status !== 'ready') await new Promise((resolve) => setTimeout(resolve, 10));
      threadId = (await call('POST', `/v1/agents/${agentId}/threads`, {})).body.thread_id;
    }
    const base = `/v1/agents/${agentId}/threads/${threadId}`;

    const loadStarted = performance.now();
    for (let start = 0; !kept && start < turns.length; start += 100) {
      const observations = turns.slice(start, start + 100).map((turn) => ({ speaker: turn.speaker, content: [{ type: 'text', text: turn.text }] }));
      const accepted = await call('POST', `${base}/observe`, { observations });
      if (accepted.status !== 202) throw new Error(`observe: ${accepted.status} ${JSON.stringify(accepted.body)}`);
      for (;;) {
        const status = (await call('GET', `${base}/observe/${accepted.body.observation_id}/status`)).body;
        if (status.status === 'committed') break;
        if (status.status === 'failed') throw new Error(JSON.stringify(status));
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    }
    const loadSeconds = kept ? kept.loadSeconds : (performance.now() - loadStarted) / 1000;
    if (keptDataDir && !kept) {
      const record: Kept = { key: key.key, organizationId: key.organizationId, agentId, threadId, memories: turns.length, loadSeconds };
      await writeFile(keptFile, JSON.stringify(record));
    }
    // A reused data dir was settled before; its server only opens it.
    if (!kept) await new Promise((resolve) => setTimeout(resolve, quietSeconds * 1000));

    // Warm-up (not counted): first queries open files and fill caches.
    for (let i = 0; i < 10; i++) await call('POST', `${base}/chat`, { turn_id: `w${i}`, message: questions[i]! });
    const latencies: number[] = [];
    const stages = new Map<string, number[]>();
    let empty = 0;
    // CPU time of this process (client, server and LanceDB's threads) per timed chat: the work a
    // chat costs, which a loaded machine's scheduling delays do not change the way they change wall time.
    const cpuStarted = process.cpuUsage();
    const session = cpuProfile ? new Session() : null;
    if (session) {
      session.connect();
      await session.post('Profiler.enable');
      await session.post('Profiler.start');
    }
    for (let i = 0; i < chats; i++) {
      const started = performance.now();
      const response = await call('POST', `${base}/chat`, { turn_id: `c${i}`, message: questions[i]!, max_context_chars: maxContextChars });
      latencies.push(performance.now() - started);
      if (response.status !== 200) throw new Error(`chat: ${response.status} ${JSON.stringify(response.body)}`);
      if (response.body.citations.length === 0) empty++;
      for (const stage of response.body.stages as { name: string; duration_ms: number }[]) stages.set(stage.name, [...(stages.get(stage.name) ?? []), stage.duration_ms]);
    }
    const cpu = process.cpuUsage(cpuStarted);
    if (session) {
      const { profile } = await session.post('Profiler.stop');
      const directory = join(here, '.prof');
      await mkdir(directory, { recursive: true });
      const file = join(directory, `chat-latency-${Date.now()}.cpuprofile`);
      await writeFile(file, JSON.stringify(profile));
      console.error(`cpu profile: ${file}`);
      session.disconnect();
    }
    const sorted = [...latencies].sort((a, b) => a - b);
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
    console.log(
      JSON.stringify(
        {
          machine: { cpus: cpus().length, node: process.version, load: Number(loadavg()[0]!.toFixed(1)) },
          server: serverModule || 'this checkout (src)',
          store: databaseUrl ? 'postgresql' : 'embedded default',
          billing,
          memories: turns.length,
          load_seconds: Number(loadSeconds.toFixed(1)),
          quiet_seconds: quietSeconds,
          chats,
          max_context_chars: maxContextChars,
          latency_ms: {
            p50: Number(percentile(sorted, 50).toFixed(1)),
            p95: Number(percentile(sorted, 95).toFixed(1)),
            p99: Number(percentile(sorted, 99).toFixed(1)),
            max: Number(sorted.at(-1)!.toFixed(1)),
          },
          cpu_ms_per_chat: Number(((cpu.user + cpu.system) / 1000 / chats).toFixed(2)),
          stage_median_ms: Object.fromEntries([...stages].map(([name, values]) => [name, median(values)])),
          answers_without_citations: empty,
        },
        null,
        2,
      ),
    );
  } finally {
    await server.close();
    if (!keptDataDir) await rm(dataDir, { recursive: true, force: true });
  }
}

await main();
