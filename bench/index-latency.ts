/**
 * Memory index latency: bulk upsert throughput and search p50/p95 per backend.
 *
 *   npx tsx bench/index-latency.ts [--sizes 10000,100000] [--backends in-memory,lancedb,pglite,postgres]
 *                                  [--queries 200] [--seconds 20]
 *
 * Memories are LoCoMo turns (../shared/eval-data/locomo/locomo-dev.json) with the speakers swapped
 * for varied names and a few varied entities, embedded with the default hashed embedder. 90% of
 * the records belong to the agent that is searched, the rest to 9 others (so the agent filter
 * matters). Queries are the LoCoMo questions, with the same name swapping. `postgres` runs only
 * when DATABASE_URL is set.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { lancedbMemoryIndex } from '@memory-agents/adapter-lancedb';
import { openSqlClient, postgresMemoryIndex } from '@memory-agents/adapter-postgres';
import { hashedNgramEmbedder, inMemoryMemoryIndex, type MemoryIndex } from '@memory-agents/core';
import { type MemoryRecord } from '@memory-agents/core/adapter';
import { seededRandom as random } from '@memory-agents/core/testing';
import { argument } from './support/args.js';

const here = dirname(fileURLToPath(import.meta.url));

const sizes = argument('sizes', '10000,100000').split(',').map(Number);
const backends = argument('backends', 'in-memory,lancedb,pglite,postgres').split(',');
const maxQueries = Number(argument('queries', '200'));
const maxSeconds = Number(argument('seconds', '20'));
const UPSERT_BATCH = 1000;
const LIMIT = 20;
const MAIN_AGENT = 'agent_main';

type Turn = { speaker: string; text: string; date: string };
type Locomo = { conversation: Record<string, unknown>; qa: { question: string }[] }[];

const FIRST_NAMES = [
  'Caroline', 'Melanie', 'Jon', 'Gina', 'John', 'Maria', 'Joanna', 'Nate', 'Tim', 'Audrey', 'Andrew', 'James', 'Deborah', 'Jolene',
  'Evan', 'Sam', 'Calvin', 'Dave', 'Priya', 'Wei', 'Fatima', 'Olu', 'Ingrid', 'Mateo', 'Yuki', 'Aisha', 'Lars', 'Sofia', 'Ravi', 'Chen',
];
const LAST_NAMES = ['Smith', 'Okafor', 'Nakamura', 'Garcia', 'Kowalski', 'Haddad', 'Larsen', 'Singh', 'Dubois', 'Moreau', 'Rossi', 'Ivanova'];
const PLACES = ['Lisbon', 'Nairobi', 'Denver', 'Osaka', 'Krakow', 'Austin', 'Bergen', 'Cusco', 'Hanoi', 'Leeds', 'Tucson', 'Porto'];

async function loadLocomo(): Promise<{ turns: Turn[]; questions: string[]; speakers: string[] }> {
  const data = JSON.parse(await readFile(join(here, '../../shared/eval-data/locomo/locomo-dev.json'), 'utf8')) as Locomo;
  const turns: Turn[] = [];
  const questions: string[] = [];
  const speakers = new Set<string>();
  for (const sample of data) {
    const conversation = sample.conversation;
    speakers.add(String(conversation.speaker_a));
    speakers.add(String(conversation.speaker_b));
    for (const [key, value] of Object.entries(conversation)) {
      if (!/^session_\d+$/.test(key) || !Array.isArray(value)) continue;
      const date = String(conversation[`${key}_date_time`] ?? '');
      for (const turn of value as { speaker: string; text: string }[]) turns.push({ speaker: turn.speaker, text: turn.text, date });
    }
    for (const qa of sample.qa) questions.push(String(qa.question));
  }
  return { turns, questions, speakers: [...speakers] };
}

function varyNames(text: string, speakers: readonly string[], next: () => number): { text: string; names: string[] } {
  const names: string[] = [];
  let result = text;
  for (const speaker of speakers) {
    if (!result.includes(speaker)) continue;
    const name = `${FIRST_NAMES[Math.floor(next() * FIRST_NAMES.length)]!}`;
    names.push(name);
    result = result.replaceAll(speaker, name);
  }
  return { text: result, names };
}

function makeRecords(count: number, corpus: Awaited<ReturnType<typeof loadLocomo>>): MemoryRecord[] {
  const next = random(count);
  const embedder = hashedNgramEmbedder();
  const records: MemoryRecord[] = [];
  for (let i = 0; i < count; i++) {
    const turn = corpus.turns[i % corpus.turns.length]!;
    const speaker = `${FIRST_NAMES[Math.floor(next() * FIRST_NAMES.length)]!} ${LAST_NAMES[Math.floor(next() * LAST_NAMES.length)]!}`;
    const varied = varyNames(turn.text, corpus.speakers, next);
    // Some variety beyond the 6k source turns, so 100k records are not 16 copies of each.
    const place = next() < 0.3 ? ` (in ${PLACES[Math.floor(next() * PLACES.length)]!})` : '';
    const text = `${speaker}: ${varied.text}${place}`;
    const agentId = next() < 0.9 ? MAIN_AGENT : `agent_other_${Math.floor(next() * 9)}`;
    records.push({
      id: `mem_${String(i).padStart(26, '0')}`,
      organizationId: 'org_bench',
      agentId,
      text,
      keywords: `${turn.date} ${speaker} ${varied.names.join(' ')}`,
      vector: embedder.embedSync(text),
      speaker,
      occurredAt: null,
      source: { kind: 'turn', threadId: `thread_${i % 50}`, observationId: `obs_${Math.floor(i / 10)}`, turnIndex: i % 10 },
      createdAt: '2026-01-01T00:00:00.000Z',
      provenance: { writer: 'unknown', jobId: null, span: null }, alsoFrom: [], validFrom: null, validTo: null, supersededBy: null, suspicious: false, expiresAt: null,
    });
  }
  return records;
}

type Backend = { name: string; open: () => Promise<{ index: MemoryIndex; reopen: () => Promise<MemoryIndex>; cleanup: () => Promise<void> }> };

function backendsFor(): Backend[] {
  const all: Backend[] = [
    {
      name: 'in-memory',
      open: async () => {
        const index = inMemoryMemoryIndex();
        return { index, reopen: async () => index, cleanup: async () => {} };
      },
    },
    {
      name: 'lancedb',
      open: async () => {
        const uri = await mkdtemp(join(tmpdir(), 'bench-lancedb-'));
        return {
          index: lancedbMemoryIndex({ uri }),
          reopen: async () => lancedbMemoryIndex({ uri }),
          cleanup: () => rm(uri, { recursive: true, force: true }),
        };
      },
    },
    {
      name: 'pglite',
      open: async () => {
        const client = await openSqlClient({ dataDir: 'memory://' });
        return { index: postgresMemoryIndex({ client }), reopen: async () => postgresMemoryIndex({ client }), cleanup: () => client.close() };
      },
    },
  ];
  const databaseUrl = process.env.DATABASE_URL;
  if (databaseUrl) {
    all.push({
      name: 'postgres',
      open: async () => {
        const client = await openSqlClient({ connectionString: databaseUrl });
        const schema = `bench_${process.pid}`;
        return {
          index: postgresMemoryIndex({ client, schema }),
          reopen: async () => postgresMemoryIndex({ client, schema }),
          cleanup: async () => {
            await client.exec(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
            await client.close();
          },
        };
      },
    });
  }
  return all.filter((backend) => backends.includes(backend.name));
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
const fmt = (ms: number) => (ms < 10 ? ms.toFixed(2) : ms.toFixed(1));

async function timeQueries(index: MemoryIndex, queries: { text: string; vector: Float32Array }[], mode: 'both' | 'lexical' | 'semantic') {
  const latencies: number[] = [];
  const deadline = performance.now() + maxSeconds * 1000;
  for (const query of queries) {
    const started = performance.now();
    await index.search({
      agentId: MAIN_AGENT,
      text: mode === 'semantic' ? '' : query.text,
      vector: mode === 'lexical' ? null : query.vector,
      limit: LIMIT,
    });
    latencies.push(performance.now() - started);
    if (latencies.length >= 10 && performance.now() > deadline) break;
  }
  latencies.sort((a, b) => a - b);
  return { p50: percentile(latencies, 50), p95: percentile(latencies, 95), n: latencies.length };
}

async function main() {
  const corpus = await loadLocomo();
  const embedder = hashedNgramEmbedder();
  const fingerprint = { id: embedder.id, dimensions: embedder.dimensions };
  const queryNext = random(99);
  const queries = corpus.questions.slice(0, maxQueries).map((question) => {
    const text = varyNames(question, corpus.speakers, queryNext).text;
    return { text, vector: embedder.embedSync(text) };
  });
  console.log(`LoCoMo: ${corpus.turns.length} turns, ${corpus.questions.length} questions; node ${process.version}; limit ${LIMIT}\n`);

  const rows: string[] = [];
  for (const size of sizes) {
    const texts = makeRecords(Math.min(size, 20_000), corpus).map((record) => record.text);
    const embedStarted = performance.now();
    await embedder.embed({ texts });
    const embedRate = texts.length / ((performance.now() - embedStarted) / 1000);
    console.log(`embedder ${embedder.id}: ${Math.round(embedRate)} texts/s (${texts.length} texts, mean ${Math.round(texts.reduce((s, t) => s + t.length, 0) / texts.length)} chars)`);
    const records = makeRecords(size, corpus);

    for (const backend of backendsFor()) {
      const { index, reopen, cleanup } = await backend.open();
      try {
        await index.init();
        const started = performance.now();
        for (let start = 0; start < records.length; start += UPSERT_BATCH) {
          await index.upsert({ records: records.slice(start, start + UPSERT_BATCH), embedder: fingerprint });
        }
        const upsertSeconds = (performance.now() - started) / 1000;
        // close() waits for background work (LanceDB optimize / ANN build, Postgres HNSW build).
        const settleStarted = performance.now();
        await index.close();
        const searchIndex = await reopen();
        await searchIndex.init();
        const settleSeconds = (performance.now() - settleStarted) / 1000;
        await searchIndex.search({ agentId: MAIN_AGENT, text: 'warm up', vector: queries[0]!.vector, limit: LIMIT });
        const both = await timeQueries(searchIndex, queries, 'both');
        const lexical = await timeQueries(searchIndex, queries, 'lexical');
        const semantic = await timeQueries(searchIndex, queries, 'semantic');
        const count = (await searchIndex.stats({ agentId: MAIN_AGENT })).count;
        await searchIndex.close();
        const row =
          `| ${backend.name} | ${size} | ${Math.round(size / upsertSeconds)} | ${settleSeconds.toFixed(1)} | ` +
          `${fmt(both.p50)} / ${fmt(both.p95)} | ${fmt(lexical.p50)} / ${fmt(lexical.p95)} | ${fmt(semantic.p50)} / ${fmt(semantic.p95)} | ${both.n} | ${count} |`;
        rows.push(row);
        console.log(row);
      } catch (error) {
        console.log(`| ${backend.name} | ${size} | failed: ${String(error)} |`);
        rows.push(`| ${backend.name} | ${size} | failed |`);
      } finally {
        await cleanup();
      }
    }
  }
  console.log('\n| index | records | upsert rec/s | settle s | search p50 / p95 ms (both) | lexical p50 / p95 | semantic p50 / p95 | queries | agent rows |');
  console.log('|-|-|-|-|-|-|-|-|-|');
  for (const row of rows) console.log(row);
}

await main();
