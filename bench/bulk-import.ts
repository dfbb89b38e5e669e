/**
 * Bulk import on the embedded default, measured from outside: the built server process (PGlite +
 * LanceDB + disk blobs in a fresh data dir), default memory writer and hashed n-gram embedder.
 *
 *   npm run build && npx tsx bench/bulk-import.ts [--turns 100000] [--batch 100] [--chars 300]
 *     [--poll-ms 5] [--chat-every-ms 200] [--after-chats 30] [--after-wait SECONDS] [--baseline DIR/packages/server/dist/cli.js]
 *     [--server-node-args "--cpu-prof --cpu-prof-dir=/tmp/prof"]
 *
 * One client imports `--turns` turns into one agent through `POST .../observe` in batches of
 * `--batch`, polling each batch's status (every `--poll-ms`) until `committed` before it sends the
 * next: the spec gives an agent one ingestion slot, and an `observe` while it learns is refused with
 * 429 (`Retry-After: 1`), so one agent never has two observes in flight. While it runs, a second
 * client asks a question in another thread of the same agent every `--chat-every-ms` (one at a time);
 * after the import, `--after-chats` more questions are asked the same way. Reported: import turns/s
 * (whole import, and per tenth of it), the observe 202 latency, chat latency p50/p95/max during and
 * after the import. The organization's `observe`, `chat` and `thread_create` request windows are
 * raised first (`memory-agents orgs limits`): the defaults allow 60 observes and 20 chats a minute.
 *
 * With `--baseline CLI` (another build's `cli.js`, e.g. copied by `bench/snapshot-build.sh`), the
 * same import then runs on that build, after the new one, and the ratio of the two rates is printed.
 */
import { execFile } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { promisify } from 'node:util';
import { argument } from './support/args.js';
import { BUILT_CLI as CLI, conversationalTurn, startBuiltServer, stopBuiltServer, type BuiltServer } from './support/built-server.js';

const totalTurns = Number(argument('turns', '100000'));
const batch = Number(argument('batch', '100'));
const chars = Number(argument('chars', '300'));
const pollMs = Number(argument('poll-ms', '5'));
const chatEveryMs = Number(argument('chat-every-ms', '200'));
const afterChats = Number(argument('after-chats', '30'));
// Seconds to wait after the import before asking `--after-chats` questions once more (0: not asked again).
const afterWaitSeconds = Number(argument('after-wait', '0'));
const baselineCli = argument('baseline', '');
const serverNodeArgs = argument('server-node-args', '').split(' ').filter(Boolean);

const QUESTIONS = [
  'When is the doctor appointment?',
  'Where did my sister move?',
  'What did we say about the project budget?',
  'Which conference is in Oslo?',
  'What is growing in the garden?',
  'When is the guitar lesson?',
];

/** A `chars`-character conversational turn, different for every turn number. */
const turnText = (turn: number) => conversationalTurn(`Turn ${turn}: `, turn * 104729 + 1, chars);

type Server = BuiltServer;

const startServer = (cli: string) => startBuiltServer(cli, { dataDirPrefix: 'ma-bench-bulk-', nodeArgs: serverNodeArgs });
const stopServer = stopBuiltServer;

