/**
 * Throughput of one vs two `memory-agents serve` processes on ONE PostgreSQL database (issue 15,
 * "Many processes"): the same load generator against both configurations, in the same run.
 *
 *   npm run build && DATABASE_URL=postgres://root@127.0.0.1:5432/soak npx tsx bench/multi-process.ts [--rounds 3] [--agents 8] [--requests 6] [--turns 10] [--chatters 8] [--chats 6]
 *
 * Each round runs the configurations one after the other, alternating which goes first (one, two;
 * two, one; ...), so machine load drifts over both alike; the result is the median per
 * configuration and the ratio two / one.
 * - `one`: process A serves everything (process B is not running).
 * - `two`: A and B both run; the load generator sends request n to process n % 2 (a round-robin
 *   load balancer), status polls included.
 * Two phases per configuration:
 * - observes -> committed: `--agents` agents, each sends `--requests` observes of `--turns` turns,
 *   one after another (the agent learns one thing at a time: the next is sent once the status
 *   endpoint reports `committed`, polled every 25 ms). Reported: turns committed per second (wall
 *   time of the phase), and each observe's latency from send to committed seen (p50 / p95 / max).
 * - chats: `--chatters` clients (two organizations, one `X-SP-End-User` each, so the spec's answer
 *   places, 2 per person and 4 per organization, are not what is measured), each sends `--chats`
 *   chats one after another to an agent holding ~200 memories. Reported: chats per second.
 * Also printed: the 1-minute load average at each phase's start, each serve process's VmRSS after
 * the round, the peak number of connections to the database during the phase (sampled every
 * 200 ms from pg_stat_activity, the bench's own connection excluded), and the CPU each party used
 * during the phase as cores kept busy (CPU seconds / wall seconds, from /proc): the serve
 * processes, this database's PostgreSQL backends, the load generator. On a shared machine the rest
 * of the 2 cores went to other programs.
 * State: a fresh schema per run (dropped at the end); billing on (every turn and answer is
 * charged), request windows widened so they are not what is measured.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { client, type Client } from '../test/support/client.js';
import { runCli, startServerProcess, type ServerProcess } from '../test/support/server.js';

/** `--name value` or `--name=value` (the form `npm run bench` passes through). */
function argument(name: string, fallback: string): number {
  const inline = process.argv.find((arg) => arg.startsWith(`--${name}=`));
  if (inline) return Number(inline.slice(name.length + 3));
  const index = process.argv.indexOf(`--${name}`);
  return Number(index >= 0 && process.argv[index + 1] ? process.argv[index + 1] : fallback);
}
const rounds = argument('rounds', '3');
const agentCount = argument('agents', '8');
const requestsPerAgent = argument('requests', '6');
const turnsPerRequest = argument('turns', '10');
const chatters = argument('chatters', '8');
const chatsPerChatter = argument('chats', '6');

const databaseUrl = process.env.DATABASE_URL;
if (!databaseUrl) {
  console.error('multi-process: set DATABASE_URL (e.g. postgres://root@127.0.0.1:5432/soak)');
  process.exit(2);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};
const percentile = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor((values.length * p) / 100))]!;
const WIDE = Object.fromEntries(
  ['thread_create', 'observe', 'observe_respond', 'chat', 'observe_file', 'image_upload'].map((operation) => [
    operation,
    { subject: { limit: 1_000_000, windowSeconds: 10 }, organization: { limit: 1_000_000, windowSeconds: 10 } },
  ]),
);

/** CPU seconds (user + system) a process has used, from /proc; 0 once it is gone. */
function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

function rssMb(pid: number | undefined): number {
  if (pid === undefined) return 0;
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Math.round(Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1] ?? 0) / 1024);
}

