import type { GenerateRequest, GenerateResult, LanguageModel } from '../../ports/language-model.js';

type Awaitable<T> = T | Promise<T>;

/** Options of {@link mockLanguageModel}. */
export type MockLanguageModelOptions = {
  /** Reported as the model's `id`. @default 'mock-language-model' */
  id?: string;
  /**
   * The reply of `generate`: a fixed text, a fixed result, a list used one per call (the last one
   * repeats), or a function of the request (it may throw a `LanguageModelError`, or never resolve
   * to simulate a stalled provider; an abort still rejects).
   * @default a deterministic reply: `"Mock answer [1]."`-style text citing the first item for an
   * answer task, else an echo of the last user message
   */
  generate?: string | GenerateResult | (string | GenerateResult)[] | ((request: GenerateRequest) => Awaitable<string | GenerateResult>);
  /**
   * The deltas of `stream`: a fixed list, or a function of the request returning an (async)
   * iterable. @default the `generate` reply's text split after each space, so the deltas
   * concatenate to exactly what `generate` returns
   */
  stream?: string[] | ((request: GenerateRequest) => Iterable<string> | AsyncIterable<string>);
};

/** One recorded call. */
export type MockLanguageModelCall = { method: 'generate' | 'stream'; request: GenerateRequest };

export type MockLanguageModel = LanguageModel & {
  /** Every call, in order. */
  readonly calls: MockLanguageModelCall[];
  /** The requests of the `generate` calls, in order. */
  readonly generateCalls: GenerateRequest[];
  /** The requests of the `stream` calls, in order. */
  readonly streamCalls: GenerateRequest[];
};

/**
 * A scriptable {@link LanguageModel} for tests that records its calls. It honours the contract:
 * an aborted `signal` rejects with an `AbortError`, also while a scripted reply is pending or
 * between stream deltas.
 *
 * @example
 * const model = mockLanguageModel({ generate: ['{"facts":[]}'] });
 * await writer.write(request);
 * expect(model.generateCalls).toHaveLength(1);
 */
export function mockLanguageModel(options: MockLanguageModelOptions = {}): MockLanguageModel {
  const calls: MockLanguageModelCall[] = [];
  let generateCount = 0;

  const reply = async (request: GenerateRequest): Promise<GenerateResult> => {
    const script = options.generate;
    const index = generateCount;
    generateCount += 1;
    let value: string | GenerateResult;
    if (script === undefined) value = defaultReply(request);
    else if (typeof script === 'function') value = await script(request);
    else if (Array.isArray(script)) value = script[Math.min(index, script.length - 1)] ?? '';
    else value = script;
    return typeof value === 'string' ? withCitations(value, request) : value;
  };

  return {
    specificationVersion: 'v1',
    id: options.id ?? 'mock-language-model',
    calls,
    get generateCalls() {
      return calls.filter((call) => call.method === 'generate').map((call) => call.request);
    },
    get streamCalls() {
      return calls.filter((call) => call.method === 'stream').map((call) => call.request);
    },

    async generate(request) {
      calls.push({ method: 'generate', request });
      throwIfAborted(request.signal);
      return raceAbort(reply(request), request.signal);
    },

    async *stream(request) {
      calls.push({ method: 'stream', request });
      throwIfAborted(request.signal);
      const deltas: Iterable<string> | AsyncIterable<string> =
        typeof options.stream === 'function'
          ? options.stream(request)
          : (options.stream ?? splitAfterSpaces((await raceAbort(reply(request), request.signal)).text));
      const iterator = Symbol.asyncIterator in deltas ? deltas[Symbol.asyncIterator]() : toAsync(deltas[Symbol.iterator]());
      try {
        for (;;) {
          const next = await raceAbort(iterator.next(), request.signal);
          if (next.done) return;
          throwIfAborted(request.signal);
          yield next.value;
        }
      } finally {
        await iterator.return?.();
      }
    },
  };
}

function defaultReply(request: GenerateRequest): string {
  if (request.task?.kind === 'answer') {
    const first = request.task.items[0];
    return first ? `Mock answer from memory [${first.number}].` : 'Mock answer: nothing remembered.';
  }
  const lastUser = [...request.messages].reverse().find((message) => message.role === 'user');
  return `Mock reply to: ${lastUser?.content ?? ''}`;
}

/** Fills `citedItems` from `[n]` markers for answer tasks, as a network model adapter would. */
function withCitations(text: string, request: GenerateRequest): GenerateResult {
  if (request.task?.kind !== 'answer') return { text };
  const numbers = new Set(request.task.items.map((item) => item.number));
  const cited: number[] = [];
  for (const match of text.matchAll(/\[(\d+)\]/g)) {
    const value = Number(match[1]);
    if (numbers.has(value) && !cited.includes(value)) cited.push(value);
  }
  return { text, citedItems: cited };
}

function splitAfterSpaces(text: string): string[] {
  return text.match(/\S+\s*|\s+/g) ?? [];
}

function abortError(signal: AbortSignal | undefined): Error {
  const reason: unknown = signal?.reason;
  return reason instanceof Error && reason.name === 'AbortError' ? reason : new DOMException('The operation was aborted.', 'AbortError');
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw abortError(signal);
}

function raceAbort<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortError(signal));
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

function toAsync<T>(iterator: Iterator<T>): AsyncIterator<T> {
  return {
    next: async () => iterator.next(),
    return: async () => iterator.return?.() ?? { done: true, value: undefined },
  };
}
