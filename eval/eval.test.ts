import { createServer, type Server } from 'node:http';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ask, learnConversation, openEnvironment, type EvalConversation, type EvalEnvironment } from './harness.js';
import { locomoEvidence, parseLocomoDate, runLocomo, summarizeLocomo, type LocomoSample } from './locomo.js';
import { longMemEvalQuery, parseLongMemEvalDate, runLongMemEval, summarizeLongMemEval, type LongMemEvalQuestion } from './longmemeval.js';
import { hasShared, sharedPath } from '../test/support/shared-data.js';
import { formatTable, ndcgAt, newestFirst, recallAllAt, recallAt, uniqueInOrder } from './metrics.js';
import { modelEmbedder } from './model-embedder.js';

const DATA = sharedPath('eval-data/');
const HAS_DATA = hasShared('eval-data', 'the evaluation harness smoke runs on LoCoMo and LongMemEval');

describe('metrics', () => {
  it('scores recall@k over flattened turns and recall_all@k over sessions', () => {
    const ranked = uniqueInOrder(['D1:1', 'D1:2', 'D1:1', 'D2:5', 'D3:1']);
    expect(ranked).toEqual(['D1:1', 'D1:2', 'D2:5', 'D3:1']);
    expect(recallAt(ranked, ['D2:5', 'D9:9'], 2)).toBe(0);
    expect(recallAt(ranked, ['D2:5', 'D9:9'], 3)).toBe(0.5);
    expect(recallAt(ranked, [], 3)).toBeNull();
    expect(recallAllAt(['s1', 's2', 's3'], ['s1', 's3'], 2)).toBe(0);
    expect(recallAllAt(['s1', 's2', 's3'], ['s1', 's3'], 3)).toBe(1);
    // NDCG@k, binary relevance: evidence first is 1, evidence second of one is 1/log2(3), none is 0.
    expect(ndcgAt(['s1', 's2'], ['s1'], 5)).toBe(1);
    expect(ndcgAt(['s2', 's1'], ['s1'], 5)).toBeCloseTo(1 / Math.log2(3), 10);
    expect(ndcgAt(['s2', 's3'], ['s1'], 5)).toBe(0);
    expect(ndcgAt(['s1', 's3', 's2'], ['s1', 's2'], 2)).toBeCloseTo(1 / (1 + 1 / Math.log2(3)), 10);
    expect(ndcgAt(['s1'], [], 5)).toBeNull();
  });

  it('scores newest-first: the newest evidence above every older one', () => {
    expect(newestFirst(['s3', 's2', 's1'], ['s1', 's3'])).toBe(1);
    expect(newestFirst(['s1', 's3'], ['s1', 's3'])).toBe(0);
    expect(newestFirst(['s3'], ['s1', 's3'])).toBe(1);
    expect(newestFirst(['s1'], ['s1', 's3'])).toBe(0);
    expect(newestFirst(['s1'], ['s1'])).toBeNull();
  });

  it('reads both datasets dates and splits ";"-joined evidence, dropping ids that name no turn', () => {
    expect(parseLocomoDate('1:56 pm on 8 May, 2023')).toBe('2023-05-08T13:56:00.000Z');
    expect(parseLocomoDate('12:09 am on 13 September, 2023')).toBe('2023-09-13T00:09:00.000Z');
    expect(parseLongMemEvalDate('2023/08/11 (Fri) 15:58')).toBe('2023-08-11T15:58:00.000Z');
    const turns = new Set(['D1:1', 'D1:2']);
    expect(locomoEvidence({ question: 'q', evidence: ['D1:1; D1:2', 'D:1:3'], category: 1 }, turns)).toEqual({ evidence: ['D1:1', 'D1:2'], unmatched: ['D:1:3'] });
  });
});

