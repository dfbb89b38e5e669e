import type { LanguageModelV3GenerateResult, LanguageModelV3StreamPart } from '@ai-sdk/provider';
import { createClient } from '@memory-agents/client';
import { generateText, simulateReadableStream, stepCountIs, streamText, tool, wrapLanguageModel } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { MEMORY_DATA_RULE } from '@memory-agents/core/boundary';
import { lastUserText, memoryMiddleware } from './memory-middleware.js';

const AGENT = 'agent_01J00000000000000000000000';
const THREAD = 'thread_01J00000000000000000000000';
const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: 1, text: 1, reasoning: undefined } };
const answer = (text: string): LanguageModelV3GenerateResult => ({ content: [{ type: 'text', text }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] });

/** A client over a fetch double: recall answers `context`, observe answers 202; every request is recorded. */
function fakeServer(context = '[1] (2024-05-08, user) Ingrid lives in Tromsø.') {
  const requests: { method: string; path: string; body: any; headers: Headers }[] = [];
  const fetch = async (input: string | URL | Request, init?: RequestInit) => {
    const url = new URL(String(input));
    const body = typeof init?.body === 'string' ? JSON.parse(init.body) : undefined;
    requests.push({ method: init?.method ?? 'GET', path: url.pathname, body, headers: new Headers(init?.headers) });
    const json = (status: number, value: unknown) => new Response(JSON.stringify(value), { status, headers: { 'content-type': 'application/json' } });
    if (url.pathname.endsWith('/recall')) {
      return json(200, { agent_id: AGENT, memory_context: context, citations: context ? [{ source_id: 'src_1', label: 'turn 1', media_type: 'text/plain', href: '/v1/x', verified: true }] : [], stages: [] });
    }
    if (url.pathname.endsWith('/observe')) return json(202, { agent_id: AGENT, thread_id: THREAD, observation_id: 'obs_01J00000000000000000000000', accepted: true });
    if (url.pathname.endsWith('/threads')) return json(201, { agent_id: AGENT, thread_id: THREAD });
    return json(404, { error: 'no', code: 'not_found' });
  };
  return { client: createClient({ baseUrl: 'http://memory.test', apiKey: 'sp_k_x', fetch: fetch as typeof globalThis.fetch }), requests };
}

