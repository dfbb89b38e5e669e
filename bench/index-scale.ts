/**
 * Memory index at scale: one agent holding N memories (10k, 100k, 1M), on one index backend.
 *
 *   npx tsx bench/index-scale.ts --backend lancedb --size 100000 [--queries 300] [--seconds 30]
 *                                [--batch 1000] [--out bench/results/index-scale.jsonl]
 *                                [--recall-queries 50] [--ef-search N] [--candidates N] [--rescored N] [--exact-below N] [--ann-threshold N|null] [--vector-search process|database]
 *                                [--settle-window 40] [--settled-p95 30] [--settle-limit 180] (postgres)
 *                                [--learn-during] [--schema NAME (postgres) | --data-dir DIR (pglite) [--reuse]]
 *
 * `--learn-during` keeps learning while the timed searches run: batches of 100 new records
 * (embedded, then `upsert` with `newIds`, as a learning job writes) one after another in the same
 * process, as on the embedded server; the result reports how many were written meanwhile.
 *
 * One backend and one size per process, so the resident memory (RSS) belongs to that index alone
 * (run the grid with bench/index-scale.sh). Records are generated and embedded batch by batch and
 * dropped after their upsert, so the bench itself holds no copy of the corpus.
 *
 * Text: LoCoMo turns and LongMemEval user turns (../shared/eval-data), replicated with varied
 * speakers, names, places and numbers so no two records are the same text; embedded with the default
 * hashed n-gram embedder (384 dims). 90% of the records belong to the searched agent, the rest to 9
 * others, so the agent filter matters. Queries are LoCoMo and LongMemEval questions with the same
 * variation, searched as chat's retrieval does it: one `index.search` with both channels (text and
 * vector) and `CANDIDATES_PER_CHANNEL` hits per channel.
 *
 * Measured: upsert throughput (memories/s, index time only; embedding is reported apart), the time
 * to settle (close, which waits for background index builds, and reopen), search latency p50/p95,
 * and RSS after loading and at the end (plus the peak). `postgres` needs DATABASE_URL.
 * PGlite and PostgreSQL also report recall: for the first `--recall-queries` queries, the share of
 * each channel's exact top 50 (every full-text candidate scored, no HNSW) that the search returned.
 */