const schema = `ma_multi_${randomBytes(5).toString('hex')}`;
const admin = new pg.Client({ connectionString: databaseUrl });
await admin.connect();
await admin.query(`CREATE SCHEMA ${schema}`);
await admin.query('CREATE EXTENSION IF NOT EXISTS vector').catch(() => undefined);
const url = new URL(databaseUrl);
url.searchParams.set('options', `-c search_path=${schema},public`);
const database = url.toString();
const cwd = await mkdtemp(join(tmpdir(), 'ma-multi-'));
const start = () => startServerProcess({ args: ['--database-url', database], cwd });

async function cli(args: string[]): Promise<any> {
  const result = await runCli([...args, '--database-url', database, '--json']);
  if (result.code !== 0) throw new Error(`${args.join(' ')}: ${result.stderr}`);
  return JSON.parse(result.stdout);
}

const first: ServerProcess = await start();
let second: ServerProcess | null = null;
const agents: string[] = [];
const organizations: { id: string; key: string }[] = [];
for (let i = 0; i < 2; i++) {
  const { organization_id: id } = await cli(['orgs', 'create', '--name', `bench ${i}`, '--credits', '1000000']);
  await cli(['orgs', 'limits', '--org', id, '--limits', JSON.stringify({ rateLimits: WIDE })]);
  const { key } = await cli(['keys', 'create', '--org', id]);
  organizations.push({ id, key });
}

async function readyAgent(api: Client): Promise<string> {
  const created = await api.post('/v1/agents', { agent_config: { role: 'assistant', objective: 'remember deliveries' } });
  if (created.status !== 202) throw new Error(`create agent: ${created.status} ${created.text}`);
  for (;;) {
    if ((await api.get(`/v1/agents/${created.body.agent_id}`)).body.status === 'ready') break;
    await sleep(50);
  }
  agents.push(created.body.agent_id);
  return created.body.agent_id as string;
}

/** Sends `send` until it is not refused for a busy agent (429, Retry-After 1). */
async function accepted(send: () => Promise<{ status: number; text: string; body: any }>) {
  for (;;) {
    const response = await send();
    if (response.status === 202 || response.status === 200) return response;
    if (response.status !== 429) throw new Error(`${response.status} ${response.text}`);
    await sleep(1000);
  }
}

const sentence = (n: number) => `Courier ${randomBytes(4).toString('hex')} delivered ${n} crates of pears to dock ${n % 7} before the ${n % 3 === 0 ? 'storm' : 'tide'} turned.`;

// Chat agents: one per chatter, threads created as that person, ~200 memories each.
type Chatter = { organization: number; person: string; agentId: string; threadId: string };
const chatterSetup: Chatter[] = [];
for (let c = 0; c < chatters; c++) {
  const organization = c % 2;
  const api = client(first.url, organizations[organization]!.key);
  const agentId = await readyAgent(api);
  const person = `person-${c}`;
  const thread = await api.post(`/v1/agents/${agentId}/threads`, { title: 'bench' }, { headers: { 'x-sp-end-user': person } });
  const observations = Array.from({ length: 100 }, (_, n) => ({ content: [{ type: 'text', text: sentence(n) }] }));
  for (let batch = 0; batch < 2; batch++) {
    const sent = await accepted(() => api.post(`/v1/agents/${agentId}/threads/${thread.body.thread_id}/observe`, { observations }, { headers: { 'x-sp-end-user': person } }));
    for (;;) {
      const status = await api.get(`/v1/agents/${agentId}/threads/${thread.body.thread_id}/observe/${sent.body.observation_id}/status`, { headers: { 'x-sp-end-user': person } });
      if (status.body.status === 'committed') break;
      if (['failed', 'cancelled'].includes(status.body.status)) throw new Error(`setup observe ${status.body.status}`);
      await sleep(50);
    }
  }
  chatterSetup.push({ organization, person, agentId, threadId: thread.body.thread_id });
}

/**
 * Watches a phase: samples the database's connections (other than the bench's own) every 200 ms
 * for their peak, and on stop reports the CPU seconds the serve processes, this database's
 * PostgreSQL backends and the load generator used during the phase.
 */
