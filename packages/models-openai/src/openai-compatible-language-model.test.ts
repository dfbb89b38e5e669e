import { inspect } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LanguageModelError, type GenerateRequest } from '@memory-agents/core/adapter';
import { openaiCompatibleLanguageModel, type OpenaiCompatibleLanguageModelOptions } from './openai-compatible-language-model.js';
import type { RetryEvent } from './provider-client.js';
import { startScriptedOpenaiServer, type ScriptedOpenaiServer } from './testing/scripted-openai-server.js';

let server: ScriptedOpenaiServer;
beforeEach(async () => {
  server = await startScriptedOpenaiServer();
});
afterEach(async () => {
  await server.close();
});

const model = (options: Partial<OpenaiCompatibleLanguageModelOptions> = {}) =>
  openaiCompatibleLanguageModel({ baseURL: server.baseURL, model: 'test-model', retryBaseDelayMs: 1, timeoutMs: 5_000, ...options });

const request = (content = 'Hello?', extra: Partial<GenerateRequest> = {}): GenerateRequest => ({ messages: [{ role: 'user', content }], ...extra });

const rejection = (promise: Promise<unknown>) => promise.then(
  () => {
    throw new Error('expected a rejection');
  },
  (error: unknown) => error as Error,
);

async function collect(stream: AsyncIterable<string>): Promise<string[]> {
  const deltas: string[] = [];
  for await (const delta of stream) deltas.push(delta);
  return deltas;
}

