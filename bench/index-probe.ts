/**
 * Per-query costs on a kept LanceDB table (made by bench/index-scale.ts --uri DIR): the adapter's
 * `search` as chat calls it, another build's adapter on the same table, and raw LanceDB queries
 * (ids only, column sets) as the floor. Variants run interleaved, query by query, so a loaded
 * machine slows them alike.
 *
 *   npx tsx bench/index-probe.ts DIR [AGENT=agent_main] [QUERIES=60] [VARIANTS=a,b,...] [--baseline PATH/adapter-lancedb/dist/index.js]
 *
 * Queries: every 7th LoCoMo question; 50 hits per channel. SQERR=1 also reports how far HNSW_SQ's
 * `_distance` is from exact cosine distance.
 */
import { readFile } from 'node:fs/promises';
import * as lancedb from '@lancedb/lancedb';
import { MatchQuery, Operator } from '@lancedb/lancedb';
import { lancedbMemoryIndex } from '@memory-agents/adapter-lancedb';
import { hashedNgramEmbedder } from '@memory-agents/core';
import { analyze } from '@memory-agents/core/adapter';

const uri = process.argv[2]!;
const agentId = process.argv[3] ?? 'agent_main';
const n = Number(process.argv[4] ?? '60');
const only = process.argv[5]?.startsWith('--') ? undefined : process.argv[5]?.split(',');
const embedder = hashedNgramEmbedder();
type Locomo = { qa: { question: string }[] }[];
const data = JSON.parse(await readFile(new URL('../../shared/eval-data/locomo/locomo-dev.json', import.meta.url), 'utf8')) as Locomo;
const questions = data.flatMap((s) => s.qa.map((q) => q.question)).filter((_, i) => i % 7 === 0).slice(0, n);

const connection = await lancedb.connect(uri);
const table = await connection.openTable('memories');
const index = lancedbMemoryIndex({ uri, readConsistencySeconds: null, settleAfterIdleMs: null });
await index.init();
const baselineAt = process.argv.indexOf('--baseline');
const baselinePath = baselineAt >= 0 ? process.argv[baselineAt + 1]! : null;
const old = baselinePath ? (await import(baselinePath)).lancedbMemoryIndex({ uri, readConsistencySeconds: null, settleAfterIdleMs: null }) : index;
await old.init();
const filter = `agent_id = '${agentId}'`;
const NOVEC = ['id', 'agent_id', 'organization_id', 'text', 'keywords', 'speaker', 'occurred_at', 'created_at', 'source_kind', 'thread_id', 'observation_id', 'turn_index', 'source_id', 'page', 'filename'];
const ALL = [...NOVEC, 'vector'];
const fts = (q: string) => table.query().fullTextSearch(new MatchQuery([...new Set(analyze(q))].join(' '), 'terms', { operator: Operator.Or }));
const vs = (q: string) => table.vectorSearch(embedder.embedSync(q)).column('vector').distanceType('cosine').where(filter).ef(102);

const variants: Record<string, (q: string) => Promise<unknown>> = {
  adapter: (q) => index.search({ agentId, text: q, vector: embedder.embedSync(q), limit: 50 }),
  adapterOld: (q) => old.search({ agentId, text: q, vector: embedder.embedSync(q), limit: 50 }),
  annNoVecPostRefine: (q) => vs(q).postfilter().refineFactor(1).select([...NOVEC, '_distance']).limit(75).toArray(),
  ftsIdText: (q) => fts(q).select(['id', 'text', '_score']).limit(75).toArray(),
  ftsIdText3: (q) => fts(q).select(['id', 'text', 'keywords', 'speaker', '_score']).limit(75).toArray(),
  annIdVec: (q) => vs(q).postfilter().select(['id', 'vector', '_distance']).limit(75).toArray(),
  annIdVecText: (q) => vs(q).postfilter().select(['id', 'vector', 'text', '_distance']).limit(75).toArray(),
  adapterLex: (q) => index.search({ agentId, text: q, vector: null, limit: 50 }),
  adapterSem: (q) => index.search({ agentId, text: '', vector: embedder.embedSync(q), limit: 50 }),
  ftsHit51: (q) => fts(q).select(['hit', '_score']).limit(78).toArray(),
  annHitVec: (q) => vs(q).postfilter().select(['hit', 'vector', '_distance']).limit(78).toArray(),
  idOnly: (q) => table.query().where(`id = 'mem_00000000000000000000000001'`).select(['id']).limit(1).toArray(),
  ftsIdsUnfiltered: (q) => fts(q).select(['id', '_score']).limit(51).toArray(),
  ftsIdsPrefilter: (q) => fts(q).where(filter).select(['id', '_score']).limit(51).toArray(),
  ftsNoVecUnfiltered: (q) => fts(q).select([...NOVEC, '_score']).limit(75).toArray(),
  ftsAllUnfiltered: (q) => fts(q).select([...ALL, '_score']).limit(75).toArray(),
  annIdsPre: (q) => vs(q).select(['id', '_distance']).limit(50).toArray(),
  annIdsPost: (q) => vs(q).postfilter().select(['id', '_distance']).limit(75).toArray(),
  annNoVecPost: (q) => vs(q).postfilter().select([...NOVEC, '_distance']).limit(75).toArray(),
  annAllPost: (q) => vs(q).postfilter().select([...ALL, '_distance']).limit(75).toArray(),
  bothIdsPost: (q) => Promise.all([fts(q).select(['id', '_score', 'agent_id']).limit(75).toArray(), vs(q).postfilter().select(['id', '_distance']).limit(75).toArray()]),
  bothNoVecPost: (q) => Promise.all([fts(q).select([...NOVEC, '_score']).limit(75).toArray(), vs(q).postfilter().select([...NOVEC, '_distance']).limit(75).toArray()]),
  bothNoVecSeq: async (q) => [await fts(q).select([...NOVEC, '_score']).limit(75).toArray(), await vs(q).postfilter().select([...NOVEC, '_distance']).limit(75).toArray()],
  embed: async (q) => embedder.embedSync(q),
};
if (process.env.SQERR) {
  let worst = 0, sum = 0, k = 0;
  for (const q of questions.slice(0, 20)) {
    const v = embedder.embedSync(q);
    const rows = await vs(q).postfilter().select(['id', 'vector', '_distance']).limit(50).toArray();
    for (const row of rows) {
      const w = (row.vector as { toArray: () => Float32Array }).toArray();
      let dot = 0, na = 0, nb = 0;
      for (let i = 0; i < w.length; i++) (dot += v[i]! * w[i]!), (na += v[i]! ** 2), (nb += w[i]! ** 2);
      const err = Math.abs(1 - Number(row._distance) - dot / Math.sqrt(na * nb));
      worst = Math.max(worst, err); sum += err; k++;
    }
  }
  console.log('sq distance error: mean', (sum / k).toExponential(2), 'max', worst.toExponential(2));
}
const names = Object.keys(variants).filter((name) => !only || only.includes(name));
const times: Record<string, number[]> = Object.fromEntries(names.map((name) => [name, []]));
for (const q of questions.slice(0, 5)) for (const name of names) await variants[name]!(q);
for (const q of questions) {
  for (const name of names) {
    const started = performance.now();
    await variants[name]!(q);
    times[name]!.push(performance.now() - started);
  }
}
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
for (const name of names) console.log(name.padEnd(20), 'p50', pct(times[name]!, 50).toFixed(2), 'p95', pct(times[name]!, 95).toFixed(2));
console.log('load', (await import('node:os')).loadavg()[0]!.toFixed(1), 'rows', await table.countRows());
await index.close();
if (old !== index) await old.close();
