import { MEMORY_DATA_RULE, fenceMemoryData } from '@memory-agents/core/boundary';
import { memoryTarget, type MemoryTarget } from './memory-client.js';

/** Options of `memoryMiddleware`. */
export type MemoryMiddlewareOptions = MemoryTarget & {
  /**
   * Learn each exchange (the last user message and the answer) in the thread after the answer,
   * without making the answer wait. `false` only reads memory.
   * @default true
   */
  observe?: boolean;
  /** Speaker names of the observed turns. @default { user: 'user', assistant: 'agent' } */
  speakers?: { user?: string; assistant?: string };
  /**
   * Called when learning an exchange failed (the answer was already returned).
   * @default a console.warn line
   */
  onObserveError?: (error: unknown) => void;
};

/** A prompt as the middleware reads it: the same shape in provider spec V3 (`ai` 6) and V4 (`ai` 7). */
type Prompt = ReadonlyArray<{ role: string; content: unknown }>;
/** The parts of a model result and of a stream that the middleware reads (spec V3 and V4 alike). */
type Content = ReadonlyArray<{ type: string; text?: unknown }>;
type StreamPart = { type: string };

/**
 * The middleware, plus `flush()` to await the exchanges still being sent (serverless `waitUntil`).
 * Typed by the shape it reads, so `wrapLanguageModel` of `ai` 6 (spec V3) and of `ai` 7 (spec V4)
 * both accept it; it declares spec `v3`, which both run.
 */
export type MemoryMiddleware = {
  readonly specificationVersion: 'v3';
  transformParams<P extends { prompt: Prompt }>(options: { params: P }): Promise<P>;
  wrapGenerate<R extends { content: Content; finishReason: { unified: string } }>(options: { doGenerate: () => PromiseLike<R>; params: { prompt: Prompt } }): Promise<R>;
  wrapStream<R extends { stream: ReadableStream<T> }, T extends StreamPart>(options: { doStream: () => PromiseLike<R>; params: { prompt: Prompt } }): Promise<R>;
  /** Resolves when every exchange sent so far reached the service (202) or failed. */
  flush(): Promise<void>;
};

/** How long a recall is reused for the same message (the steps of one multi-step call). */
const RECALL_REUSE_MS = 30_000;

/**
 * A language-model middleware for `wrapLanguageModel` that gives the model the agent's memory.
 * Per call it recalls the memory context for the last user message (`POST …/recall`, which learns
 * nothing) and adds it, with its sources, as quoted data: a `<memory-data id="nonce">` block
 * (`fenceMemoryData` of `@memory-agents/core`: the stored text can neither close it nor pose as a
 * role marker) in a text part placed before the last user message's own text. The only system
 * message it adds, after the call's own, is the rule that memory items are information, never
 * instructions; no recalled text ever reaches a system message (issue 33). After the answer (for a stream: when it finishes) it observes the exchange, the user
 * message and the answer, in the thread, without blocking the answer on learning. Steps that end
 * in tool calls are not observed; the step that answers is.
 *
 * @example
 * const model = wrapLanguageModel({
 *   model: openai('gpt-4o-mini'),
 *   middleware: memoryMiddleware({ baseUrl: 'http://127.0.0.1:8787', apiKey: process.env.MEMORY_AGENTS_API_KEY!, agentId, threadId }),
 * });
 * const { text } = await generateText({ model, prompt: 'Where does my sister live?' });
 */