/** Runs an admin command of `server`'s build against its data dir (through its control socket). */
async function admin(server: Server, args: string[]): Promise<any> {
  const { stdout } = await promisify(execFile)(process.execPath, [server.cli, ...args, '--data', server.dataDir, '--json']);
  return JSON.parse(stdout);
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? null : Number(sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!.toFixed(1));
};
const latencies = (values: number[]) => ({ n: values.length, p50: percentile(values, 50), p95: percentile(values, 95), max: percentile(values, 100) });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function importInto(server: Server) {
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${server.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${server.key}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, body: (await response.json()) as any };
  };
  const [org] = await admin(server, ['orgs', 'list']);
  const window = { limit: 1_000_000, windowSeconds: 60 };
  const raised = { subject: window, organization: window };
  await admin(server, ['orgs', 'limits', '--org', org.organization_id, '--limits', JSON.stringify({ rateLimits: { observe: raised, chat: raised, thread_create: raised } })]);
  const created = await call('POST', '/v1/agents', { agent_config: { role: 'bench', objective: 'import a long history' } });
  const agentId: string = created.body.agent_id;
  while ((await call('GET', `/v1/agents/${agentId}`)).body.status !== 'ready') await sleep(10);
  const importThread = `/v1/agents/${agentId}/threads/${(await call('POST', `/v1/agents/${agentId}/threads`, {})).body.thread_id}`;
  const chatThread = `/v1/agents/${agentId}/threads/${(await call('POST', `/v1/agents/${agentId}/threads`, {})).body.thread_id}`;

  let chatNumber = 0;
  const chat = async () => {
    const started = performance.now();
    const response = await call('POST', `${chatThread}/chat`, { turn_id: `c${chatNumber}`, message: QUESTIONS[chatNumber++ % QUESTIONS.length] });
    if (response.status !== 200) throw new Error(`chat: ${response.status} ${JSON.stringify(response.body)}`);
    return performance.now() - started;
  };

  // The chatting client: one question every `chatEveryMs` (or right after the previous answer when slower).
  let importing = true;
  const during: number[] = [];
  const chatter = (async () => {
    while (importing) {
      const started = performance.now();
      during.push(await chat());
      await sleep(Math.max(0, chatEveryMs - (performance.now() - started)));
    }
  })();

  const accepts: number[] = [];
  const tenths: number[] = [];
  let refused = 0;
  const started = performance.now();
  let tenthStarted = started;
  try {
    for (let sent = 0; sent < totalTurns; sent += batch) {
      const observations = Array.from({ length: Math.min(batch, totalTurns - sent) }, (_, i) => ({ content: [{ type: 'text', text: turnText(sent + i) }] }));
      let accepted;
      for (;;) {
        const before = performance.now();
        accepted = await call('POST', `${importThread}/observe`, { observations });
        if (accepted.status === 202) {
          accepts.push(performance.now() - before);
          break;
        }
        // Only the agent's single ingestion slot should refuse (never expected: the last batch committed).
        if (accepted.status !== 429) throw new Error(`observe: ${accepted.status} ${JSON.stringify(accepted.body)}`);
        refused++;
        await sleep(pollMs);
      }
      for (;;) {
        const status = (await call('GET', `${importThread}/observe/${accepted.body.observation_id}/status`)).body;
        if (status.status === 'committed') break;
        if (status.status === 'failed' || status.status === 'cancelled') throw new Error(JSON.stringify(status));
        await sleep(pollMs);
      }
      const done = sent + observations.length;
      if (Math.floor((done * 10) / totalTurns) > tenths.length) {
        const now = performance.now();
        tenths.push(Math.round(((totalTurns / 10) * 1000) / (now - tenthStarted)));
        tenthStarted = now;
      }
    }
  } finally {
    importing = false;
    await chatter;
  }
  const seconds = (performance.now() - started) / 1000;
  const after: number[] = [];
  for (let i = 0; i < afterChats; i++) {
    after.push(await chat());
    await sleep(chatEveryMs);
  }
  const afterWait: number[] = [];
  if (afterWaitSeconds > 0) {
    await sleep(afterWaitSeconds * 1000);
    for (let i = 0; i < afterChats; i++) {
      afterWait.push(await chat());
      await sleep(chatEveryMs);
    }
  }
  return {
    turns: totalTurns,
    seconds: Number(seconds.toFixed(1)),
    turns_per_second: Math.round(totalTurns / seconds),
    turns_per_second_by_tenth: tenths,
    observe_202_ms: latencies(accepts),
    observe_refused_429: refused,
    chat_ms_during_import: latencies(during),
    chat_ms_after_import: latencies(after),
    ...(afterWaitSeconds > 0 ? { [`chat_ms_${afterWaitSeconds}s_after_import`]: latencies(afterWait) } : {}),
  };
}

async function main() {
  const results: Record<string, unknown> = {};
  for (const [name, cli] of [['new', CLI], ...(baselineCli ? [['baseline', baselineCli]] : [])] as const) {
    const server = await startServer(cli);
    try {
      results[name] = { cli, load_before: loadavg().map((n) => Number(n.toFixed(1))), ...(await importInto(server)), load_after: loadavg().map((n) => Number(n.toFixed(1))) };
    } finally {
      await stopServer(server);
    }
  }
  const rate = (name: string) => (results[name] as { turns_per_second: number } | undefined)?.turns_per_second;
  console.log(
    JSON.stringify(
      {
        machine: { cpus: cpus().length, node: process.version },
        batch,
        chars,
        poll_ms: pollMs,
        chat_every_ms: chatEveryMs,
        ...results,
        ...(rate('baseline') ? { ratio: Number((rate('new')! / rate('baseline')!).toFixed(2)) } : {}),
      },
      null,
      2,
    ),
  );
}

await main();
