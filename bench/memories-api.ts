/**
 * The memories API at size: list p95 and search-with-explanation p95, against a chat's retrieval
 * (`service.retrieve`, what chat runs before answering) in the same run, through the core service.
 *
 *   npx tsx bench/memories-api.ts [--size 100000] [--queries 200] [--database-url postgres://...] [--settle]
 *
 * The index is the embedded default (LanceDB in a temporary directory), or PostgreSQL with
 * `--database-url` (a schema of its own, dropped afterwards); the store is in memory either way
 * (one agent, fifty threads). Memories are LoCoMo turns (../shared/eval-data/locomo/locomo-dev.json)
 * embedded with the default hashed embedder, all of the one agent; queries are the LoCoMo questions.
 * List runs are: the first page, a page deep in a cursor walk, a thread filter and a text filter.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { lancedbMemoryIndex } from '@memory-agents/adapter-lancedb';
import { openSqlClient, postgresMemoryIndex } from '@memory-agents/adapter-postgres';
import { createMemoryService, hashedNgramEmbedder, inMemoryStore, silentLogger, type MemoryIndex } from '@memory-agents/core';
import type { MemoryRecord } from '@memory-agents/core/adapter';
import { argument } from './support/args.js';

const here = dirname(fileURLToPath(import.meta.url));
const size = Number(argument('size', '100000'));
const maxQueries = Number(argument('queries', '200'));
const databaseUrl = argument('database-url', '');
/** `--settle`: on LanceDB, settle the table (index builds, compaction) after loading, before measuring. */
const settleFirst = process.argv.includes('--settle');
const UPSERT_BATCH = 2000;

type Turn = { speaker: string; text: string; date: string };
type Locomo = { conversation: Record<string, unknown>; qa: { question: string }[] }[];

async function loadLocomo(): Promise<{ turns: Turn[]; questions: string[] }> {
  const data = JSON.parse(await readFile(join(here, '../../shared/eval-data/locomo/locomo-dev.json'), 'utf8')) as Locomo;
  const turns: Turn[] = [];
  const questions: string[] = [];
  for (const sample of data) {
    for (const [key, value] of Object.entries(sample.conversation)) {
      if (!/^session_\d+$/.test(key) || !Array.isArray(value)) continue;
      const date = String(sample.conversation[`${key}_date_time`] ?? '');
      for (const turn of value as { speaker: string; text: string }[]) turns.push({ speaker: turn.speaker, text: turn.text, date });
    }
    for (const qa of sample.qa) questions.push(String(qa.question));
  }
  return { turns, questions };
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;

async function timed(runs: number, call: (i: number) => Promise<unknown>) {
  const latencies: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    await call(i);
    latencies.push(performance.now() - started);
  }
  latencies.sort((a, b) => a - b);
  return { p50: percentile(latencies, 50), p95: percentile(latencies, 95), n: latencies.length };
}

/** Times calls of several kinds on the same inputs, one of each per input in turn, so caches and load favour none. */
async function interleaved(runs: number, calls: Record<string, (i: number) => Promise<unknown>>) {
  const latencies: Record<string, number[]> = Object.fromEntries(Object.keys(calls).map((name) => [name, []]));
  for (let i = 0; i < runs; i++) {
    for (const [name, call] of Object.entries(calls)) {
      const started = performance.now();
      await call(i);
      latencies[name]!.push(performance.now() - started);
    }
  }
  return Object.fromEntries(
    Object.entries(latencies).map(([name, values]) => {
      values.sort((a, b) => a - b);
      return [name, { p50: percentile(values, 50), p95: percentile(values, 95), n: values.length }];
    }),
  );
}