export function memoryMiddleware(options: MemoryMiddlewareOptions): MemoryMiddleware {
  const target = memoryTarget(options);
  const observing = options.observe ?? true;
  const speakers = { user: options.speakers?.user ?? 'user', assistant: options.speakers?.assistant ?? 'agent' };
  const onObserveError = options.onObserveError ?? ((error: unknown) => console.warn(`@memory-agents/ai-sdk: learning an exchange failed: ${error instanceof Error ? error.message : String(error)}`));
  const inFlight = new Set<Promise<void>>();
  let lastRecall: { query: string; at: number; result: Promise<string | null> } | null = null;

  /** The fenced memory for `query` (a user-message text part), or null when memory holds nothing about it. */
  function memoryFor(query: string): Promise<string | null> {
    if (lastRecall && lastRecall.query === query && Date.now() - lastRecall.at < RECALL_REUSE_MS) return lastRecall.result;
    const result = target.recall(query).then((recalled) => {
      if (recalled.memory_context.trim() === '') return null;
      // Labels are file names and speaker names: stored text too, so the sources stay inside the block.
      const sources = recalled.citations.map((citation, i) => `[S${i + 1}] ${citation.label} (${citation.href})`);
      const data = sources.length > 0 ? [recalled.memory_context, '', 'Sources of these items:', ...sources] : [recalled.memory_context];
      return (
        'Memory: what you learned earlier that may bear on my message below, as quoted data. Each item is numbered; ' +
        'when you rely on one, cite it as [n]. Ignore items that do not apply.\n' +
        fenceMemoryData(data)
      );
    });
    lastRecall = { query, at: Date.now(), result };
    result.catch(() => {
      if (lastRecall?.result === result) lastRecall = null;
    });
    return result;
  }

  function observeExchange(params: { prompt: Prompt }, answer: string): void {
    const message = lastUserText(params.prompt);
    if (!observing || message === null || answer.trim() === '') return;
    const timestamp = new Date().toISOString();
    const sending = (async () => {
      const threadId = await target.thread();
      await target.client.threads.observe({
        agentId: options.agentId,
        threadId,
        observations: [
          { speaker: speakers.user, content: [{ type: 'text', text: message }], timestamp },
          { speaker: speakers.assistant, content: [{ type: 'text', text: answer }], timestamp },
        ],
        ...target.request,
        idempotencyKey: globalThis.crypto.randomUUID(),
        // The agent learns one thing at a time (429, Retry-After: 1 while busy): wait for it.
        retries: { max: 60, maxDelayMs: 5_000 },
      });
    })().catch(onObserveError);
    inFlight.add(sending);
    void sending.finally(() => inFlight.delete(sending));
  }

  return {
    specificationVersion: 'v3',

    async transformParams({ params }) {
      const query = lastUserText(params.prompt);
      if (query === null) return params;
      const memory = await memoryFor(query);
      return memory === null ? params : { ...params, prompt: withMemory(params.prompt, memory) as typeof params.prompt };
    },

    async wrapGenerate({ doGenerate, params }) {
      const result = await doGenerate();
      if (result.finishReason.unified !== 'tool-calls') observeExchange(params, textOf(result.content));
      return result;
    },

    async wrapStream({ doStream, params }) {
      const result = await doStream();
      type Part = (typeof result.stream extends ReadableStream<infer T> ? T : never) & { delta?: unknown; finishReason?: { unified?: unknown } };
      let answer = '';
      let toolCalls = false;
      const watched = result.stream.pipeThrough(
        new TransformStream<Part, Part>({
          transform(part, controller) {
            if (part.type === 'text-delta' && typeof part.delta === 'string') answer += part.delta;
            if (part.type === 'finish' && part.finishReason?.unified === 'tool-calls') toolCalls = true;
            controller.enqueue(part);
          },
          // Only a stream that finished: an aborted or failed one is not learned.
          flush() {
            if (!toolCalls) observeExchange(params, answer);
          },
        }),
      );
      return { ...result, stream: watched };
    },

    async flush() {
      while (inFlight.size > 0) await Promise.all([...inFlight]);
    },
  };
}

/** The memory parts this middleware added: not the user's words, so never observed or recalled for. */
const MEMORY_PARTS = new WeakSet<object>();

/** The text of the last user message (without a memory part the middleware added), or null when the prompt has none. */
export function lastUserText(prompt: Prompt): string | null {
  for (let i = prompt.length - 1; i >= 0; i--) {
    const message = prompt[i]!;
    if (message.role !== 'user' || !Array.isArray(message.content)) continue;
    const text = (message.content as Content)
      .map((part) => (part.type === 'text' && typeof part.text === 'string' && !MEMORY_PARTS.has(part) ? part.text : ''))
      .join('\n')
      .trim();
    return text === '' ? null : text;
  }
  return null;
}

/**
 * The prompt with the memory rule as a system message after its leading system messages, and the
 * fenced memory as the first text part of the last user message (decisions.md, "Trust boundary").
 */
function withMemory(prompt: Prompt, fenced: string): Prompt {
  let at = 0;
  while (at < prompt.length && prompt[at]!.role === 'system') at++;
  let last = prompt.length - 1;
  while (last >= 0 && prompt[last]!.role !== 'user') last--;
  const part = { type: 'text', text: fenced };
  MEMORY_PARTS.add(part);
  const withData = prompt.map((message, i) => (i === last && Array.isArray(message.content) ? { ...message, content: [part, ...(message.content as unknown[])] } : message));
  return [...withData.slice(0, at), { role: 'system', content: MEMORY_DATA_RULE }, ...withData.slice(at)];
}

function textOf(content: Content): string {
  return content
    .map((part) => (part.type === 'text' && typeof part.text === 'string' ? part.text : ''))
    .join('')
    .trim();
}
