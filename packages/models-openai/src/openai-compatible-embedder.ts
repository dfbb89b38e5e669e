import { z } from 'zod';
import { LanguageModelError } from '@memory-agents/core/adapter';
import type { Embedder } from '@memory-agents/core';
import type { EmbedRequest, EmbedResult } from '@memory-agents/core/adapter';
import { abortError } from './abort.js';
import { createProviderClient, type RetryEvent } from './provider-client.js';
import pLimit from 'p-limit';

const optionsSchema = z.object({
  baseURL: z.url(),
  apiKey: z.string().min(1).optional(),
  model: z.string().min(1),
  dimensions: z.number().int().positive(),
  sendDimensions: z.boolean().default(true),
  batchSize: z.number().int().positive().max(2048).default(64),
  timeoutMs: z.number().int().positive().default(30_000),
  maxRetries: z.number().int().min(0).max(10).default(3),
  maxConcurrency: z.number().int().positive().default(2),
  headers: z.record(z.string(), z.string()).optional(),
  retryBaseDelayMs: z.number().int().min(0).default(500),
  maxRetryDelayMs: z.number().int().min(0).default(30_000),
  onRetry: z.custom<(event: RetryEvent) => void>((value) => typeof value === 'function').optional(),
});

/** Options of {@link openaiCompatibleEmbedder}. */
export type OpenaiCompatibleEmbedderOptions = {
  /** The API root that holds `/embeddings`, e.g. `https://api.openai.com/v1`. */
  baseURL: string;
  /** Sent as `Authorization: Bearer <apiKey>`; never logged nor put in error messages. @default none */
  apiKey?: string;
  /** The provider's embedding model, e.g. `text-embedding-3-small`, `nomic-embed-text`. */
  model: string;
  /** Length of every vector; each returned vector is checked against it. */
  dimensions: number;
  /**
   * Send `dimensions` in the request (OpenAI `text-embedding-3-*` shortens vectors with it). Turn it
   * off for servers that reject the field (vLLM with a model that has no Matryoshka support).
   * @default true
   */
  sendDimensions?: boolean;
  /** Texts per request. @default 64 */
  batchSize?: number;
  /** Per attempt. A timeout is not retried. @default 30000 */
  timeoutMs?: number;
  /** Retries after a 408/409/425/429/5xx answer or a network error. @default 3 */
  maxRetries?: number;
  /** Requests this instance keeps open at once (shared by every call). @default 2 */
  maxConcurrency?: number;
  /** Extra headers for every request. */
  headers?: Record<string, string>;
  /** First backoff delay; doubled per retry, with jitter. @default 500 */
  retryBaseDelayMs?: number;
  /** Longest wait between attempts; a longer `Retry-After` fails the call at once. @default 30000 */
  maxRetryDelayMs?: number;
  /** Called before each retry. @default none */
  onRetry?: (event: RetryEvent) => void;
};

type EmbeddingResponse = { data?: { index?: unknown; embedding?: unknown }[]; usage?: { prompt_tokens?: unknown } | null };

/** The batch's `usage.prompt_tokens`, or null when the provider did not count it. */
function promptTokens(response: EmbeddingResponse): number | null {
  const value = response?.usage?.prompt_tokens;
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : null;
}

/**
 * An `Embedder` over any OpenAI-compatible `POST /embeddings` endpoint. Texts are sent in batches
 * of `batchSize` (at most `maxConcurrency` batches at once); results are put back in input order by
 * their `index`, and every vector's length is checked. Any batch failing fails the whole call (no
 * partial results), with a `LanguageModelError` of the same kinds as the chat model. The result's
 * `usage.inputTokens` sums the batches' `usage.prompt_tokens` (left out when a batch lacks it).
 *
 * @example
 * const embedder = openaiCompatibleEmbedder({
 *   baseURL: 'https://api.openai.com/v1',
 *   apiKey: process.env.MEMORY_AGENTS_MODEL_API_KEY,
 *   model: 'text-embedding-3-small',
 *   dimensions: 512,
 * });
 */
