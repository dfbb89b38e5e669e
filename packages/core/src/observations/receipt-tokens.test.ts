import { describe, expect, it } from 'vitest';
import { learningService } from '../__fixtures__/learning-service.js';
import { defaultMemoryWriter } from '../memory/default-memory-writer.js';
import { mockEmbedder } from '../testing/mocks/mock-embedder.js';
import { mockLanguageModel } from '../testing/mocks/mock-language-model.js';
import type { Embedder } from '../ports/embedder.js';
import type { MemoryWriter } from '../ports/memory-writer.js';
import { receiptModelTokens } from './model-usage.js';

const say = (text: string, timestamp: string) => ({ speaker: 'Dana', timestamp, content: [{ type: 'text' as const, text }] });

/**
 * A scripted LLM writer (test double of a network writer): the default writer's memories, plus one
 * call of a scripted language model per write whose reported usage the writer returns.
 */
function scriptedWriter(): MemoryWriter {
  const inner = defaultMemoryWriter();
  const model = mockLanguageModel({ id: 'scripted-llm', generate: { text: '{"facts":[]}', usage: { inputTokens: 1000, outputTokens: 101 } } });
  return {
    specificationVersion: 'v1',
    id: 'scripted-writer',
    async write(request) {
      const reply = await model.generate({ messages: request.turns.map((turn) => ({ role: 'user' as const, content: turn.text })) });
      const result = await inner.write(request);
      return { ...result, usage: [{ model: model.id, inputTokens: reply.usage!.inputTokens, outputTokens: reply.usage!.outputTokens }] };
    },
  };
}

/** A scripted network embedder: one input token per character embedded. */
function scriptedEmbedder(): Embedder & { chars: number } {
  const inner = mockEmbedder({ id: 'scripted-embedder:16', dimensions: 16 });
  const embedder = {
    specificationVersion: 'v1' as const,
    id: inner.id,
    dimensions: inner.dimensions,
    chars: 0,
    async embed(request: Parameters<Embedder['embed']>[0]) {
      const result = await inner.embed(request);
      const inputTokens = request.texts.reduce((sum, text) => sum + text.length, 0);
      embedder.chars += inputTokens;
      return { ...result, usage: { inputTokens } };
    },
  };
  return embedder;
}

describe('receipt model tokens (issue 33)', () => {
  it('reports per turn the batch tokens split by text length and per model in total, summing exactly', async () => {
    const embedder = scriptedEmbedder();
    const { service, owner: caller, agentId, threadId, observeSettled } = await learningService({ writer: scriptedWriter(), embedder });
    const texts = ['I live in Paris.', 'I moved to Rome last spring with my two cats.', 'I work at Acme.'];
    const before = embedder.chars;
    const settled = await observeSettled(texts.map((text, i) => say(text, `2024-0${i + 1}-01T10:00:00Z`)));
    const embedded = embedder.chars - before;
    expect(embedded).toBeGreaterThan(0);
    const receipt = await service.observationReceipt({ caller, agentId, threadId, observationId: settled.observation_id });

    expect(receipt.model_tokens).toEqual([
      { model: 'scripted-llm', input_tokens: 1000, output_tokens: 101 },
      { model: 'scripted-embedder:16', input_tokens: embedded, output_tokens: 0 },
    ]);
    // One batch: 1000 input tokens over lengths 16, 45, 15 (76 chars): 210, 592, remainder 198.
    const lengths = texts.map((text) => text.length);
    const total = lengths.reduce((a, b) => a + b, 0);
    const share = (tokens: number, i: number) => (i < 2 ? Math.floor((tokens * lengths[i]!) / total) : tokens - [0, 1].reduce((sum, j) => sum + Math.floor((tokens * lengths[j]!) / total), 0));
    receipt.turns.forEach((turn, i) => {
      expect(turn.model_tokens).toEqual([
        { model: 'scripted-llm', input_tokens: share(1000, i), output_tokens: share(101, i) },
        { model: 'scripted-embedder:16', input_tokens: share(embedded, i), output_tokens: 0 },
      ]);
    });
    for (const [m, model] of receipt.model_tokens.entries()) {
      expect(receipt.turns.reduce((sum, turn) => sum + turn.model_tokens[m]!.input_tokens, 0)).toBe(model.input_tokens);
      expect(receipt.turns.reduce((sum, turn) => sum + turn.model_tokens[m]!.output_tokens, 0)).toBe(model.output_tokens);
    }
    expect(receipt.turns.map((turn) => turn.model_tokens[0]!.input_tokens)).toEqual([210, 592, 198]);
  });

  it('is empty with the default writer and the built-in hashed embedder, which use no model tokens', async () => {
    const { service, owner: caller, agentId, threadId, observeSettled } = await learningService();
    const settled = await observeSettled([say('I live in Paris.', '2024-01-01T10:00:00Z'), say('I work at Acme.', '2024-01-02T10:00:00Z')]);
    const receipt = await service.observationReceipt({ caller, agentId, threadId, observationId: settled.observation_id });
    expect(receipt.model_tokens).toEqual([]);
    expect(receipt.turns.map((turn) => turn.model_tokens)).toEqual([[], []]);
  });

  it('splits evenly over empty turns, puts the remainder on the last turn, and sums batches per model', () => {
    const lengths = new Map([[0, 0], [1, 0], [2, 0], [3, 10], [4, 30]]);
    const { byTurn, total } = receiptModelTokens(
      [
        { turnIndexes: [0, 1, 2], usage: [{ model: 'llm', inputTokens: 10, outputTokens: 2 }] },
        { turnIndexes: [3, 4], usage: [{ model: 'emb', inputTokens: 7, outputTokens: 0 }, { model: 'llm', inputTokens: 5, outputTokens: 1 }] },
      ],
      (turnIndex) => lengths.get(turnIndex) ?? 0,
    );
    expect([...byTurn]).toEqual([
      [0, [{ model: 'llm', inputTokens: 3, outputTokens: 0 }]],
      [1, [{ model: 'llm', inputTokens: 3, outputTokens: 0 }]],
      [2, [{ model: 'llm', inputTokens: 4, outputTokens: 2 }]],
      [3, [{ model: 'emb', inputTokens: 1, outputTokens: 0 }, { model: 'llm', inputTokens: 1, outputTokens: 0 }]],
      [4, [{ model: 'emb', inputTokens: 6, outputTokens: 0 }, { model: 'llm', inputTokens: 4, outputTokens: 1 }]],
    ]);
    expect(total).toEqual([
      { model: 'llm', inputTokens: 15, outputTokens: 3 },
      { model: 'emb', inputTokens: 7, outputTokens: 0 },
    ]);
  });
});
