import { describe, expect, it } from 'vitest';
import type { AnswerContextItem, GenerateRequest, LanguageModel } from '../../../ports/language-model.js';

/** What `create()` of {@link describeLanguageModelConformance} returns: one fresh model. */
export type LanguageModelConformanceTarget = {
  /** The model under test. */
  port: LanguageModel;
  /** Releases what `create()` started (a scripted server, a process); runs even when a test fails. */
  cleanup?: () => Promise<void>;
  /**
   * Makes the model's next call hang until it is aborted (a stalled provider). When given, the
   * abort tests abort calls that would otherwise never settle, which proves they stop promptly;
   * without it they abort right after the call starts.
   */
  stallNextCall?: () => void;
};

/** Options of {@link describeLanguageModelConformance}. */
export type LanguageModelConformanceOptions = {
  /** Names the `describe` block, e.g. `'openaiCompatibleLanguageModel'`. */
  name: string;
  /** Builds a fresh model; called once per test. */
  create: () => Promise<LanguageModelConformanceTarget>;
  capabilities?: {
    /**
     * The same request gives the same text (a scripted server, a mock, temperature 0 with a fixed
     * seed). Only then is `stream` checked to concatenate to exactly what `generate` returns.
     * @default true
     */
    deterministic?: boolean;
  };
  /** Test titles to skip, e.g. `['stream: deltas concatenate to the text generate returns']`. */
  skip?: string[];
};

const ITEMS: AnswerContextItem[] = [
  { number: 1, text: 'Ana moved to Lisbon in May 2024.', speaker: 'Ana', occurredAt: '2024-05-10T00:00:00.000Z', label: 'thread turn 1' },
  { number: 2, text: 'Ana works as a nurse.', speaker: 'Ana', occurredAt: null, label: 'thread turn 2' },
  { number: 3, text: 'Ana has a cat called Miso.', speaker: 'Ana', occurredAt: null, label: 'thread turn 3' },
];

const plainRequest = (signal?: AbortSignal): GenerateRequest => ({
  messages: [
    { role: 'system', content: 'You are a helpful assistant. Answer in one short sentence.' },
    { role: 'user', content: 'Say hello to Ana.' },
  ],
  ...(signal ? { signal } : {}),
});

const answerRequest = (): GenerateRequest => {
  const question = 'Where does Ana live?';
  return {
    messages: [
      { role: 'system', content: 'Answer from the numbered memory items and cite them as [n].' },
      { role: 'user', content: `Memory items:\n${ITEMS.map((item) => `[${item.number}] ${item.text}`).join('\n')}\n\nQuestion: ${question}` },
    ],
    task: { kind: 'answer', question, items: ITEMS, answerLength: 'brief' },
  };
};

const isAbortError = (error: unknown) => error instanceof Error && error.name === 'AbortError';

/**
 * Registers a vitest suite that checks a {@link LanguageModel} against the port's contract:
 * `generate` resolves with text; `stream` yields string deltas that concatenate to the `generate`
 * text (deterministic models); both reject with an `AbortError` when the signal aborts, before or
 * during the call and mid-stream; an answer task's `citedItems` only name items it was given.
 *
 * @example
 * ```ts
 * describeLanguageModelConformance({
 *   name: 'mockLanguageModel',
 *   create: async () => ({ port: mockLanguageModel() }),
 * });
 * ```
 */
const isTokenCount = (value: unknown) => typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;

