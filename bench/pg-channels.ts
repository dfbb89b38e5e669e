/**
 * Each channel of the PostgreSQL memory index alone, on a table kept by bench/index-scale.ts
 * (`--schema NAME`): the median and max of 24 full-text-only and 24 vector-only searches of
 * `agent_main`, 50 hits each. For profiling which channel a search spends its time in.
 *
 *   DATABASE_URL=postgres://… npx tsx bench/pg-channels.ts kept100k
 *   npx tsx bench/pg-channels.ts - --pglite /tmp/pglite10k [--vector-search database] [--exact-below N]
 */
import { loadavg } from 'node:os';
import { openSqlClient, postgresMemoryIndex } from '@memory-agents/adapter-postgres';
import { hashedNgramEmbedder } from '@memory-agents/core';

const schema = process.argv[2] ?? 'kept100k';
// --pglite DIR: a PGlite database kept by bench/index-scale.ts --backend pglite --data-dir DIR (schema public).
const pgliteAt = process.argv.indexOf('--pglite');
const client = pgliteAt > 0 ? await openSqlClient({ dataDir: process.argv[pgliteAt + 1]! }) : await openSqlClient({ connectionString: process.env.DATABASE_URL! });
// --exact-below N: the adapter's exactSearchBelow (an HNSW index is used only for agents this large).
const exactAt = process.argv.indexOf('--exact-below');
const index = postgresMemoryIndex({
  client,
  ...(pgliteAt > 0 ? {} : { schema }),
  annThreshold: null,
  ...(exactAt > 0 ? { exactSearchBelow: Number(process.argv[exactAt + 1]) } : {}),
  // --vector-search process|database: the adapter's vectorSearch (default: process on PGlite).
  ...(process.argv.includes('--vector-search') ? { vectorSearch: process.argv[process.argv.indexOf('--vector-search') + 1] as 'process' | 'database' } : {}),
});
await index.init();
const embedder = hashedNgramEmbedder();
const questions = [
  'What did Melanie paint recently?', 'When did Caroline go to the LGBTQ support group?', 'What is Jon planning for his dance studio?',
  'How many times has Gina been to Paris?', 'What kind of car does John drive?', 'Where did Maria volunteer last summer?',
  'What books does Tim like to read?', 'Did Audrey adopt a dog?', 'What did Andrew cook for dinner on Sunday?', 'Why did James quit his job?',
  'What instrument does Deborah play?', 'When is Evan moving to Denver?',
];
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const fullText: number[] = [];
const vectors: number[] = [];
for (let round = 0; round < 2; round++) {
  for (const question of questions) {
    let started = performance.now();
    await index.search({ agentId: 'agent_main', text: question, vector: null, limit: 50 });
    fullText.push(performance.now() - started);
    const vector = embedder.embedSync(question);
    started = performance.now();
    await index.search({ agentId: 'agent_main', text: '', vector, limit: 50 });
    vectors.push(performance.now() - started);
  }
}
const ms = (value: number) => Math.round(value * 10) / 10;
console.log(
  JSON.stringify({ schema, fullTextMedian: ms(median(fullText)), fullTextMax: ms(Math.max(...fullText)), vectorMedian: ms(median(vectors)), vectorMax: ms(Math.max(...vectors)), load: loadavg()[0]!.toFixed(1) }),
);
await index.close();
await client.close();