function watch(servers: ServerProcess[]) {
  const backends = new Map<number, number>();
  let peak = 0;
  let running = true;
  const serveStart = servers.map((server) => cpuSeconds(server.child.pid!));
  const generatorStart = process.cpuUsage();
  const done = (async () => {
    for (let sample = 0; running; sample++) {
      const { rows } = await admin.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()');
      peak = Math.max(peak, rows.length);
      // Backends of the first sample existed before the phase (their CPU so far is the baseline);
      // one first seen later started during it (all its CPU counts).
      for (const { pid } of rows) if (!backends.has(pid)) backends.set(pid, sample === 0 ? cpuSeconds(pid) : 0);
      await sleep(200);
    }
  })();
  return async () => {
    running = false;
    await done;
    const generator = process.cpuUsage(generatorStart);
    return {
      connections: peak,
      cpu: {
        serve: servers.reduce((sum, server, i) => sum + cpuSeconds(server.child.pid!) - serveStart[i]!, 0),
        postgres: [...backends].reduce((sum, [pid, start]) => sum + Math.max(0, cpuSeconds(pid) - start), 0),
        generator: (generator.user + generator.system) / 1e6,
      },
    };
  };
}

type Phase = { perSecond: number; p50: number; p95: number; max: number; load: number; connections: number; seconds: number; cpu: { serve: number; postgres: number; generator: number } };

