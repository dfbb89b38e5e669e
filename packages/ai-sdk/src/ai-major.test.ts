import { generateText, simulateReadableStream, streamText, wrapLanguageModel } from 'ai';
import * as aiTest from 'ai/test';
import { createClient } from '@memory-agents/client';
import { describe, expect, it } from 'vitest';
import { memoryMiddleware } from './memory-middleware.js';

// This file runs twice (vitest.config.ts): with `ai` 6 and, in the project `ai-sdk-v7`, with `ai` 7
// (AI_SDK_MAJOR=7). It proves which major is loaded, and on ai 7 drives the middleware with ai 7's own
// mock model (spec V4); the other test files of this package and test/ai-sdk run on both majors too.
const major = process.env.AI_SDK_MAJOR === '7' ? 7 : 6;
const AGENT = 'agent_01J00000000000000000000000';
const THREAD = 'thread_01J00000000000000000000000';
const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: 1, text: 1, reasoning: undefined } };

function fakeServer() {
  const requests: { path: string; body: any }[] = [];
  const fetch = async (input: string | URL | Request, init?: RequestInit) => {
    const url = new URL(String(input));
    requests.push({ path: url.pathname, body: typeof init?.body === 'string' ? JSON.parse(init.body) : undefined });
    const json = (status: number, value: unknown) => new Response(JSON.stringify(value), { status, headers: { 'content-type': 'application/json' } });
    if (url.pathname.endsWith('/recall')) {
      return json(200, { agent_id: AGENT, memory_context: '[1] (2024-05-08, user) Ingrid lives in Tromsø.', citations: [], stages: [] });
    }
    if (url.pathname.endsWith('/observe')) return json(202, { agent_id: AGENT, thread_id: THREAD, observation_id: 'obs_01J00000000000000000000000', accepted: true });
    return json(404, { error: 'no', code: 'not_found' });
  };
  return { client: createClient({ baseUrl: 'http://memory.test', apiKey: 'sp_k_x', fetch: fetch as typeof globalThis.fetch }), requests };
}

describe(`ai ${major}`, () => {
  it(`the test run loaded ai ${major} (ai/test ${major === 7 ? 'has' : 'has no'} MockLanguageModelV4)`, () => {
    expect('MockLanguageModelV4' in aiTest).toBe(major === 7);
  });

  it.runIf(major === 7)('ai 7: the middleware recalls and observes around a spec V4 model (generate and stream)', async () => {
    const MockV4 = (aiTest as any).MockLanguageModelV4;
    const generate = fakeServer();
    const model = new MockV4({ doGenerate: async () => ({ content: [{ type: 'text', text: 'In Tromsø.' }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] }) });
    const middleware = memoryMiddleware({ client: generate.client, agentId: AGENT, threadId: THREAD });
    const result = await generateText({ model: wrapLanguageModel({ model, middleware }), system: 'Be brief.', prompt: 'Where does Ingrid live?' });
    await middleware.flush();
    expect(result.text).toBe('In Tromsø.');
    const prompt = model.doGenerateCalls[0].prompt;
    expect(prompt.map((m: any) => m.role)).toEqual(['system', 'system', 'user']);
    expect(JSON.stringify(prompt[2].content)).toContain('Ingrid lives in Tromsø.');
    expect(prompt[1].content).not.toContain('Tromsø');
    expect(generate.requests.filter((r) => r.path.endsWith('/observe')).flatMap((r) => r.body.observations.map((o: any) => o.content[0].text))).toEqual(['Where does Ingrid live?', 'In Tromsø.']);

    const stream = fakeServer();
    const streamModel = new MockV4({
      doStream: async () => ({
        stream: simulateReadableStream({
          chunks: [
            { type: 'text-start', id: 't' },
            { type: 'text-delta', id: 't', delta: 'In ' },
            { type: 'text-delta', id: 't', delta: 'Tromsø.' },
            { type: 'text-end', id: 't' },
            { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage },
          ],
        }),
      }),
    });
    const streamMiddleware = memoryMiddleware({ client: stream.client, agentId: AGENT, threadId: THREAD });
    const streamed = streamText({ model: wrapLanguageModel({ model: streamModel, middleware: streamMiddleware }), prompt: 'Where does Ingrid live?' });
    expect(await streamed.text).toBe('In Tromsø.');
    await streamMiddleware.flush();
    expect(JSON.stringify(streamModel.doStreamCalls[0].prompt.at(-1).content)).toContain('Ingrid lives in Tromsø.');
    expect(stream.requests.filter((r) => r.path.endsWith('/observe')).flatMap((r) => r.body.observations.map((o: any) => o.content[0].text))).toEqual(['Where does Ingrid live?', 'In Tromsø.']);
  });
});
