/**
 * Where a PostgreSQL index search spends its time, statement by statement, on a table kept by
 * bench/index-scale.ts (`--schema NAME`): runs `--queries` searches of `agent_main` (both channels,
 * 50 hits, the bench's own query texts are not needed: LoCoMo-style questions), times every SQL
 * statement the adapter sends, then prints for each kind of statement its median and max and the
 * `EXPLAIN (ANALYZE, BUFFERS)` of its slowest run (re-run in a transaction with the same
 * `set_config` calls). Also prints the tables' pg_stat_user_tables / pg_class state.
 *
 *   DATABASE_URL=postgres://… npx tsx bench/pg-explain.ts SCHEMA [--queries 24] [--plans] [--exact-below N]
 */
import { loadavg } from 'node:os';
import { openSqlClient, postgresMemoryIndex, type SqlClient } from '@memory-agents/adapter-postgres';
import { hashedNgramEmbedder } from '@memory-agents/core';

const schema = process.argv[2] ?? 'kept100k';
const queriesAt = process.argv.indexOf('--queries');
const rounds = queriesAt > 0 ? Number(process.argv[queriesAt + 1]) : 24;
const showPlans = process.argv.includes('--plans');
const client = await openSqlClient({ connectionString: process.env.DATABASE_URL! });

type Timed = { kind: string; text: string; params: unknown[] | undefined; ms: number; setup: { text: string; params: unknown[] | undefined }[] };
const timed: Timed[] = [];
function kindOf(text: string): string {
  if (text.includes('nearest AS MATERIALIZED')) return 'vector (SQL)';
  if (text.includes('query_terms AS')) return 'full text: postings';
  if (text.includes('LEFT JOIN') && text.includes('t.df')) return 'full text: statistics';
  if (text.includes('reltuples')) return 'agent size';
  if (text.includes("key = 'embedder'")) return 'fingerprint';
  if (text.includes('set_config')) return 'set_config';
  return text.replace(/\s+/g, ' ').slice(0, 60);
}
function wrap(sql: SqlClient, setup?: Timed['setup']): SqlClient {
  return new Proxy(sql, {
    get(target, property, receiver) {
      if (property === 'query') {
        return async (text: string, params?: unknown[]) => {
          const started = performance.now();
          const result = await target.query(text, params as never);
          const ms = performance.now() - started;
          const kind = kindOf(text);
          if (kind === 'set_config') setup?.push({ text, params });
          else timed.push({ kind, text, params, ms, setup: setup ? [...setup] : [] });
          return result;
        };
      }
      if (property === 'transaction') {
        return (fn: (tx: SqlClient) => Promise<unknown>, options?: unknown) =>
          (target.transaction as (f: (tx: SqlClient) => Promise<unknown>, o?: unknown) => Promise<unknown>)((tx) => fn(wrap(tx, [])), options);
      }
      const value = Reflect.get(target, property, receiver) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

const { rows: tableState } = await client.query(
  `SELECT s.relname, s.n_live_tup, s.n_dead_tup, s.n_mod_since_analyze, s.n_ins_since_vacuum, s.last_analyze, s.last_vacuum, c.reltuples, c.relpages, c.relallvisible
   FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid WHERE s.schemaname = $1 ORDER BY s.relname`,
  [schema],
);
console.table(tableState);

const exactAt = process.argv.indexOf('--exact-below');
const index = postgresMemoryIndex({ client: wrap(client), schema, settleAfterRows: null, ...(exactAt > 0 ? { exactSearchBelow: Number(process.argv[exactAt + 1]) } : {}) });
await index.init();
const embedder = hashedNgramEmbedder();
const questions = [
  'What did Melanie paint recently?', 'When did Caroline go to the LGBTQ support group?', 'What is Jon planning for his dance studio?',
  'How many times has Gina been to Paris?', 'What kind of car does John drive?', 'Where did Maria volunteer last summer?',
  'What books does Tim like to read?', 'Did Audrey adopt a dog?', 'What did Andrew cook for dinner on Sunday?', 'Why did James quit his job?',
  'What instrument does Deborah play?', 'When is Evan moving to Denver?',
];
const whole: number[] = [];
for (let i = 0; i < rounds; i++) {
  const question = questions[i % questions.length]!;
  const started = performance.now();
  await index.search({ agentId: 'agent_main', text: question, vector: embedder.embedSync(question), limit: 50 });
  whole.push(performance.now() - started);
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const ms = (value: number) => Math.round(value * 10) / 10;
console.log(JSON.stringify({ schema, searches: whole.length, searchMedian: ms(median(whole)), searchMax: ms(Math.max(...whole)), load: loadavg()[0]!.toFixed(1) }));
const kinds = [...new Set(timed.map((entry) => entry.kind))];
for (const kind of kinds) {
  const runs = timed.filter((entry) => entry.kind === kind);
  console.log(JSON.stringify({ kind, runs: runs.length, median: ms(median(runs.map((run) => run.ms))), max: ms(Math.max(...runs.map((run) => run.ms))) }));
}
if (showPlans) {
  for (const kind of ['full text: postings', 'vector (SQL)', 'full text: statistics']) {
    const runs = timed.filter((entry) => entry.kind === kind).sort((a, b) => b.ms - a.ms);
    const slowest = runs[0];
    if (!slowest) continue;
    const plan = await client.transaction(async (tx) => {
      for (const step of slowest.setup) await tx.query(step.text, step.params as never);
      return (await tx.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS, SETTINGS) ${slowest.text}`, slowest.params as never)).rows;
    });
    console.log(`\n--- ${kind}, slowest ${ms(slowest.ms)} ms, re-run:\n${plan.map((row) => row['QUERY PLAN']).join('\n')}`);
  }
}
await index.close();
await client.close();