async function observePhase(servers: ServerProcess[]): Promise<Phase> {
  const load = loadavg()[0]!;
  let n = 0;
  const api = (organization: number) => client(servers[n++ % servers.length]!.url, organizations[organization]!.key);
  // Fresh agents each phase, created before the clock starts.
  const targets: { organization: number; agentId: string; threadId: string }[] = [];
  for (let a = 0; a < agentCount; a++) {
    const organization = a % 2;
    const agentId = await readyAgent(api(organization));
    const thread = await api(organization).post(`/v1/agents/${agentId}/threads`, { title: 'bench' });
    targets.push({ organization, agentId, threadId: thread.body.thread_id });
  }
  const stop = watch(servers);
  const latencies: number[] = [];
  const started = performance.now();
  await Promise.all(
    targets.map(async ({ organization, agentId, threadId }) => {
      const path = `/v1/agents/${agentId}/threads/${threadId}`;
      for (let r = 0; r < requestsPerAgent; r++) {
        const observations = Array.from({ length: turnsPerRequest }, (_, t) => ({ content: [{ type: 'text', text: sentence(r * turnsPerRequest + t) }] }));
        const sentAt = performance.now();
        const sent = await accepted(() => api(organization).post(`${path}/observe`, { observations }));
        for (;;) {
          const status = await api(organization).get(`${path}/observe/${sent.body.observation_id}/status`);
          if (status.body.status === 'committed') break;
          if (['failed', 'cancelled'].includes(status.body.status)) throw new Error(`observe ${status.body.status}: ${status.text}`);
          await sleep(25);
        }
        latencies.push(performance.now() - sentAt);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  return { perSecond: (agentCount * requestsPerAgent * turnsPerRequest) / seconds, p50: percentile(latencies, 50), p95: percentile(latencies, 95), max: Math.max(...latencies), load, seconds, ...(await stop()) };
}

async function chatPhase(servers: ServerProcess[], round: number): Promise<Phase> {
  const load = loadavg()[0]!;
  let n = 0;
  const stop = watch(servers);
  const latencies: number[] = [];
  const started = performance.now();
  await Promise.all(
    chatterSetup.map(async ({ organization, person, agentId, threadId }) => {
      for (let c = 0; c < chatsPerChatter; c++) {
        const api = client(servers[n++ % servers.length]!.url, organizations[organization]!.key);
        const sentAt = performance.now();
        const chat = await api.post(`/v1/agents/${agentId}/threads/${threadId}/chat`, { turn_id: `r${round}-${servers.length}-${c}`, message: `How many crates went to dock ${c % 7}?` }, { headers: { 'x-sp-end-user': person } });
        if (chat.status !== 200) throw new Error(`chat ${chat.status}: ${chat.text}`);
        latencies.push(performance.now() - sentAt);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  return { perSecond: (chatters * chatsPerChatter) / seconds, p50: percentile(latencies, 50), p95: percentile(latencies, 95), max: Math.max(...latencies), load, seconds, ...(await stop()) };
}

const results: Record<'one' | 'two', { observe: Phase[]; chat: Phase[]; rss: number[][] }> = {
  one: { observe: [], chat: [], rss: [] },
  two: { observe: [], chat: [], rss: [] },
};
/** CPU seconds per wall second (cores kept busy) of each party during the phase. */
const cores = (phase: Phase) =>
  `cores busy: serve ${(phase.cpu.serve / phase.seconds).toFixed(2)}, postgres ${(phase.cpu.postgres / phase.seconds).toFixed(2)}, load generator ${(phase.cpu.generator / phase.seconds).toFixed(2)}`;
const fmt = (phase: Phase, unit: string) =>
  `${phase.perSecond.toFixed(1)} ${unit}, latency p50 ${Math.round(phase.p50)} / p95 ${Math.round(phase.p95)} / max ${Math.round(phase.max)} ms, load ${phase.load.toFixed(1)}, peak db connections ${phase.connections}; ${cores(phase)}`;

console.log(`multi-process: ${cpus().length} cores, node ${process.version}, ${new Date().toISOString()}, rounds ${rounds}, observe ${agentCount} agents x ${requestsPerAgent} requests x ${turnsPerRequest} turns, chat ${chatters} clients x ${chatsPerChatter}`);
try {
  for (let round = 0; round < rounds; round++) {
    const order: ('one' | 'two')[] = round % 2 === 0 ? ['one', 'two'] : ['two', 'one'];
    for (const configuration of order) {
      if (configuration === 'two' && !second) second = await start();
      if (configuration === 'one' && second) {
        await second.stop();
        second = null;
      }
      const servers = configuration === 'two' ? [first, second!] : [first];
      const observe = await observePhase(servers);
      const chat = await chatPhase(servers, round);
      const rss = servers.map((server) => rssMb(server.child.pid));
      results[configuration].observe.push(observe);
      results[configuration].chat.push(chat);
      results[configuration].rss.push(rss);
      console.log(`round ${round + 1} ${configuration}: observes ${fmt(observe, 'turns/s')}`);
      console.log(`round ${round + 1} ${configuration}: chats    ${fmt(chat, 'chats/s')}; serve RSS ${rss.join(' + ')} MB`);
    }
  }
  const summary = (configuration: 'one' | 'two', phase: 'observe' | 'chat') => median(results[configuration][phase].map((result) => result.perSecond));
  for (const [phase, unit] of [['observe', 'turns/s'], ['chat', 'chats/s']] as const) {
    const one = summary('one', phase);
    const two = summary('two', phase);
    const p95 = (configuration: 'one' | 'two') => Math.round(median(results[configuration][phase].map((result) => result.p95)));
    console.log(`median ${phase}: one ${one.toFixed(1)} ${unit} (p95 ${p95('one')} ms), two ${two.toFixed(1)} ${unit} (p95 ${p95('two')} ms), two/one ${(two / one).toFixed(2)}`);
  }
} finally {
  await first.stop();
  await second?.stop();
  await admin.query('DELETE FROM public.memory_index_records WHERE agent_id = ANY($1)', [agents]).catch(() => undefined);
  await admin.query('DELETE FROM public.memory_index_terms WHERE agent_id = ANY($1)', [agents]).catch(() => undefined);
  await admin.query('DELETE FROM public.memory_index_agents WHERE agent_id = ANY($1)', [agents]).catch(() => undefined);
  await admin.query(`DROP SCHEMA ${schema} CASCADE`);
  await admin.end();
  await rm(cwd, { recursive: true, force: true });
}