export function openaiCompatibleEmbedder(options: OpenaiCompatibleEmbedderOptions): Embedder {
  const config = optionsSchema.parse(options);
  const operation = `embedding (${config.model})`;
  const client = createProviderClient({ ...config, concurrency: pLimit(config.maxConcurrency), operation });
  const malformed = (what: string) => new LanguageModelError('failed', `${operation} failed: malformed response (${what})`);

  async function embedBatch(texts: readonly string[], signal: AbortSignal): Promise<{ vectors: Float32Array[]; inputTokens: number | null }> {
    const response = (await client.postJson(
      '/embeddings',
      {
        model: config.model,
        // Several providers reject an empty string as input; a space embeds as "nothing" as well.
        input: texts.map((text) => (text === '' ? ' ' : text)),
        ...(config.sendDimensions ? { dimensions: config.dimensions } : {}),
      },
      signal,
    )) as EmbeddingResponse;
    const data = response?.data;
    if (!Array.isArray(data) || data.length !== texts.length) throw malformed(`expected ${texts.length} embeddings`);
    const vectors: (Float32Array | undefined)[] = new Array(texts.length);
    data.forEach((item, position) => {
      // `index` is what ties a vector to its input; fall back to position only if it is missing.
      const index = item?.index === undefined ? position : item.index;
      if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= texts.length || vectors[index]) {
        throw malformed('bad or repeated index');
      }
      vectors[index] = toVector(item.embedding);
    });
    return { vectors: vectors as Float32Array[], inputTokens: promptTokens(response) };
  }

  function toVector(embedding: unknown): Float32Array {
    let vector: Float32Array;
    if (typeof embedding === 'string') {
      const bytes = Buffer.from(embedding, 'base64');
      vector = new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
    } else if (Array.isArray(embedding) && embedding.every((value) => typeof value === 'number' && Number.isFinite(value))) {
      vector = Float32Array.from(embedding as number[]);
    } else {
      throw malformed('an embedding is not a list of numbers');
    }
    if (vector.length !== config.dimensions) {
      throw new LanguageModelError('failed', `${operation} failed: got vectors of ${vector.length} dimensions, configured ${config.dimensions}`);
    }
    return vector;
  }

  return {
    specificationVersion: 'v1',
    id: `openai-compatible:${config.model}:${config.dimensions}`,
    dimensions: config.dimensions,
    // An embeddings model's vectors carry meaning (retrieval weighs them as much as full text).
    meaning: true,

    async embed(request: EmbedRequest): Promise<EmbedResult> {
      if (request.signal?.aborted) throw abortError(request.signal);
      if (request.texts.length === 0) return { vectors: [] };
      // One failing batch cancels the others: the contract forbids partial results.
      const controller = new AbortController();
      const onAbort = () => controller.abort(request.signal?.reason);
      request.signal?.addEventListener('abort', onAbort, { once: true });
      try {
        const batches: ReturnType<typeof embedBatch>[] = [];
        for (let start = 0; start < request.texts.length; start += config.batchSize) {
          batches.push(embedBatch(request.texts.slice(start, start + config.batchSize), controller.signal));
        }
        const results = await Promise.all(
          batches.map((batch) =>
            batch.catch((error: unknown) => {
              controller.abort();
              throw error;
            }),
          ),
        );
        const vectors = results.flatMap((result) => result.vectors);
        // Usage only when every batch reported it: a partial count would read as the whole call's.
        const counts = results.map((result) => result.inputTokens);
        if (counts.some((value) => value === null)) return { vectors };
        return { vectors, usage: { inputTokens: (counts as number[]).reduce((a, b) => a + b, 0) } };
      } catch (error) {
        if (request.signal?.aborted) throw abortError(request.signal);
        throw error;
      } finally {
        request.signal?.removeEventListener('abort', onAbort);
      }
    },
  };
}