export function describeLanguageModelConformance({ name, create, capabilities = {}, skip = [] }: LanguageModelConformanceOptions): void {
  const deterministic = capabilities.deterministic ?? true;
  const test = (title: string, body: (target: LanguageModelConformanceTarget) => Promise<void>, enabled = true) =>
    (skip.includes(title) || !enabled ? it.skip : it)(title, async () => {
      const target = await create();
      try {
        await body(target);
      } finally {
        await target.cleanup?.();
      }
    });

  describe(name, () => {
    test('identity: has specificationVersion v1 and a non-empty id', async ({ port }) => {
      expect(port.specificationVersion).toBe('v1');
      expect(typeof port.id).toBe('string');
      expect(port.id.length).toBeGreaterThan(0);
    });

    test('generate: resolves with a non-empty text', async ({ port }) => {
      const result = await port.generate(plainRequest());
      expect(typeof result.text).toBe('string');
      expect(result.text.trim().length).toBeGreaterThan(0);
      // Usage is optional; when reported, two token counts (issue 33).
      if (result.usage !== undefined) expect(isTokenCount(result.usage.inputTokens) && isTokenCount(result.usage.outputTokens)).toBe(true);
    });

    test('stream: yields string deltas forming a non-empty text, and finishes with nothing or { usage }', async ({ port }) => {
      const deltas: string[] = [];
      const iterator = port.stream(plainRequest())[Symbol.asyncIterator]();
      let next = await iterator.next();
      for (; !next.done; next = await iterator.next()) deltas.push(next.value);
      expect(deltas.every((delta) => typeof delta === 'string')).toBe(true);
      expect(deltas.join('').trim().length).toBeGreaterThan(0);
      const usage = next.value ? next.value.usage : undefined;
      if (usage !== undefined) expect(isTokenCount(usage.inputTokens) && isTokenCount(usage.outputTokens)).toBe(true);
    });

    test(
      'stream: deltas concatenate to the text generate returns',
      async ({ port }) => {
        const { text } = await port.generate(plainRequest());
        let streamed = '';
        for await (const delta of port.stream(plainRequest())) streamed += delta;
        expect(streamed).toBe(text);
      },
      deterministic,
    );

    test('answer: citedItems are distinct numbers of the items given', async ({ port }) => {
      const result = await port.generate(answerRequest());
      expect(result.text.trim().length).toBeGreaterThan(0);
      if (result.citedItems !== undefined) {
        const numbers = ITEMS.map((item) => item.number);
        for (const cited of result.citedItems) expect(numbers).toContain(cited);
        expect(new Set(result.citedItems).size).toBe(result.citedItems.length);
      }
    });

    test('abort: generate rejects with an AbortError when the signal is already aborted', async ({ port }) => {
      const error = await port.generate(plainRequest(AbortSignal.abort())).catch((caught: unknown) => caught);
      expect(isAbortError(error)).toBe(true);
    });

    test('abort: generate rejects with an AbortError when aborted while pending', async ({ port, stallNextCall }) => {
      stallNextCall?.();
      const controller = new AbortController();
      const pending = port.generate(plainRequest(controller.signal)).catch((caught: unknown) => caught);
      // A stalled call is given time to reach the provider; any other call is aborted in the same
      // tick it started, before it could have finished.
      if (stallNextCall) await new Promise((resolve) => setTimeout(resolve, 20));
      controller.abort();
      expect(isAbortError(await pending)).toBe(true);
    });

    test('abort: stream rejects with an AbortError when aborted before the first delta', async ({ port, stallNextCall }) => {
      stallNextCall?.();
      const controller = new AbortController();
      const iterator = port.stream(plainRequest(controller.signal))[Symbol.asyncIterator]();
      const pending = iterator.next().catch((caught: unknown) => caught);
      if (stallNextCall) await new Promise((resolve) => setTimeout(resolve, 20));
      controller.abort();
      expect(isAbortError(await pending)).toBe(true);
    });

    test('abort: stream rejects with an AbortError and yields nothing more when aborted mid-stream', async ({ port }) => {
      const controller = new AbortController();
      const iterator = port.stream(plainRequest(controller.signal))[Symbol.asyncIterator]();
      const first = await iterator.next();
      expect(first.done).toBe(false);
      controller.abort();
      const error = await iterator.next().catch((caught: unknown) => caught);
      expect(isAbortError(error)).toBe(true);
    });
  });
}
