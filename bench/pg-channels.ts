/**
 * Each channel of the PostgreSQL memory index alone, on a table kept by bench/index-scale.ts
 * (`--schema NAME`): the median and max of 24 full-text-only and 24 vector-only searches of
 * `agent_main`, 50 hits each. For profiling which channel a search spends its time in.
 *
 *   DATABASE_URL=postgres://… npx tsx bench/pg-channels.ts kept100k
 */
import { loadavg } from 'node:os';
import { openSqlClient, postgresMemoryIndex } from '@memory-agents/adapter-postgres';
import { hashedNgramEmbedder } from '@memory-agents/core';

const schema = process.argv[2] ?? 'kept100k';
const client = await openSqlClient({ connectionString: process.env.DATABASE_URL! });
const index = postgresMemoryIndex({ client, schema, annThreshold: null });
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