describe.skipIf(!HAS_DATA)('harness smoke run (in-memory index)', () => {
  let env: EvalEnvironment;
  let dir: string;
  beforeAll(async () => {
    env = await openEnvironment('memory');
    dir = await mkdtemp(join(tmpdir(), 'eval-smoke-'));
  });
  afterAll(async () => {
    await env.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('learns a truncated LoCoMo conversation, writes the JSONL shape and computes every metric', async () => {
    const [sample] = JSON.parse(await readFile(join(DATA, 'locomo/locomo-dev.json'), 'utf8')) as LocomoSample[];
    const conversation: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(sample!.conversation)) {
      const n = /^session_(\d+)/.exec(key)?.[1];
      if (n === undefined || Number(n) <= 3) conversation[key] = value;
    }
    const qa = sample!.qa.filter((item) => item.evidence.length > 0 && item.evidence.every((id) => /^D[1-3]:/.test(id))).slice(0, 6);
    const truncated: LocomoSample = { sample_id: sample!.sample_id, conversation, qa };
    const jsonlPath = join(dir, 'locomo.jsonl');
    const run = await runLocomo(env, [truncated], { maxContextChars: 4000, jsonlPath });

    const lines = (await readFile(jsonlPath, 'utf8')).trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines).toHaveLength(qa.length);
    lines.forEach((line, i) => {
      expect(Object.keys(line)).toEqual(['sample_id', 'qa_index', 'category', 'ranked']);
      expect(line).toMatchObject({ sample_id: sample!.sample_id, qa_index: i, category: qa[i]!.category });
      const ranked = line.ranked as string[];
      expect(ranked.length).toBeGreaterThan(0);
      expect(ranked.length).toBeLessThanOrEqual(50);
      expect(new Set(ranked).size).toBe(ranked.length);
      for (const id of ranked) expect(id).toMatch(/^D[1-3]:\d+$/);
    });
    const rows = summarizeLocomo(run);
    const overall = rows.at(-1)!;
    expect(overall.group).toBe('overall');
    expect(overall.count).toBe(qa.length);
    for (const key of ['R@5', 'R@10', 'R@25', 'R@ctx']) {
      expect(overall.metrics[key]).toBeGreaterThanOrEqual(0);
      expect(overall.metrics[key]).toBeLessThanOrEqual(1);
    }
    expect(formatTable(rows, 'category')).toContain('| overall |');
    expect(run.turns).toBeGreaterThan(0);
  });

  it('learns a few LongMemEval sessions and writes ranked sessions and turns', async () => {
    const text = await readFile(join(DATA, 'longmemeval/longmemeval-s-dev.json'), 'utf8');
    const question = (JSON.parse(text) as LongMemEvalQuestion[])[0]!;
    const keep = question.haystack_session_ids.map((id, i) => ({ id, i })).filter(({ id }, n) => question.answer_session_ids.includes(id) || n < 3);
    const small: LongMemEvalQuestion = {
      ...question,
      haystack_session_ids: keep.map(({ id }) => id),
      haystack_dates: keep.map(({ i }) => question.haystack_dates[i]!),
      haystack_sessions: keep.map(({ i }) => question.haystack_sessions[i]!),
    };
    expect(longMemEvalQuery(small, 'dated')).toContain(small.question);
    const jsonlPath = join(dir, 'longmemeval.jsonl');
    const run = await runLongMemEval(env, [small], { maxContextChars: 4000, queryMode: 'dated', jsonlPath });
    const [line] = (await readFile(jsonlPath, 'utf8')).trim().split('\n').map((row) => JSON.parse(row) as Record<string, unknown>);
    expect(Object.keys(line!)).toEqual(['question_id', 'question_type', 'ranked_sessions', 'ranked_turns']);
    const sessions = line!.ranked_sessions as string[];
    const turns = line!.ranked_turns as [string, number][];
    expect(sessions.length).toBeGreaterThan(0);
    for (const id of sessions) expect(small.haystack_session_ids).toContain(id);
    for (const [id, index] of turns) expect(small.haystack_sessions[small.haystack_session_ids.indexOf(id)]![index]).toBeDefined();
    const overall = summarizeLongMemEval(run).at(-1)!;
    for (const key of ['S-all@5', 'S-all@10', 'T@10']) expect(overall.metrics[key]).toBeTypeOf('number');
  });
});

