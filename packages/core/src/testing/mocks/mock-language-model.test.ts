import { describe, expect, it } from 'vitest';
import { LanguageModelError, type GenerateRequest } from '../../ports/index.js';
import { mockLanguageModel } from './mock-language-model.js';

const request = (content: string, signal?: AbortSignal): GenerateRequest => ({ messages: [{ role: 'user', content }], ...(signal ? { signal } : {}) });

describe('mockLanguageModel', () => {
  it('records generate and stream calls in order', async () => {
    const model = mockLanguageModel();
    await model.generate(request('one'));
    for await (const _ of model.stream(request('two'))) void _;
    expect(model.calls.map((call) => call.method)).toEqual(['generate', 'stream']);
    expect(model.generateCalls[0]?.messages[0]?.content).toBe('one');
    expect(model.streamCalls[0]?.messages[0]?.content).toBe('two');
  });

  it('serves a list of replies one per call and repeats the last', async () => {
    const model = mockLanguageModel({ generate: ['a', 'b'] });
    const texts = [];
    for (let index = 0; index < 3; index += 1) texts.push((await model.generate(request('x'))).text);
    expect(texts).toEqual(['a', 'b', 'b']);
  });

  it('passes through errors thrown by a scripted reply', async () => {
    const model = mockLanguageModel({
      generate: () => {
        throw new LanguageModelError('timeout', 'scripted timeout');
      },
    });
    await expect(model.generate(request('x'))).rejects.toMatchObject({ kind: 'timeout' });
  });

  it('fills citedItems from [n] markers of an answer task, keeping only given items', async () => {
    const model = mockLanguageModel({ generate: 'See [2] and [7], also [2].' });
    const result = await model.generate({
      messages: [{ role: 'user', content: 'q' }],
      task: {
        kind: 'answer',
        question: 'q',
        answerLength: 'brief',
        items: [1, 2].map((number) => ({ number, text: `item ${number}`, speaker: null, occurredAt: null, label: 'l' })),
      },
    });
    expect(result.citedItems).toEqual([2]);
  });

  it('streams scripted deltas', async () => {
    const model = mockLanguageModel({ stream: ['Hel', 'lo'] });
    let text = '';
    for await (const delta of model.stream(request('x'))) text += delta;
    expect(text).toBe('Hello');
  });
});
