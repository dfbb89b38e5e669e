import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LanguageModelError } from '@memory-agents/core/adapter';
import { openaiCompatibleEmbedder, type OpenaiCompatibleEmbedderOptions } from './openai-compatible-embedder.js';
import { scriptedVector, startScriptedOpenaiServer, type ScriptedOpenaiServer } from './testing/scripted-openai-server.js';

let server: ScriptedOpenaiServer;
beforeEach(async () => {
  server = await startScriptedOpenaiServer();
});
afterEach(async () => {
  await server.close();
});

const embedder = (options: Partial<OpenaiCompatibleEmbedderOptions> = {}) =>
  openaiCompatibleEmbedder({ baseURL: server.baseURL, model: 'embed-model', dimensions: 4, retryBaseDelayMs: 1, ...options });

const rejection = (promise: Promise<unknown>) => promise.then(
  () => {
    throw new Error('expected a rejection');
  },
  (error: unknown) => error as Error,
);

describe('openaiCompatibleEmbedder', () => {
  it('sends batches of batchSize and returns the vectors in input order', async () => {
    const texts = ['a', 'b', 'c', 'd', 'e', 'f', 'g'];
    server.enqueue('embeddings', { type: 'embeddings', reverse: true }, { type: 'embeddings', reverse: true }, { type: 'embeddings' });
    const { vectors } = await embedder({ batchSize: 3, apiKey: 'k' }).embed({ texts });
    expect(server.requests.map((recorded) => recorded.body.input)).toEqual([
      ['a', 'b', 'c'],
      ['d', 'e', 'f'],
      ['g'],
    ]);
    expect(vectors.map((vector) => [...vector])).toEqual(texts.map((text) => [...Float32Array.from(scriptedVector(text, 4))]));
    expect(vectors.every((vector) => vector instanceof Float32Array)).toBe(true);
    expect(server.requests[0]?.path).toBe('/v1/embeddings');
    expect(server.requests[0]?.headers.authorization).toBe('Bearer k');
  });

  it('sends dimensions unless sendDimensions is false, and fingerprints model and dimensions', async () => {
    const instance = embedder({ dimensions: 4 });
    await instance.embed({ texts: ['x'] });
    await embedder({ sendDimensions: false }).embed({ texts: ['x'] });
    expect(server.requests[0]?.body).toEqual({ model: 'embed-model', input: ['x'], dimensions: 4 });
    expect(server.requests[1]?.body).toEqual({ model: 'embed-model', input: ['x'] });
    expect(instance.id).toBe('openai-compatible:embed-model:4');
    expect(instance.dimensions).toBe(4);
    expect(instance.meaning).toBe(true);
  });

  it("reports the batches' usage.prompt_tokens summed as input tokens, and none when a batch lacks it", async () => {
    server.enqueue('embeddings', { type: 'embeddings', usage: { prompt_tokens: 9, total_tokens: 9 } }, { type: 'embeddings', usage: { prompt_tokens: 4, total_tokens: 4 } });
    const instance = embedder({ batchSize: 2 });
    const result = await instance.embed({ texts: ['a b c', 'd e', 'f'] });
    expect(result.vectors).toHaveLength(3);
    expect(result.usage).toEqual({ inputTokens: 13 });
    server.enqueue('embeddings', { type: 'embeddings', usage: { prompt_tokens: 9, total_tokens: 9 } }, { type: 'embeddings' });
    const partial = await instance.embed({ texts: ['a b c', 'd e', 'f'] });
    expect(partial.usage).toBeUndefined();
    expect((await instance.embed({ texts: ['x'] })).usage).toBeUndefined();
  });

  it('makes no request for an empty list', async () => {
    expect(await embedder().embed({ texts: [] })).toEqual({ vectors: [] });
    expect(server.requests).toHaveLength(0);
  });

  it('rejects failed when a vector has the wrong length', async () => {
    server.enqueue('embeddings', { type: 'embeddings', dimensions: 3 });
    const error = await rejection(embedder({ sendDimensions: false }).embed({ texts: ['x'] }));
    expect((error as LanguageModelError).kind).toBe('failed');
    expect(error.message).toContain('3 dimensions');
  });

  it('rejects failed when the count or the indexes are wrong', async () => {
    server.enqueue(
      'embeddings',
      { type: 'json', body: { data: [{ index: 0, embedding: [1, 2, 3, 4] }] } },
      { type: 'json', body: { data: [{ index: 0, embedding: [1, 2, 3, 4] }, { index: 0, embedding: [1, 2, 3, 4] }] } },
    );
    expect(((await rejection(embedder().embed({ texts: ['a', 'b'] }))) as LanguageModelError).kind).toBe('failed');
    expect(((await rejection(embedder().embed({ texts: ['a', 'b'] }))) as LanguageModelError).kind).toBe('failed');
  });

  it('retries a 429 then succeeds', async () => {
    server.enqueue('embeddings', { type: 'status', status: 429, retryAfter: '0' }, { type: 'embeddings' });
    const { vectors } = await embedder().embed({ texts: ['x'] });
    expect(vectors).toHaveLength(1);
    expect(server.requests).toHaveLength(2);
  });

  it('fails the whole call when one batch fails (no partial results)', async () => {
    server.enqueue('embeddings', { type: 'embeddings' }, { type: 'status', status: 400 });
    const error = await rejection(embedder({ batchSize: 1, maxConcurrency: 1 }).embed({ texts: ['a', 'b', 'c'] }));
    expect((error as LanguageModelError).kind).toBe('failed');
  });

  it('keeps at most maxConcurrency batches open', async () => {
    server.enqueue('embeddings', ...Array.from({ length: 8 }, () => ({ type: 'embeddings' as const, delayMs: 10 })));
    const { vectors } = await embedder({ batchSize: 1, maxConcurrency: 2 }).embed({ texts: ['1', '2', '3', '4', '5', '6', '7', '8'] });
    expect(vectors).toHaveLength(8);
    expect(server.maxInFlight).toBeLessThanOrEqual(2);
  });

  it('rejects with an AbortError when aborted, closing the request', async () => {
    server.enqueue('embeddings', { type: 'stall' });
    const controller = new AbortController();
    const pending = rejection(embedder().embed({ texts: ['x'], signal: controller.signal }));
    await server.waitForRequests(1);
    controller.abort();
    expect((await pending).name).toBe('AbortError');
    await server.waitForClientClose(0);
  });

  it('rejects timeout when the provider stalls', async () => {
    server.enqueue('embeddings', { type: 'stall' });
    const error = await rejection(embedder({ timeoutMs: 100 }).embed({ texts: ['x'] }));
    expect((error as LanguageModelError).kind).toBe('timeout');
  });
});
