import { describe, expect, it } from 'vitest';
import { inMemoryStore } from '../in-memory/store/index.js';
import { defaultMemoryWriter } from '../memory/default-memory-writer.js';
import type { Logger } from '../service/logger.js';
import type { ServiceContext } from '../service/context.js';
import { mockEmbedder } from '../testing/mocks/mock-embedder.js';
import { job, turns, world } from '../testing/conformance/store/records.js';
import type { MemoryWriter, ModelUsage } from '../ports/memory-writer.js';
import type { JobRecord } from '../ports/store/index.js';
import { meterBatch, sumModelUsage } from './model-usage.js';

/** A writer double reporting the given usage on every write. */
function reportingWriter(usage: ModelUsage[]): MemoryWriter {
  const inner = defaultMemoryWriter();
  return { specificationVersion: 'v1', id: 'reporting-writer', capabilities: { reconciles: true }, write: async (request) => ({ ...(await inner.write(request)), usage }) };
}

/** An embedder double reporting one token per text. */
function reportingEmbedder() {
  const inner = mockEmbedder({ id: 'emb:16' });
  return { ...inner, embed: async (request: { texts: readonly string[] }) => ({ ...(await inner.embed(request)), usage: { inputTokens: request.texts.length } }) };
}

async function setup(writer: MemoryWriter, logged: unknown[] = []) {
  const store = inMemoryStore();
  const { thread } = await world(store);
  const stored = (await store.jobs.insert({ job: job(thread, { turnsTotal: 4 }), turns: [], onlyIfIdle: false })) as JobRecord;
  const batchTurns = turns(stored.id, 4);
  const logger: Logger = { debug() {}, info() {}, error() {}, warn: (message: string) => void logged.push(message) };
  const context = { store, writer, embedder: reportingEmbedder(), logger } as unknown as ServiceContext;
  const run = { context, signal: new AbortController().signal, shouldStop: () => false };
  return { store, stored, batchTurns, run };
}

/** One learning batch's model calls through the metered ports: one write, two embeds (a lookup and the commit). */
async function calls(run: ReturnType<typeof meterBatch>['run'], texts: string[]) {
  await run.context.writer.write({ agentId: 'agent_x', turns: [], searchSimilar: async () => [] });
  await run.context.embedder.embed({ texts: [texts[0]!] });
  await run.context.embedder.embed({ texts });
}

describe('meterBatch', () => {
  it("records the writer's usage, then the embedder's under its id, for the batch's turns; a re-run of the batch replaces it", async () => {
    const { store, stored, batchTurns, run } = await setup(reportingWriter([{ model: 'llm', inputTokens: 50, outputTokens: 5 }]));
    const first = meterBatch(run);
    expect(first.run.context.writer.id).toBe('reporting-writer');
    expect(first.run.context.writer.capabilities).toEqual({ reconciles: true });
    expect(first.run.context.embedder.id).toBe('emb:16');
    await calls(first.run, ['a', 'b', 'c']);
    await first.record(stored, batchTurns.slice(0, 3));
    expect(await store.receipts.modelUsage({ jobId: stored.id })).toEqual([
      { turnIndexes: [0, 1, 2], usage: [{ model: 'llm', inputTokens: 50, outputTokens: 5 }, { model: 'emb:16', inputTokens: 4, outputTokens: 0 }] },
    ]);
    // The same turns learned again after a crash: the new run's tokens replace the first run's.
    const again = meterBatch(run);
    await calls(again.run, ['a', 'b']);
    await again.record(stored, batchTurns.slice(0, 3));
    expect(await store.receipts.modelUsage({ jobId: stored.id })).toEqual([
      { turnIndexes: [0, 1, 2], usage: [{ model: 'llm', inputTokens: 50, outputTokens: 5 }, { model: 'emb:16', inputTokens: 3, outputTokens: 0 }] },
    ]);
  });

  it('writes nothing when no model reported tokens, and logs (not throws) when recording fails', async () => {
    const logged: unknown[] = [];
    const { store, stored, batchTurns, run } = await setup(defaultMemoryWriter(), logged);
    const silent = meterBatch({ ...run, context: { ...run.context, embedder: mockEmbedder() } });
    await calls(silent.run, ['a']);
    await silent.record(stored, batchTurns);
    expect(await store.receipts.modelUsage({ jobId: stored.id })).toEqual([]);

    const failing = meterBatch({ ...run, context: { ...run.context, store: { ...store, receipts: { ...store.receipts, recordModelUsage: async () => Promise.reject(new Error('store down')) } } } });
    await calls(failing.run, ['a']);
    await expect(failing.record(stored, batchTurns)).resolves.toBeUndefined();
    expect(logged).toEqual(['recording model tokens failed']);
  });

  it('sumModelUsage sums per model in first-seen order and drops counts that are not non-negative integers', () => {
    expect(
      sumModelUsage([
        { model: 'a', inputTokens: 1, outputTokens: 2 },
        { model: 'b', inputTokens: 3, outputTokens: 0 },
        { model: 'a', inputTokens: 10, outputTokens: 20 },
        { model: 'b', inputTokens: -1, outputTokens: 0 },
        { model: 'c', inputTokens: 1.5, outputTokens: 0 },
        { model: 'a', inputTokens: Number.NaN, outputTokens: 1 },
      ]),
    ).toEqual([
      { model: 'a', inputTokens: 11, outputTokens: 22 },
      { model: 'b', inputTokens: 3, outputTokens: 0 },
    ]);
  });
});
