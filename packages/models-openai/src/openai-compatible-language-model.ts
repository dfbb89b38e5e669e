import { z } from 'zod';
import { LanguageModelError } from '@memory-agents/core/adapter';
import type { LanguageModel } from '@memory-agents/core';
import type { GenerateRequest, GenerateResult, ModelMessage, StreamResult, TokenUsage } from '@memory-agents/core/adapter';
import { abortError } from './abort.js';
import { parseCitations } from './answer-prompt.js';
import { createProviderClient, type RetryEvent } from './provider-client.js';
import pLimit from 'p-limit';
import { readServerSentEvents } from './sse.js';

const optionsSchema = z.object({
  baseURL: z.url(),
  apiKey: z.string().min(1).optional(),
  model: z.string().min(1),
  timeoutMs: z.number().int().positive().default(60_000),
  maxRetries: z.number().int().min(0).max(10).default(3),
  maxConcurrency: z.number().int().positive().default(4),
  streamUsage: z.boolean().default(true),
  headers: z.record(z.string(), z.string()).optional(),
  retryBaseDelayMs: z.number().int().min(0).default(500),
  maxRetryDelayMs: z.number().int().min(0).default(30_000),
  onRetry: z.custom<(event: RetryEvent) => void>((value) => typeof value === 'function').optional(),
});

/** Options of {@link openaiCompatibleLanguageModel}. */
export type OpenaiCompatibleLanguageModelOptions = {
  /** The API root that holds `/chat/completions`, e.g. `https://api.openai.com/v1` or `http://127.0.0.1:11434/v1`. */
  baseURL: string;
  /** Sent as `Authorization: Bearer <apiKey>`; never logged nor put in error messages. Read it from the environment. @default none (local servers need no key) */
  apiKey?: string;
  /** The provider's model name, e.g. `gpt-4o-mini`, `llama3.1:8b`. */
  model: string;
  /** Per attempt: until the whole response (generate) or the next chunk (stream) arrives. A timeout is not retried. @default 60000 */
  timeoutMs?: number;
  /** Retries after a 408/409/425/429/5xx answer or a network error; then the call fails `unavailable`. @default 3 */
  maxRetries?: number;
  /** Requests this instance keeps open at once (shared by every call, generate and stream). @default 4 */
  maxConcurrency?: number;
  /**
   * Ask a stream for its token usage (`stream_options: { include_usage: true }`). Turn it off for a
   * server that rejects the field. @default true
   */
  streamUsage?: boolean;
  /** Extra headers for every request (e.g. `OpenAI-Organization`). */
  headers?: Record<string, string>;
  /** First backoff delay; each retry doubles it, with jitter. @default 500 */
  retryBaseDelayMs?: number;
  /** Longest wait between attempts. A provider asking for a longer `Retry-After` makes the call fail `unavailable` at once. @default 30000 */
  maxRetryDelayMs?: number;
  /** Called before each retry (for logs and metrics). @default none */
  onRetry?: (event: RetryEvent) => void;
};

type WireUsage = { prompt_tokens?: unknown; completion_tokens?: unknown } | null;
type ChatCompletion = { choices?: { message?: { content?: unknown } }[]; usage?: WireUsage };
type ChatCompletionChunk = { choices?: { delta?: { content?: unknown } }[]; error?: unknown; usage?: WireUsage };

const count = (value: unknown): number | null => (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : null);

/** The provider's `usage` as the port's `TokenUsage`; null when absent or not two token counts. */
function readUsage(usage: WireUsage | undefined): TokenUsage | null {
  const inputTokens = count(usage?.prompt_tokens);
  const outputTokens = count(usage?.completion_tokens);
  return inputTokens === null || outputTokens === null ? null : { inputTokens, outputTokens };
}

/**
 * A `LanguageModel` over any OpenAI-compatible `POST /chat/completions` endpoint (OpenAI, vLLM,
 * llama.cpp server, Ollama), using the global `fetch`.
 *
 * Failures: a timeout rejects `timeout`; 429/5xx/network errors are retried and then reject
 * `unavailable`; any other 4xx or a malformed response rejects `failed`; an aborted `signal`
 * rejects with an `AbortError` and closes the connection.
 *
 * @example
 * const model = openaiCompatibleLanguageModel({
 *   baseURL: 'http://127.0.0.1:11434/v1',
 *   model: 'llama3.1:8b',
 *   apiKey: process.env.MEMORY_AGENTS_MODEL_API_KEY,
 * });
 */