async function openIndex(): Promise<{ name: string; index: MemoryIndex; cleanup: () => Promise<void> }> {
  if (databaseUrl) {
    const client = await openSqlClient({ connectionString: databaseUrl });
    const schema = `bench_memories_${process.pid}`;
    return {
      name: 'postgres',
      index: postgresMemoryIndex({ client, schema }),
      cleanup: async () => {
        await client.exec(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
        await client.close();
      },
    };
  }
  const uri = await mkdtemp(join(tmpdir(), 'bench-memories-'));
  return { name: 'lancedb (embedded default)', index: lancedbMemoryIndex({ uri }), cleanup: () => rm(uri, { recursive: true, force: true }) };
}

async function main() {
  const corpus = await loadLocomo();
  const embedder = hashedNgramEmbedder();
  const { name, index, cleanup } = await openIndex();
  const service = createMemoryService({ store: inMemoryStore(), index, embedder, logger: silentLogger });
  try {
    await service.start();
    const org = await service.admin.createOrganization({ name: 'Bench' });
    const caller = await service.as(org.organizationId);
    const agentId = (await service.agents.create({ caller, body: { agent_config: { role: 'r', objective: 'o' } } })).agent_id;
    await service.idle();
    const threads: string[] = [];
    for (let i = 0; i < 50; i++) threads.push((await service.threads.create({ caller, agentId, body: {} })).thread_id);

    const base = Date.parse('2025-01-01T00:00:00Z');
    const started = performance.now();
    for (let start = 0; start < size; start += UPSERT_BATCH) {
      const records: MemoryRecord[] = [];
      for (let i = start; i < Math.min(size, start + UPSERT_BATCH); i++) {
        const turn = corpus.turns[i % corpus.turns.length]!;
        const at = new Date(base + i * 60_000).toISOString();
        records.push({
          id: `mem_${String(i).padStart(26, '0')}`,
          organizationId: org.organizationId,
          agentId,
          text: `${turn.text}${i >= corpus.turns.length ? ` (${Math.floor(i / corpus.turns.length)})` : ''}`,
          keywords: `${turn.date} ${turn.speaker}`,
          vector: embedder.embedSync(turn.text),
          speaker: turn.speaker,
          occurredAt: at,
          source: { kind: 'turn', threadId: threads[i % threads.length]!, observationId: `obs_${String(Math.floor(i / 10)).padStart(26, '0')}`, turnIndex: i % 10 },
          createdAt: at,
          provenance: { writer: 'bench', jobId: null, span: null },
          alsoFrom: [],
          validFrom: at,
          validTo: null,
          supersededBy: null,
          suspicious: false, expiresAt: null,
        });
      }
      await index.upsert({ records, embedder: { id: embedder.id, dimensions: embedder.dimensions }, newIds: true });
    }
    console.log(`${name}: ${size} memories upserted in ${((performance.now() - started) / 1000).toFixed(1)} s; node ${process.version}`);
    if (settleFirst && 'settle' in index) {
      // Measure the settled table, not the index builds and compaction that follow a bulk load.
      const settling = performance.now();
      await (index as MemoryIndex & { settle(): Promise<void> }).settle();
      console.log(`settled in ${((performance.now() - settling) / 1000).toFixed(1)} s`);
    }

    const queries = corpus.questions.slice(0, maxQueries);
    // Warm both paths once (first reads open files and caches).
    await service.retrieve({ caller, agentId, query: queries[0]! });
    await service.memories.search({ caller, agentId, body: { query: queries[0]! } });

    let cursor: string | null = null;
    const results: Record<string, { p50: number; p95: number; n: number }> = {
      'list, first page (limit 20)': await timed(30, () => service.memories.list({ caller, agentId, query: { limit: '20' } })),
      'list, cursor walk (limit 100)': await timed(30, async () => {
        const page = await service.memories.list({ caller, agentId, query: { limit: '100', ...(cursor ? { cursor } : {}) } });
        cursor = page.next_cursor;
      }),
      'list, thread_id filter': await timed(50, (i) => service.memories.list({ caller, agentId, query: { thread_id: threads[i % threads.length]! } })),
      'list, text_contains filter': await timed(20, (i) => service.memories.list({ caller, agentId, query: { text_contains: ['dog', 'painting', 'camping', 'school'][i % 4]! } })),
      ...(await interleaved(queries.length, {
        "chat's retrieval (service.retrieve)": (i) => service.retrieve({ caller, agentId, query: queries[i]! }),
        'search with explanation': (i) => service.memories.search({ caller, agentId, body: { query: queries[i]! } }),
      })),
    };
    for (const [what, { p50, p95, n }] of Object.entries(results)) console.log(`${what.padEnd(38)} p50 ${p50.toFixed(1).padStart(7)} ms   p95 ${p95.toFixed(1).padStart(7)} ms   (n=${n})`);
    const ratio = results['search with explanation']!.p95 / results["chat's retrieval (service.retrieve)"]!.p95;
    console.log(`search p95 / retrieval p95 = ${ratio.toFixed(2)}`);
  } finally {
    await service.stop();
    await cleanup();
  }
}

await main();