describe('retrieval options through the service (harness --wordnet)', () => {
  const conversation: EvalConversation = {
    id: 'books',
    sessions: [
      {
        id: 's1',
        timestamp: '2023-05-08T13:56:00.000Z',
        turns: [
          ['Caroline', 'How was your weekend by the lake?'],
          ['Melanie', 'Quiet, the kids were at their grandma. I went hiking on Saturday.'],
          ['Caroline', 'My brother bought a new car last month.'],
          ['Melanie', 'Lovely weather for it.'],
          ['Caroline', 'We had pizza with friends on Friday.'],
        ].map(([speaker, text], i) => ({ ref: `a${i}`, speaker: speaker!, text: text! })),
      },
      {
        id: 's2',
        timestamp: '2023-06-20T10:00:00.000Z',
        turns: [
          ['Caroline', 'Anything new?'],
          ['Melanie', 'I finished a wonderful novel about a lighthouse keeper.'],
          ['Caroline', 'I started a pottery class.'],
        ].map(([speaker, text], i) => ({ ref: `b${i}`, speaker: speaker!, text: text! })),
      },
    ],
  };

  it('switches the WordNet hyponyms on for the service, reaching a turn that shares no word with the question', async () => {
    const rank = async (wordNet: boolean) => {
      const env = await openEnvironment('memory', { retrieval: { wordNet } });
      try {
        const learned = await learnConversation(env, conversation);
        const refs = (await ask(env, learned, 'Which books has Melanie read?', 4000)).ranked.map((turn) => turn.ref);
        return refs.indexOf('b1');
      } finally {
        await env.close();
      }
    };
    const withWordNet = await rank(true);
    const without = await rank(false);
    expect(withWordNet).toBeGreaterThanOrEqual(0);
    expect(without === -1 || without > withWordNet).toBe(true);
  });
});

describe('a team embedding model in the harness (--embedding-url/--embedding-model/--embedding-dimensions)', () => {
  // The provider is external (behind the Embedder port): a local OpenAI-compatible /embeddings
  // endpoint stands in for it, with vectors of letter counts.
  let server: Server;
  let url: string;
  const received: { model: string; input: string[]; dimensions?: number; authorization?: string }[] = [];
  beforeAll(async () => {
    server = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString()));
      request.on('end', () => {
        const parsed = JSON.parse(body) as { model: string; input: string[]; dimensions?: number };
        received.push({ ...parsed, ...(request.headers.authorization ? { authorization: request.headers.authorization } : {}) });
        const vector = (text: string) => Array.from({ length: 26 }, (_, i) => [...text.toLowerCase()].filter((c) => c.charCodeAt(0) === 97 + i).length + 0.01);
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ data: parsed.input.map((text, index) => ({ index, embedding: vector(text) })) }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as { port: number }).port}/v1`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('is asked for none by default and refuses flags that do not fit together', async () => {
    expect(await modelEmbedder(new Map(), {})).toBeNull();
    await expect(modelEmbedder(new Map([['embedding-url', url]]), {})).rejects.toThrow(/--embedding-model/);
    await expect(modelEmbedder(new Map([['embedding-url', url], ['embedding-model', 'team']]), {})).rejects.toThrow(/--embedding-dimensions/);
  });

  it('learns and retrieves with the model, as serve would configure it', async () => {
    const flags = new Map([['embedding-url', url], ['embedding-model', 'team-embed'], ['embedding-dimensions', '26']]);
    const embedder = (await modelEmbedder(flags, { MEMORY_AGENTS_EMBEDDING_API_KEY: 'k-test' }))!;
    expect(embedder.dimensions).toBe(26);
    // A provider's model declares meaning (its vector channel then weighs as full text); these
    // scripted letter-count vectors carry none, so the service is told so.
    expect(embedder.meaning).toBe(true);
    const env = await openEnvironment('memory', { embedder: { ...embedder, meaning: false } });
    try {
      const conversation: EvalConversation = {
        id: 'model',
        sessions: [{ id: 's1', timestamp: '2023-05-08T13:56:00.000Z', turns: [
          { ref: 't0', speaker: 'Caroline', text: 'I adopted a puppy called Tilly.' },
          { ref: 't1', speaker: 'Melanie', text: 'We painted a sunset by the lake.' },
        ] }],
      };
      const learned = await learnConversation(env, conversation);
      const asked = await ask(env, learned, 'What is the name of the puppy?', 4000);
      expect(asked.ranked[0]!.ref).toBe('t0');
    } finally {
      await env.close();
    }
    const texts = received.flatMap((call) => call.input);
    expect(texts).toEqual(expect.arrayContaining(['I adopted a puppy called Tilly.', 'We painted a sunset by the lake.']));
    expect(texts.some((text) => text.includes('puppy') && text.includes('name'))).toBe(true);
    expect(received.every((call) => call.model === 'team-embed' && call.dimensions === 26 && call.authorization === 'Bearer k-test')).toBe(true);
  });
});