export function openaiCompatibleLanguageModel(options: OpenaiCompatibleLanguageModelOptions): LanguageModel {
  const config = optionsSchema.parse(options);
  const client = createProviderClient({
    ...config,
    concurrency: pLimit(config.maxConcurrency),
    operation: `chat completion (${config.model})`,
  });

  const body = (request: GenerateRequest, stream: boolean) => ({
    model: config.model,
    messages: request.messages.map(toWireMessage),
    ...(request.responseFormat === 'json' ? { response_format: { type: 'json_object' } } : {}),
    ...(request.maxOutputTokens !== undefined ? { max_tokens: request.maxOutputTokens } : {}),
    // The last chunk then carries the call's `usage` (OpenAI, vLLM, llama.cpp, Ollama; others ignore it).
    ...(stream ? { stream: true, ...(config.streamUsage ? { stream_options: { include_usage: true } } : {}) } : {}),
  });

  const malformed = (what: string) => new LanguageModelError('failed', `chat completion (${config.model}) failed: malformed response (${what})`);

  return {
    specificationVersion: 'v1',
    id: `openai-compatible:${config.model}`,

    async generate(request: GenerateRequest): Promise<GenerateResult> {
      const response = (await client.postJson('/chat/completions', body(request, false), request.signal)) as ChatCompletion;
      const content = Array.isArray(response?.choices) ? response.choices[0]?.message?.content : undefined;
      if (typeof content !== 'string') throw malformed('no choices[0].message.content');
      const usage = readUsage(response.usage);
      const result: GenerateResult = usage ? { text: content, usage } : { text: content };
      if (request.task?.kind !== 'answer') return result;
      const numbers = new Set(request.task.items.map((item) => item.number));
      const highest = Math.max(0, ...numbers);
      return { ...result, citedItems: parseCitations(content, highest).filter((number) => numbers.has(number)) };
    },

    /** Yields the deltas; finishes with `{ usage }` when the provider sent it (port "LanguageModel"). */
    async *stream(request: GenerateRequest): AsyncGenerator<string, StreamResult> {
      const opened = await client.open('/chat/completions', body(request, true), request.signal);
      let usage: TokenUsage | null = null;
      const finish = (): StreamResult => (usage ? { usage } : {});
      try {
        if (!opened.response.body) throw malformed('empty body');
        for await (const data of readServerSentEvents(opened.response.body, opened.touch)) {
          if (data.trim() === '[DONE]') return finish();
          let chunk: ChatCompletionChunk;
          try {
            chunk = JSON.parse(data) as ChatCompletionChunk;
          } catch {
            throw malformed('a stream event is not JSON');
          }
          if (chunk?.error !== undefined) throw new LanguageModelError('failed', `chat completion (${config.model}) failed: the provider reported an error mid-stream`);
          usage = readUsage(chunk?.usage) ?? usage;
          const content = Array.isArray(chunk?.choices) ? chunk.choices[0]?.delta?.content : undefined;
          if (typeof content === 'string' && content !== '') {
            // Chunks already buffered must not leak out after the caller aborted.
            if (request.signal?.aborted) throw abortError(request.signal);
            yield content;
          }
        }
        if (request.signal?.aborted) throw abortError(request.signal);
        return finish();
      } catch (error) {
        throw opened.mapReadError(error);
      } finally {
        opened.close();
      }
    },
  };
}

function toWireMessage(message: ModelMessage) {
  if (!message.images || message.images.length === 0) return { role: message.role, content: message.content };
  return {
    role: message.role,
    content: [
      { type: 'text', text: message.content },
      ...message.images.map((image) => ({
        type: 'image_url',
        image_url: { url: `data:${image.mediaType};base64,${Buffer.from(image.data).toString('base64')}` },
      })),
    ],
  };
}