import { appendFile, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as lancedb from '@lancedb/lancedb';
import { lancedbMemoryIndex, type LancedbMemoryIndex } from '@memory-agents/adapter-lancedb';
import { openSqlClient, postgresMemoryIndex, type SettleReport } from '@memory-agents/adapter-postgres';
import { hashedNgramEmbedder, inMemoryMemoryIndex, type MemoryIndex } from '@memory-agents/core';
import { CANDIDATES_PER_CHANNEL, type MemoryRecord } from '@memory-agents/core/adapter';
import { seededRandom as random } from '@memory-agents/core/testing';
import { argument } from './support/args.js';

const here = dirname(fileURLToPath(import.meta.url));

const backend = argument('backend', 'lancedb');
const size = Number(argument('size', '10000'));
const maxQueries = Number(argument('queries', '300'));
const maxSeconds = Number(argument('seconds', '30'));
const batch = Number(argument('batch', '1000'));
const out = argument('out', join(here, 'results/index-scale.jsonl'));
const MAIN_AGENT = 'agent_main';

const FIRST_NAMES = [
  'Caroline', 'Melanie', 'Jon', 'Gina', 'John', 'Maria', 'Joanna', 'Nate', 'Tim', 'Audrey', 'Andrew', 'James', 'Deborah', 'Jolene',
  'Evan', 'Sam', 'Calvin', 'Dave', 'Priya', 'Wei', 'Fatima', 'Olu', 'Ingrid', 'Mateo', 'Yuki', 'Aisha', 'Lars', 'Sofia', 'Ravi', 'Chen',
  'Tomasz', 'Lucia', 'Kwame', 'Hana', 'Diego', 'Noor', 'Elif', 'Bjorn', 'Amara', 'Kenji',
];
const LAST_NAMES = ['Smith', 'Okafor', 'Nakamura', 'Garcia', 'Kowalski', 'Haddad', 'Larsen', 'Singh', 'Dubois', 'Moreau', 'Rossi', 'Ivanova', 'Mensah', 'Tanaka'];
const PLACES = ['Lisbon', 'Nairobi', 'Denver', 'Osaka', 'Krakow', 'Austin', 'Bergen', 'Cusco', 'Hanoi', 'Leeds', 'Tucson', 'Porto', 'Quito', 'Tallinn', 'Perth'];
const THINGS = ['the pottery class', 'the marathon', 'the book club', 'the new job', 'the camping trip', 'the guitar lessons', 'the garden', 'the adoption agency', 'the photo exhibit', 'the bakery'];

type Corpus = { turns: { text: string; date: string }[]; questions: string[]; names: string[] };

async function loadCorpus(): Promise<Corpus> {
  const turns: Corpus['turns'] = [];
  const questions: string[] = [];
  const names = new Set<string>();
  type Locomo = { conversation: Record<string, unknown>; qa: { question: string }[] }[];
  const locomo = JSON.parse(await readFile(join(here, '../../shared/eval-data/locomo/locomo-dev.json'), 'utf8')) as Locomo;
  for (const sample of locomo) {
    const conversation = sample.conversation;
    names.add(String(conversation.speaker_a));
    names.add(String(conversation.speaker_b));
    for (const [key, value] of Object.entries(conversation)) {
      if (!/^session_\d+$/.test(key) || !Array.isArray(value)) continue;
      const date = String(conversation[`${key}_date_time`] ?? '');
      for (const turn of value as { speaker: string; text: string }[]) turns.push({ text: `${turn.speaker}: ${turn.text}`, date });
    }
    for (const qa of sample.qa) questions.push(String(qa.question));
  }
  type LongMemEval = { question: string; haystack_dates: string[]; haystack_sessions: { role: string; content: string }[][] }[];
  const longmemeval = JSON.parse(await readFile(join(here, '../../shared/eval-data/longmemeval/longmemeval-s-dev.json'), 'utf8')) as LongMemEval;
  for (const item of longmemeval) {
    questions.push(item.question);
    item.haystack_sessions.forEach((session, s) => {
      for (const turn of session) {
        // User turns are what a memory usually holds; assistant turns run to pages and are cut.
        if (turn.role === 'user') turns.push({ text: turn.content.slice(0, 600), date: item.haystack_dates[s] ?? '' });
      }
    });
  }
  return { turns, questions, names: [...names] };
}

/** Another name for every known speaker, other digits, sometimes a place or a thing. */
function vary(text: string, names: readonly string[], next: () => number): { text: string; mentioned: string[] } {
  const mentioned: string[] = [];
  let result = text;
  for (const name of names) {
    if (!result.includes(name)) continue;
    const other = FIRST_NAMES[Math.floor(next() * FIRST_NAMES.length)]!;
    mentioned.push(other);
    result = result.replaceAll(name, other);
  }
  result = result.replace(/\d/g, () => String(Math.floor(next() * 10)));
  if (next() < 0.3) result += ` (in ${PLACES[Math.floor(next() * PLACES.length)]!})`;
  if (next() < 0.2) result += ` Still thinking about ${THINGS[Math.floor(next() * THINGS.length)]!}.`;
  return { text: result, mentioned };
}

const embedder = hashedNgramEmbedder();
const fingerprint = { id: embedder.id, dimensions: embedder.dimensions };

function makeBatch(from: number, count: number, corpus: Corpus, next: () => number): MemoryRecord[] {
  const records: MemoryRecord[] = [];
  for (let i = from; i < from + count; i++) {
    const turn = corpus.turns[Math.floor(next() * corpus.turns.length)]!;
    const speaker = `${FIRST_NAMES[Math.floor(next() * FIRST_NAMES.length)]!} ${LAST_NAMES[Math.floor(next() * LAST_NAMES.length)]!}`;
    const varied = vary(turn.text, corpus.names, next);
    const agentId = next() < 0.9 ? MAIN_AGENT : `agent_other_${Math.floor(next() * 9)}`;
    records.push({
      id: `mem_${String(i).padStart(26, '0')}`,
      organizationId: 'org_bench',
      agentId,
      text: varied.text,
      keywords: `${turn.date} ${speaker} ${varied.mentioned.join(' ')}`,
      vector: new Float32Array(0),
      speaker,
      occurredAt: null,
      source: { kind: 'turn', threadId: `thread_${i % 500}`, observationId: `obs_${Math.floor(i / 10)}`, turnIndex: i % 10 },
      createdAt: '2026-01-01T00:00:00.000Z',
      provenance: { writer: 'unknown', jobId: null, span: null }, alsoFrom: [], validFrom: null, validTo: null, supersededBy: null, suspicious: false, expiresAt: null,
    });
  }
  return records;
}

type Opened = {
  index: MemoryIndex;
  reopen: () => MemoryIndex;
  cleanup: () => Promise<void>;
  describe?: () => Promise<Record<string, unknown>>;
  /** The same data searched exactly (every full-text candidate scored, no HNSW): the recall reference. */
  exact?: () => MemoryIndex;
};

/** Tuning of the PostgreSQL index from the command line (defaults: the adapter's). */
const postgresTuning = {
  ...(argument('ef-search', '') ? { efSearch: Number(argument('ef-search', '')) } : {}),
  ...(argument('candidates', '') ? { fullTextCandidates: Number(argument('candidates', '')) } : {}),
  ...(argument('rescored', '') ? { fullTextRescored: Number(argument('rescored', '')) } : {}),
  ...(argument('exact-below', '') ? { exactSearchBelow: Number(argument('exact-below', '')) } : {}),
  ...(argument('vector-search', '') ? { vectorSearch: argument('vector-search', '') as 'process' | 'database' } : {}),
  ...(argument('ann-threshold', '') ? { annThreshold: argument('ann-threshold', '') === 'null' ? null : Number(argument('ann-threshold', '')) } : {}),
};
const EXACT = { exactSearchBelow: Number.POSITIVE_INFINITY, fullTextCandidates: Number.POSITIVE_INFINITY };
const recallQueries = Number(argument('recall-queries', '50'));

/** What LanceDB reports about the settled table: fragments, and per index its deltas and unindexed rows. */
async function describeLancedb(uri: string): Promise<Record<string, unknown>> {
  const connection = await lancedb.connect(uri);
  try {
    const table = await connection.openTable('memories');
    const indexes: Record<string, unknown> = {};
    for (const index of await table.listIndices()) {
      const stats = await table.indexStats(index.name);
      indexes[index.name] = { indices: stats?.numIndices, unindexed: stats?.numUnindexedRows };
    }
    const fragments = (await table.stats()).fragmentStats.numFragments;
    table.close();
    return { fragments, indexes };
  } finally {
    connection.close();
  }
}

async function open(): Promise<Opened> {
  switch (backend) {
    case 'in-memory': {
      const index = inMemoryMemoryIndex();
      return { index, reopen: () => index, cleanup: async () => {} };
    }
    case 'lancedb': {
      // --uri keeps the table (and with --reuse searches it without loading): for profiling.
      const kept = argument('uri', '');
      const uri = kept || (await mkdtemp(join(process.env.BENCH_TMP ?? tmpdir(), 'bench-lancedb-')));
      const cleanup = kept ? async () => {} : () => rm(uri, { recursive: true, force: true });
      return { index: lancedbMemoryIndex({ uri }), reopen: () => lancedbMemoryIndex({ uri }), cleanup, describe: () => describeLancedb(uri) };
    }
    case 'pglite': {
      // --data-dir keeps the database (and with --reuse searches it without loading): for profiling.
      const kept = argument('data-dir', '');
      const dataDir = kept || (await mkdtemp(join(process.env.BENCH_TMP ?? tmpdir(), 'bench-pglite-')));
      const client = await openSqlClient({ dataDir });
      return {
        index: postgresMemoryIndex({ client, ...postgresTuning }),
        reopen: () => postgresMemoryIndex({ client, ...postgresTuning }),
        exact: () => postgresMemoryIndex({ client, ...EXACT }),
        cleanup: async () => {
          await client.close();
          if (!kept) await rm(dataDir, { recursive: true, force: true });
        },
      };
    }
    case 'postgres': {
      const connectionString = process.env.DATABASE_URL;
      if (!connectionString) throw new Error('postgres needs DATABASE_URL');
      const client = await openSqlClient({ connectionString });
      // --schema keeps the tables (and with --reuse searches them without loading): for profiling.
      const kept = argument('schema', '');
      const schema = kept || `bench_scale_${process.pid}`;
      const started = performance.now();
      const onSettle = (report: SettleReport) =>
        console.log(`  settled (${report.trigger}): ${report.statement} after ${report.rows} rows, ${Math.round(report.ms)} ms, at ${Math.round((performance.now() - started) / 1000)} s of the run`);
      return {
        index: postgresMemoryIndex({ client, schema, ...postgresTuning, onSettle }),
        // The reopened index settles too when it finds tables no settle saw (an import, a killed load).
        reopen: () => postgresMemoryIndex({ client, schema, ...postgresTuning, onSettle }),
        exact: () => postgresMemoryIndex({ client, schema, ...EXACT }),
        cleanup: async () => {
          if (!kept) await client.exec(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
          await client.close();
        },
      };
    }
    default:
      throw new Error(`unknown backend ${backend}`);
  }
}

const mb = (bytes: number) => Math.round(bytes / 1024 / 1024);
const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
const round = (ms: number) => Math.round(ms * 100) / 100;

async function main() {
  const corpus = await loadCorpus();
  const baselineRss = process.memoryUsage().rss;
  const queryNext = random(99);
  const queries = Array.from({ length: maxQueries }, (_, i) => {
    const question = corpus.questions[Math.floor(queryNext() * corpus.questions.length)]!;
    const text = vary(question, corpus.names, queryNext).text;
    return { text, vector: embedder.embedSync(text), i };
  });
  console.log(`${backend} ${size}: ${corpus.turns.length} source turns, ${corpus.questions.length} questions; node ${process.version}; limit ${CANDIDATES_PER_CHANNEL}`);

  const { index, reopen, cleanup, describe, exact } = await open();
  const next = random(size);
  let upsertMs = 0;
  let embedMs = 0;
  let peakRss = 0;
  try {
    await index.init();
    const loadStarted = performance.now();
    const reuse = process.argv.includes('--reuse');
    for (let from = 0; !reuse && from < size; from += batch) {
      const records = makeBatch(from, Math.min(batch, size - from), corpus, next);
      const embedStarted = performance.now();
      const { vectors } = await embedder.embed({ texts: records.map((record) => record.text) });
      records.forEach((record, i) => (record.vector = vectors[i]!));
      const upsertStarted = performance.now();
      embedMs += upsertStarted - embedStarted;
      await index.upsert({ records, embedder: fingerprint });
      upsertMs += performance.now() - upsertStarted;
      if (from % (batch * 50) === 0) {
        peakRss = Math.max(peakRss, process.memoryUsage().rss);
        console.log(`  ${from + records.length} rows, ${Math.round((from + records.length) / (upsertMs / 1000))} rows/s upsert, rss ${mb(process.memoryUsage().rss)} MB, ${Math.round((performance.now() - loadStarted) / 1000)} s`);
      }
    }
    const loadedRss = process.memoryUsage().rss;
    // PostgreSQL settles itself after a bulk write (statistics, in the background): searched in
    // windows of `--settle-window` queries from the last write on, until a window's p95 is at most
    // `--settled-p95` ms (or `--settle-limit` seconds passed). The first window is the unsettled index.
    let settling: { unsettledP95: number; settledAfterSeconds: number | null; windows: { atSeconds: number; p95: number }[] } | undefined;
    if (backend === 'postgres' && !reuse) {
      const lastWrite = performance.now();
      const windowSize = Number(argument('settle-window', '40'));
      const target = Number(argument('settled-p95', '30'));
      const limitMs = Number(argument('settle-limit', '180')) * 1000;
      const windows: { atSeconds: number; p95: number }[] = [];
      let settledAfterSeconds: number | null = null;
      let cursor = 0;
      while (performance.now() - lastWrite < limitMs) {
        const times: number[] = [];
        for (let i = 0; i < windowSize; i++) {
          const query = queries[cursor++ % queries.length]!;
          const started = performance.now();
          await index.search({ agentId: MAIN_AGENT, text: query.text, vector: query.vector, limit: CANDIDATES_PER_CHANNEL });
          times.push(performance.now() - started);
        }
        times.sort((a, b) => a - b);
        const atSeconds = Math.round((performance.now() - lastWrite) / 100) / 10;
        windows.push({ atSeconds, p95: round(percentile(times, 95)) });
        console.log(`  ${atSeconds} s after the last write: p95 ${round(percentile(times, 95))} ms over ${windowSize} searches`);
        if (percentile(times, 95) <= target) {
          settledAfterSeconds = atSeconds;
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, 1000));
      }
      settling = { unsettledP95: windows[0]?.p95 ?? NaN, settledAfterSeconds, windows };
    }
    // What a server does once learning pauses: LanceDB settles its table (compaction, the rows
    // written since the index builds folded in); close() waits for background work; then reopen
    // as a restarted server would.
    const settleStarted = performance.now();
    if (backend !== 'postgres' && 'settle' in index && typeof index.settle === 'function') await (index as LancedbMemoryIndex).settle();
    await index.close();
    const searchIndex = reopen();
    await searchIndex.init();
    const settleSeconds = (performance.now() - settleStarted) / 1000;
    const settled = describe ? await describe() : undefined;

    for (const query of queries.slice(0, 5)) await searchIndex.search({ agentId: MAIN_AGENT, text: query.text, vector: query.vector, limit: CANDIDATES_PER_CHANNEL });
    const latencies: number[] = [];
    let hits = 0;
    let learning = process.argv.includes('--learn-during');
    let learned = 0;
    const learner = (async () => {
      for (let from = size + 10_000_000; learning; from += 100) {
        const records = makeBatch(from, 100, corpus, next);
        const { vectors } = await embedder.embed({ texts: records.map((record) => record.text) });
        records.forEach((record, i) => (record.vector = vectors[i]!));
        await searchIndex.upsert({ records, embedder: fingerprint, newIds: true });
        learned += records.length;
      }
    })();
    const deadline = performance.now() + maxSeconds * 1000;
    for (const query of queries) {
      const started = performance.now();
      const result = await searchIndex.search({ agentId: MAIN_AGENT, text: query.text, vector: query.vector, limit: CANDIDATES_PER_CHANNEL });
      latencies.push(performance.now() - started);
      hits += result.lexical.length + result.semantic.length;
      if (latencies.length >= 20 && performance.now() > deadline) break;
    }
    const searchSeconds = (performance.now() - deadline) / 1000 + maxSeconds;
    learning = false;
    await learner;
    latencies.sort((a, b) => a - b);
    // Recall of each channel's top CANDIDATES_PER_CHANNEL against an exact search of the same data
    // (outside the timed loop): the share of the exact hits that the measured search returned.
    let recall: { semantic: number; lexical: number; queries: number } | undefined;
    if (exact && recallQueries > 0) {
      const reference = exact();
      await reference.init();
      const sums = { semantic: 0, lexical: 0, semanticQueries: 0, lexicalQueries: 0 };
      for (const query of queries.slice(0, recallQueries)) {
        const request = { agentId: MAIN_AGENT, text: query.text, vector: query.vector, limit: CANDIDATES_PER_CHANNEL };
        const measured = await searchIndex.search(request);
        const truth = await reference.search(request);
        for (const channel of ['semantic', 'lexical'] as const) {
          if (truth[channel].length === 0) continue;
          const found = new Set(measured[channel].map((hit) => hit.record.id));
          sums[channel] += truth[channel].filter((hit) => found.has(hit.record.id)).length / truth[channel].length;
          sums[`${channel}Queries`]++;
        }
      }
      await reference.close();
      const mean = (sum: number, count: number) => (count === 0 ? NaN : Math.round((sum / count) * 1000) / 1000);
      recall = { semantic: mean(sums.semantic, sums.semanticQueries), lexical: mean(sums.lexical, sums.lexicalQueries), queries: Math.min(recallQueries, queries.length) };
      console.log(`  recall@${CANDIDATES_PER_CHANNEL} against exact: semantic ${recall.semantic}, lexical ${recall.lexical} (${recall.queries} queries)`);
    }
    const agentRows = (await searchIndex.stats({ agentId: MAIN_AGENT })).count;
    const endRss = process.memoryUsage().rss;
    await searchIndex.close();
    const result = {
      backend,
      size,
      agentRows,
      date: new Date().toISOString(),
      node: process.version,
      batch,
      upsertPerSecond: Math.round(size / (upsertMs / 1000)),
      embedPerSecond: Math.round(size / (embedMs / 1000)),
      settleSeconds: Math.round(settleSeconds * 10) / 10,
      p50: round(percentile(latencies, 50)),
      p95: round(percentile(latencies, 95)),
      queries: latencies.length,
      ...(learned > 0 ? { learnedDuringSearch: learned, learnedPerSecond: Math.round(learned / searchSeconds) } : {}),
      meanHits: Math.round(hits / latencies.length),
      rssBaselineMb: mb(baselineRss),
      rssLoadedMb: mb(loadedRss),
      rssEndMb: mb(endRss),
      rssPeakMb: Math.round(process.resourceUsage().maxRSS / 1024),
      load: (await import('node:os')).loadavg()[0]!.toFixed(1),
      ...(settled ? { settled } : {}),
      ...(settling ? { settling } : {}),
      ...(recall ? { recall } : {}),
      ...(Object.keys(postgresTuning).length > 0 ? { tuning: postgresTuning } : {}),
    };
    console.log(JSON.stringify(result));
    await mkdir(dirname(out), { recursive: true });
    await appendFile(out, `${JSON.stringify(result)}\n`);
  } finally {
    // A cleanup failure (a timed-out DROP SCHEMA) must not hide the run's own error.
    await cleanup().catch((error: unknown) => console.error(`cleanup failed: ${String(error)}`));
  }
}

await main();