describe('memoryMiddleware (unit, fake server)', () => {
  it('finds the last user message text', () => {
    expect(lastUserText([{ role: 'system', content: 's' }])).toBeNull();
    expect(
      lastUserText([
        { role: 'user', content: [{ type: 'text', text: 'first' }] },
        { role: 'assistant', content: [{ type: 'text', text: 'reply' }] },
        { role: 'user', content: [{ type: 'text', text: 'second' }, { type: 'text', text: 'part' }] },
      ]),
    ).toBe('second\npart');
  });

  it('recalls for the last user message, inserts memory after the system messages, observes user and agent turns once', async () => {
    const { client, requests } = fakeServer();
    const model = new MockLanguageModelV3({ doGenerate: async () => answer('In Tromsø.') });
    const middleware = memoryMiddleware({ client, agentId: AGENT, threadId: THREAD, endUser: 'alice', maxContextChars: 300 });
    await generateText({ model: wrapLanguageModel({ model, middleware }), system: 'Be brief.', prompt: 'Where does Ingrid live?' });
    await middleware.flush();

    const prompt = model.doGenerateCalls[0]!.prompt;
    expect(prompt.map((m) => m.role)).toEqual(['system', 'system', 'user']);
    // The system message added holds the rule only; the memory is quoted data in the user message.
    expect(prompt[1]!.content).toBe(MEMORY_DATA_RULE);
    const [memory, question] = prompt[2]!.content as { type: string; text: string }[];
    expect(memory!.text).toMatch(/^Memory: [^\n]*\n<memory-data id="([0-9a-f]{16})">\n> \[1\] \(2024-05-08, user\) Ingrid lives in Tromsø\.\n>\n> Sources of these items:\n> \[S1\] turn 1 \(\/v1\/x\)\n<\/memory-data id="\1">$/);
    expect(question).toEqual({ type: 'text', text: 'Where does Ingrid live?' });
    const recall = requests.find((r) => r.path.endsWith('/recall'))!;
    expect(recall.body).toEqual({ query: 'Where does Ingrid live?', max_context_chars: 300 });
    expect(recall.headers.get('x-sp-end-user')).toBe('alice');
    const observes = requests.filter((r) => r.path.endsWith('/observe'));
    expect(observes).toHaveLength(1);
    expect(observes[0]!.path).toBe(`/v1/agents/${AGENT}/threads/${THREAD}/observe`);
    expect(observes[0]!.headers.get('idempotency-key')).toBeTruthy();
    expect(observes[0]!.body.observations.map((o: any) => [o.speaker, o.content[0].text])).toEqual([
      ['user', 'Where does Ingrid live?'],
      ['agent', 'In Tromsø.'],
    ]);
  });

  it('a multi-step call recalls once and observes only the answering step', async () => {
    const { client, requests } = fakeServer();
    let step = 0;
    const model = new MockLanguageModelV3({
      doGenerate: async () =>
        ++step === 1
          ? { content: [{ type: 'tool-call', toolCallId: 'c', toolName: 'clock', input: '{}' }], finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage, warnings: [] }
          : answer('It is noon in Tromsø.'),
    });
    const middleware = memoryMiddleware({ client, agentId: AGENT, threadId: THREAD });
    const clock = tool({ inputSchema: z.object({}), execute: async () => 'noon' });
    await generateText({ model: wrapLanguageModel({ model, middleware }), tools: { clock }, stopWhen: stepCountIs(3), prompt: 'What time is it where Ingrid lives?' });
    await middleware.flush();
    expect(model.doGenerateCalls).toHaveLength(2);
    for (const call of model.doGenerateCalls) expect(JSON.stringify(call.prompt.find((m) => m.role === 'user'))).toContain('Tromsø');
    expect(requests.filter((r) => r.path.endsWith('/recall'))).toHaveLength(1);
    const observes = requests.filter((r) => r.path.endsWith('/observe'));
    expect(observes).toHaveLength(1);
    expect(observes[0]!.body.observations[1].content[0].text).toBe('It is noon in Tromsø.');
  });

  it('creates one thread when none is given; observe: false and empty memory change nothing', async () => {
    const { client, requests } = fakeServer('');
    const model = new MockLanguageModelV3({ doGenerate: async () => answer('Hi.') });
    const middleware = memoryMiddleware({ client, agentId: AGENT, threadTitle: 'Support chat' });
    const wrapped = wrapLanguageModel({ model, middleware });
    await generateText({ model: wrapped, prompt: 'Hello' });
    await generateText({ model: wrapped, prompt: 'Hello again' });
    await middleware.flush();
    expect(model.doGenerateCalls[0]!.prompt.map((m) => m.role)).toEqual(['user']);
    const created = requests.filter((r) => r.path === `/v1/agents/${AGENT}/threads`);
    expect(created).toHaveLength(1);
    expect(created[0]!.body).toMatchObject({ title: 'Support chat' });
    expect(requests.filter((r) => r.path.endsWith('/observe'))).toHaveLength(2);

    const quiet = fakeServer();
    const readOnly = memoryMiddleware({ client: quiet.client, agentId: AGENT, threadId: THREAD, observe: false });
    await generateText({ model: wrapLanguageModel({ model, middleware: readOnly }), prompt: 'Where does Ingrid live?' });
    await readOnly.flush();
    expect(quiet.requests.map((r) => r.path.split('/').at(-1))).toEqual(['recall']);
  });

  it('observes a stream when it finishes, not one that fails', async () => {
    const chunks: LanguageModelV3StreamPart[] = [
      { type: 'stream-start', warnings: [] },
      { type: 'text-start', id: 't' },
      { type: 'text-delta', id: 't', delta: 'In ' },
      { type: 'text-delta', id: 't', delta: 'Tromsø.' },
      { type: 'text-end', id: 't' },
      { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage },
    ];
    const { client, requests } = fakeServer();
    const middleware = memoryMiddleware({ client, agentId: AGENT, threadId: THREAD });
    const model = new MockLanguageModelV3({ doStream: async () => ({ stream: simulateReadableStream({ chunks }) }) });
    const result = streamText({ model: wrapLanguageModel({ model, middleware }), prompt: 'Where?' });
    expect(await result.text).toBe('In Tromsø.');
    await middleware.flush();
    expect(requests.filter((r) => r.path.endsWith('/observe'))[0]!.body.observations[1].content[0].text).toBe('In Tromsø.');

    const failing = fakeServer();
    const failingMiddleware = memoryMiddleware({ client: failing.client, agentId: AGENT, threadId: THREAD });
    const broken = new MockLanguageModelV3({
      doStream: async () => ({
        stream: new ReadableStream<LanguageModelV3StreamPart>({
          start(controller) {
            controller.enqueue({ type: 'text-start', id: 't' });
            controller.enqueue({ type: 'text-delta', id: 't', delta: 'In Tro' });
            controller.error(new Error('connection reset'));
          },
        }),
      }),
    });
    const brokenResult = streamText({ model: wrapLanguageModel({ model: broken, middleware: failingMiddleware }), prompt: 'Where?', onError: () => undefined });
    await brokenResult.consumeStream();
    await failingMiddleware.flush();
    expect(broken.doStreamCalls).toHaveLength(1);
    expect(failing.requests.map((r) => r.path.split('/').at(-1))).toEqual(['recall']);
    expect(failing.requests.filter((r) => r.path.endsWith('/observe'))).toHaveLength(0);
  });

  it('reports a failed observation to onObserveError without failing the answer', async () => {
    const { client } = fakeServer();
    const failures: unknown[] = [];
    const model = new MockLanguageModelV3({ doGenerate: async () => answer('Fine.') });
    const failingClient = { ...client, threads: { ...client.threads, observe: async () => Promise.reject(new Error('down')) } };
    const failing = memoryMiddleware({ client: failingClient, agentId: AGENT, threadId: THREAD, onObserveError: (error) => failures.push(error) });
    const { text } = await generateText({ model: wrapLanguageModel({ model, middleware: failing }), prompt: 'Hi' });
    await failing.flush();
    expect(text).toBe('Fine.');
    expect(failures).toEqual([new Error('down')]);
  });
});
