import { describe, expect, it } from 'vitest';
import type { LanguageModel, StreamResult } from '../ports/language-model.js';
import { observedModel } from './telemetry.js';

describe('observedModel', () => {
  it('passes usage through: on a generate result and as the value a stream finishes with', async () => {
    // A test double of a network model that reports usage.
    const model: LanguageModel = {
      specificationVersion: 'v1',
      id: 'reporting-model',
      generate: async () => ({ text: 'Hi.', usage: { inputTokens: 5, outputTokens: 2 } }),
      async *stream(): AsyncGenerator<string, StreamResult> {
        yield 'Hi';
        yield '.';
        return { usage: { inputTokens: 5, outputTokens: 2 } };
      },
    };
    const events: unknown[] = [];
    const observed = observedModel(model, (event) => void events.push(event));
    expect(await observed.generate({ messages: [] })).toEqual({ text: 'Hi.', usage: { inputTokens: 5, outputTokens: 2 } });
    const iterator = observed.stream({ messages: [] })[Symbol.asyncIterator]();
    expect([await iterator.next(), await iterator.next(), await iterator.next()]).toEqual([
      { done: false, value: 'Hi' },
      { done: false, value: '.' },
      { done: true, value: { usage: { inputTokens: 5, outputTokens: 2 } } },
    ]);
    expect(events).toHaveLength(2);
  });
});