describe('openaiCompatibleLanguageModel', () => {
  it('generate posts the chat completion request and returns the text', async () => {
    server.enqueue('chat', { type: 'answer', text: 'Hi there.' });
    const result = await model({ apiKey: 'sk-test-123', headers: { 'x-extra': 'yes' } }).generate(
      request('Hello?', { responseFormat: 'json', maxOutputTokens: 50 }),
    );
    expect(result).toEqual({ text: 'Hi there.' });
    const [recorded] = server.requests;
    expect(recorded?.path).toBe('/v1/chat/completions');
    expect(recorded?.headers.authorization).toBe('Bearer sk-test-123');
    expect(recorded?.headers['x-extra']).toBe('yes');
    expect(recorded?.body).toEqual({
      model: 'test-model',
      messages: [{ role: 'user', content: 'Hello?' }],
      response_format: { type: 'json_object' },
      max_tokens: 50,
    });
  });

  it('sends no Authorization header without a key, and reports its id', async () => {
    const instance = model();
    await instance.generate(request());
    expect(server.requests[0]?.headers.authorization).toBeUndefined();
    expect(instance.id).toBe('openai-compatible:test-model');
    expect(instance.specificationVersion).toBe('v1');
  });

  it('sends images as image_url parts with data URLs', async () => {
    await model().generate({
      messages: [{ role: 'user', content: 'What is this?', images: [{ mediaType: 'image/png', data: new Uint8Array([1, 2, 3]) }] }],
    });
    expect(server.requests[0]?.body.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is this?' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,AQID' } },
        ],
      },
    ]);
  });

  it('fills citedItems from [n] markers for an answer task, in range and in order of appearance', async () => {
    server.enqueue('chat', { type: 'answer', text: 'Lisbon [2], since May [1][2]; not [5].' });
    const items = [1, 2, 3].map((number) => ({ number, text: `item ${number}`, speaker: null, occurredAt: null, label: 'turn' }));
    const result = await model().generate(request('Where?', { task: { kind: 'answer', question: 'Where?', items, answerLength: 'brief' } }));
    expect(result.citedItems).toEqual([2, 1]);
  });

  it('stream yields the SSE deltas in order and sends stream: true', async () => {
    server.enqueue('chat', { type: 'stream', chunks: ['Hel', 'lo', ' world'], delayMs: 5 });
    expect(await collect(model().stream(request()))).toEqual(['Hel', 'lo', ' world']);
    expect(server.requests[0]?.body.stream).toBe(true);
  });

  it("generate reports the provider's usage as input and output tokens, and none when it sent none or nonsense", async () => {
    server.enqueue(
      'chat',
      { type: 'answer', text: 'Hi.', usage: { prompt_tokens: 42, completion_tokens: 7, total_tokens: 49 } },
      { type: 'answer', text: 'Hi.' },
      { type: 'json', body: { choices: [{ message: { content: 'Hi.' } }], usage: { prompt_tokens: -1, completion_tokens: '7' } } },
    );
    const instance = model();
    expect(await instance.generate(request())).toEqual({ text: 'Hi.', usage: { inputTokens: 42, outputTokens: 7 } });
    expect(await instance.generate(request())).toEqual({ text: 'Hi.' });
    expect(await instance.generate(request())).toEqual({ text: 'Hi.' });
  });

  it('stream asks for usage (stream_options.include_usage) and finishes with it; a provider without it finishes with none', async () => {
    server.enqueue('chat', { type: 'stream', chunks: ['Hel', 'lo'], usage: { prompt_tokens: 12, completion_tokens: 2, total_tokens: 14 } }, { type: 'stream', chunks: ['Hi'] });
    const instance = model();
    const iterator = instance.stream(request())[Symbol.asyncIterator]();
    const deltas: string[] = [];
    let next = await iterator.next();
    for (; !next.done; next = await iterator.next()) deltas.push(next.value);
    expect(deltas).toEqual(['Hel', 'lo']);
    expect(next.value).toEqual({ usage: { inputTokens: 12, outputTokens: 2 } });
    expect(server.requests[0]?.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    const plain = instance.stream(request())[Symbol.asyncIterator]();
    expect(await plain.next()).toEqual({ done: false, value: 'Hi' });
    expect(await plain.next()).toEqual({ done: true, value: {} });
    // streamUsage: false leaves the field out, for servers that reject it.
    await collect(model({ streamUsage: false }).stream(request()));
    expect(server.requests[2]?.body.stream_options).toBeUndefined();
  });

  it('stream ends cleanly when the provider closes without [DONE]', async () => {
    server.enqueue('chat', { type: 'stream', chunks: ['a', 'b'], done: false });
    expect((await collect(model().stream(request()))).join('')).toBe('ab');
  });

  it('retries a 429 and a 500, then succeeds', async () => {
    const retries: RetryEvent[] = [];
    server.enqueue('chat', { type: 'status', status: 429 }, { type: 'status', status: 500 }, { type: 'answer', text: 'finally' });
    const result = await model({ maxRetries: 3, onRetry: (event) => retries.push(event) }).generate(request());
    expect(result.text).toBe('finally');
    expect(server.requests.map((recorded) => recorded.behaviour)).toEqual(['status', 'status', 'answer']);
    expect(retries.map((event) => [event.retry, event.status])).toEqual([
      [1, 429],
      [2, 500],
    ]);
  });

  it("waits the provider's Retry-After (seconds, or retry-after-ms) before retrying", async () => {
    const retries: RetryEvent[] = [];
    server.enqueue(
      'chat',
      { type: 'status', status: 429, retryAfter: '1' },
      { type: 'status', status: 503, retryAfterMs: '3' },
      { type: 'answer', text: 'ok' },
    );
    await model({ maxRetries: 2, onRetry: (event) => retries.push(event) }).generate(request());
    expect(retries.map((event) => ({ delayMs: event.delayMs, fromRetryAfter: event.fromRetryAfter }))).toEqual([
      { delayMs: 1000, fromRetryAfter: true },
      { delayMs: 3, fromRetryAfter: true },
    ]);
    expect(server.requests).toHaveLength(3);
  });

  it('gives up at once when Retry-After exceeds maxRetryDelayMs', async () => {
    server.enqueue('chat', { type: 'status', status: 429, retryAfter: '120' });
    const error = await rejection(model({ maxRetries: 3, maxRetryDelayMs: 1_000 }).generate(request()));
    expect(error).toBeInstanceOf(LanguageModelError);
    expect((error as LanguageModelError).kind).toBe('unavailable');
    expect(server.requests).toHaveLength(1);
  });

  it('rejects unavailable after maxRetries + 1 attempts', async () => {
    server.enqueue('chat', ...Array.from({ length: 5 }, () => ({ type: 'status' as const, status: 503 })));
    const error = await rejection(model({ maxRetries: 2 }).generate(request()));
    expect((error as LanguageModelError).kind).toBe('unavailable');
    expect(server.requests).toHaveLength(3);
  });

  it('rejects unavailable when the provider cannot be reached', async () => {
    const baseURL = server.baseURL;
    await server.close();
    const error = await rejection(openaiCompatibleLanguageModel({ baseURL, model: 'm', maxRetries: 1, retryBaseDelayMs: 1 }).generate(request()));
    expect((error as LanguageModelError).kind).toBe('unavailable');
    server = await startScriptedOpenaiServer();
  });

  it('rejects failed without retrying on a non-retryable 4xx', async () => {
    server.enqueue('chat', { type: 'status', status: 400, body: '{"error":{"message":"bad model name"}}' });
    const error = await rejection(model({ maxRetries: 3 }).generate(request()));
    expect((error as LanguageModelError).kind).toBe('failed');
    expect(error.message).toContain('bad model name');
    expect(server.requests).toHaveLength(1);
  });

  it('rejects failed on a malformed JSON body or a response without content', async () => {
    server.enqueue('chat', { type: 'malformed' }, { type: 'json', body: { choices: [] } });
    expect(((await rejection(model().generate(request()))) as LanguageModelError).kind).toBe('failed');
    expect(((await rejection(model().generate(request()))) as LanguageModelError).kind).toBe('failed');
  });

  it('rejects failed on a malformed stream event or an error event mid-stream', async () => {
    server.enqueue(
      'chat',
      { type: 'sse', data: ['{"choices":[{"delta":{"content":"a"}}]}', '{oops'] },
      { type: 'sse', data: ['{"choices":[{"delta":{"content":"a"}}]}', '{"error":{"message":"overloaded"}}'] },
    );
    for (let index = 0; index < 2; index += 1) {
      const deltas: string[] = [];
      const error = await rejection(
        (async () => {
          for await (const delta of model().stream(request())) deltas.push(delta);
        })(),
      );
      expect(deltas).toEqual(['a']);
      expect((error as LanguageModelError).kind).toBe('failed');
    }
  });

  it('rejects timeout when the provider stalls, without retrying', async () => {
    server.enqueue('chat', { type: 'stall' });
    const error = await rejection(model({ timeoutMs: 100, maxRetries: 3 }).generate(request()));
    expect(error).toBeInstanceOf(LanguageModelError);
    expect((error as LanguageModelError).kind).toBe('timeout');
    expect(server.requests).toHaveLength(1);
    await server.waitForClientClose(0);
  });

  it('rejects timeout when a stream goes idle', async () => {
    server.enqueue('chat', { type: 'stream', chunks: ['a', 'b'], delayMs: 10_000 });
    const error = await rejection(collect(model({ timeoutMs: 150 }).stream(request())));
    expect((error as LanguageModelError).kind).toBe('timeout');
  });

  it('abort while waiting rejects with an AbortError and closes the connection', async () => {
    server.enqueue('chat', { type: 'stall' });
    const controller = new AbortController();
    const pending = rejection(model().generate(request('x', { signal: controller.signal })));
    await server.waitForRequests(1);
    controller.abort();
    expect((await pending).name).toBe('AbortError');
    await server.waitForClientClose(0);
  });

  it('abort mid-stream rejects with an AbortError and the server sees the connection close', async () => {
    server.enqueue('chat', { type: 'stream', chunks: ['one ', 'two ', 'three ', 'four'], delayMs: 50 });
    const controller = new AbortController();
    const iterator = model().stream(request('x', { signal: controller.signal }))[Symbol.asyncIterator]();
    expect((await iterator.next()).value).toBe('one ');
    controller.abort();
    expect(((await rejection(iterator.next())) as Error).name).toBe('AbortError');
    await server.waitForClientClose(0);
    expect(server.requests[0]?.closedByClient).toBe(true);
  });

  it('breaking out of a stream closes the connection and frees the slot', async () => {
    server.enqueue('chat', { type: 'stream', chunks: ['one ', 'two ', 'three'], delayMs: 50 }, { type: 'answer', text: 'next' });
    const instance = model({ maxConcurrency: 1 });
    for await (const delta of instance.stream(request())) {
      expect(delta).toBe('one ');
      break;
    }
    await server.waitForClientClose(0);
    expect((await instance.generate(request())).text).toBe('next');
  });

  it('an abort while queued for a concurrency slot rejects without sending', async () => {
    server.enqueue('chat', { type: 'stall' });
    const instance = model({ maxConcurrency: 1 });
    const first = new AbortController();
    const holding = rejection(instance.generate(request('a', { signal: first.signal })));
    await server.waitForRequests(1);
    const second = new AbortController();
    const queued = rejection(instance.generate(request('b', { signal: second.signal })));
    second.abort();
    expect((await queued).name).toBe('AbortError');
    first.abort();
    await holding;
    expect(server.requests).toHaveLength(1);
  });

  it('an abort during the backoff before a retry rejects and sends nothing more', async () => {
    server.enqueue('chat', { type: 'status', status: 429, retryAfter: '20' });
    const controller = new AbortController();
    let backingOff!: () => void;
    const onRetryCalled = new Promise<void>((resolve) => (backingOff = resolve));
    const pending = rejection(model({ maxRetries: 3, onRetry: () => backingOff() }).generate(request('x', { signal: controller.signal })));
    await onRetryCalled;
    controller.abort();
    expect((await pending).name).toBe('AbortError');
    expect(server.requests).toHaveLength(1);
  }, 10_000);

  it('an abandoned stream (never read again) frees its slot when the caller aborts', async () => {
    server.enqueue('chat', { type: 'stream', chunks: ['one ', 'two'], delayMs: 10_000 }, { type: 'answer', text: 'next' });
    const instance = model({ maxConcurrency: 1 });
    const controller = new AbortController();
    const iterator = instance.stream(request('x', { signal: controller.signal }))[Symbol.asyncIterator]();
    expect((await iterator.next()).value).toBe('one ');
    controller.abort();
    expect((await instance.generate(request())).text).toBe('next');
    await server.waitForClientClose(0);
  });

  it('never has more than maxConcurrency requests open, across 10 parallel calls', async () => {
    server.enqueue('chat', ...Array.from({ length: 10 }, (_, index) => ({ type: 'answer' as const, text: `answer ${index}`, delayMs: 20 })));
    const instance = model({ maxConcurrency: 3 });
    const results = await Promise.all(Array.from({ length: 10 }, (_, index) => instance.generate(request(`question ${index}`))));
    expect(results).toHaveLength(10);
    expect(server.requests).toHaveLength(10);
    expect(server.maxInFlight).toBeLessThanOrEqual(3);
  });

  it('keeps the concurrency cap for streams too', async () => {
    server.enqueue('chat', ...Array.from({ length: 6 }, () => ({ type: 'stream' as const, chunks: ['a', 'b'], delayMs: 10 })));
    const instance = model({ maxConcurrency: 2 });
    const streamed = await Promise.all(Array.from({ length: 6 }, () => collect(instance.stream(request()))));
    expect(streamed.map((deltas) => deltas.join(''))).toEqual(Array.from({ length: 6 }, () => 'ab'));
    expect(server.maxInFlight).toBeLessThanOrEqual(2);
  });

  it('never puts the API key in error messages, even when the provider echoes it', async () => {
    const apiKey = 'sk-super-secret-key-0123456789';
    server.enqueue(
      'chat',
      { type: 'status', status: 401, body: JSON.stringify({ error: { message: `Incorrect API key provided: ${apiKey}` } }) },
      { type: 'status', status: 500, body: `upstream said ${apiKey}` },
    );
    const errors = [
      await rejection(model({ apiKey, maxRetries: 0 }).generate(request())),
      await rejection(model({ apiKey, maxRetries: 0 }).generate(request())),
      await rejection(model({ apiKey, maxRetries: 0, timeoutMs: 50 }).generate(request('x', { signal: AbortSignal.abort() }))),
    ];
    for (const error of errors) {
      expect(error.message).not.toContain(apiKey);
      expect(inspect(error, { depth: 10 })).not.toContain(apiKey);
    }
    expect(errors[0]?.message).toContain('[redacted]');
  });

  it('rejects invalid options at construction', () => {
    expect(() => openaiCompatibleLanguageModel({ baseURL: 'not a url', model: 'm' })).toThrow();
    expect(() => openaiCompatibleLanguageModel({ baseURL: server.baseURL, model: '' })).toThrow();
    expect(() => openaiCompatibleLanguageModel({ baseURL: server.baseURL, model: 'm', maxConcurrency: 0 })).toThrow();
  });
});
