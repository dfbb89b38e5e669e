import { describeError } from '../service/logger.js';
import type { Embedder } from '../ports/embedder.js';
import type { MemoryWriter, ModelUsage } from '../ports/memory-writer.js';
import type { JobRecord, TurnRecord } from '../ports/store/index.js';
import type { JobRun } from './job-run.js';

/** A token count a model reported, or null when it is not a non-negative integer. */
const tokens = (value: unknown): number | null => (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : null);

/**
 * Sums usage per model id, models in the order they first appear. Entries with a count that is not
 * a non-negative integer are left out (a model reporting nonsense is not charged to a receipt).
 */
export function sumModelUsage(entries: Iterable<ModelUsage>): ModelUsage[] {
  const byModel = new Map<string, ModelUsage>();
  for (const entry of entries) {
    const inputTokens = tokens(entry?.inputTokens);
    const outputTokens = tokens(entry?.outputTokens);
    if (typeof entry?.model !== 'string' || inputTokens === null || outputTokens === null) continue;
    const sum = byModel.get(entry.model) ?? { model: entry.model, inputTokens: 0, outputTokens: 0 };
    sum.inputTokens += inputTokens;
    sum.outputTokens += outputTokens;
    byModel.set(entry.model, sum);
  }
  return [...byModel.values()];
}

/**
 * Meters the model tokens of one learning batch (issue 33, receipts): `run` is the job run with its
 * writer and embedder wrapped to note the usage they report (the writer's `usage`, the embedder's
 * under its id, its `searchSimilar` lookups included); `record` stores what they noted for the
 * batch's turns, the writer's models first. A batch that used no reported tokens (the default writer and the built-in hashed
 * embedder) writes nothing to the store.
 */
export function meterBatch(run: JobRun): { run: JobRun; record(job: JobRecord, turns: readonly TurnRecord[]): Promise<void> } {
  const { writer, embedder } = run.context;
  // The writer's models first, then the embedder, whatever order the calls came in.
  const fromWriter: ModelUsage[] = [];
  const fromEmbedder: ModelUsage[] = [];
  const metered: { writer: MemoryWriter; embedder: Embedder } = {
    writer: {
      specificationVersion: writer.specificationVersion,
      id: writer.id,
      ...(writer.capabilities ? { capabilities: writer.capabilities } : {}),
      async write(request) {
        const result = await writer.write(request);
        if (Array.isArray(result.usage)) fromWriter.push(...result.usage);
        return result;
      },
    },
    embedder: {
      specificationVersion: embedder.specificationVersion,
      id: embedder.id,
      dimensions: embedder.dimensions,
      ...(embedder.meaning ? { meaning: true } : {}),
      async embed(request) {
        const result = await embedder.embed(request);
        if (result.usage) fromEmbedder.push({ model: embedder.id, inputTokens: result.usage.inputTokens, outputTokens: 0 });
        return result;
      },
    },
  };
  return {
    run: { context: { ...run.context, ...metered }, signal: run.signal, shouldStop: run.shouldStop },
    async record(job, turns) {
      const usage = sumModelUsage([...fromWriter, ...fromEmbedder]);
      if (usage.length === 0 || turns.length === 0) return;
      try {
        await run.context.store.receipts.recordModelUsage({ jobId: job.id, batch: { turnIndexes: turns.map((turn) => turn.turnIndex), usage } });
      } catch (error) {
        // The memories are committed; a receipt then lacks this batch's tokens (logged).
        run.context.logger.warn('recording model tokens failed', { jobId: job.id, error: describeError(error) });
      }
    },
  };
}

/** Splits `total` over `weights` in proportion, floored, the remainder on the last share: the shares sum to `total`. */
function split(total: number, weights: readonly number[]): number[] {
  const sum = weights.reduce((a, b) => a + b, 0);
  const even = sum === 0;
  const shares = weights.map((weight) => Math.floor((total * (even ? 1 : weight)) / (even ? weights.length : sum)));
  if (shares.length > 0) shares[shares.length - 1] = total - shares.slice(0, -1).reduce((a, b) => a + b, 0);
  return shares;
}

/**
 * A receipt's model tokens (issue 33): each batch's usage split over its turns in proportion to
 * their text length (integers, the remainder on the batch's last turn, so a batch's turns sum
 * exactly to it; equal shares when all its turns are empty), and the job's total per model.
 */
export function receiptModelTokens(
  batches: readonly { turnIndexes: readonly number[]; usage: readonly ModelUsage[] }[],
  textLength: (turnIndex: number) => number,
): { byTurn: Map<number, ModelUsage[]>; total: ModelUsage[] } {
  const byTurn = new Map<number, ModelUsage[]>();
  for (const { turnIndexes, usage } of batches) {
    const weights = turnIndexes.map(textLength);
    for (const { model, inputTokens, outputTokens } of usage) {
      const inputs = split(inputTokens, weights);
      const outputs = split(outputTokens, weights);
      turnIndexes.forEach((turnIndex, i) => {
        byTurn.set(turnIndex, [...(byTurn.get(turnIndex) ?? []), { model, inputTokens: inputs[i]!, outputTokens: outputs[i]! }]);
      });
    }
  }
  return {
    byTurn: new Map([...byTurn].map(([turnIndex, list]) => [turnIndex, sumModelUsage(list)])),
    total: sumModelUsage(batches.flatMap((batch) => batch.usage)),
  };
}

/** The wire form of usage entries (`model_tokens`). */
export const toModelTokens = (usage: readonly ModelUsage[]) =>
  usage.map(({ model, inputTokens, outputTokens }) => ({ model, input_tokens: inputTokens, output_tokens: outputTokens }));
