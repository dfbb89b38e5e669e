import type { LanguageModelV3GenerateResult, LanguageModelV3StreamPart } from '@ai-sdk/provider';
import { memoryMiddleware, memoryTools } from '@memory-agents/ai-sdk';
import { createClient, type MemoryAgentsClient } from '@memory-agents/client';
import { generateText, simulateReadableStream, stepCountIs, streamText, wrapLanguageModel } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../support/client.js';
import { removeDataDir, startServerProcess, type ServerProcess } from '../support/server.js';

// @memory-agents/ai-sdk against the built CLI server, with the AI SDK's own mock language models.
let server: ServerProcess;
let client: MemoryAgentsClient;
let agentId: string;
let threadId: string;

const usage = { inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: 5, text: 5, reasoning: undefined } };
const answer = (text: string): LanguageModelV3GenerateResult => ({ content: [{ type: 'text', text }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] });
const systemText = (prompt: { role: string; content: unknown }[]) => prompt.filter((m) => m.role === 'system').map((m) => String(m.content)).join('\n');
/** The text parts of the user messages (where the middleware puts the fenced memory). */
const userText = (prompt: { role: string; content: unknown }[]) =>
  prompt.filter((m) => m.role === 'user').flatMap((m) => (m.content as { type: string; text?: string }[]).map((part) => part.text ?? '')).join('\n');

/** Resolves once recall finds `text` in memory (the exchange was learned). */
const learned = (text: string) => eventually(async () => (await client.agents.recall({ agentId, query: text })).memory_context.includes(text), `"${text}" to be learned`);

beforeAll(async () => {
  server = await startServerProcess();
  client = createClient({ baseUrl: server.url, apiKey: server.key! });
  agentId = (await client.agents.waitUntilReady({ agentId: (await client.agents.create({ agent_config: { role: 'assistant', objective: 'remember what users say' } })).agent_id, timeoutMs: 60_000 })).agent_id;
  threadId = (await client.threads.create({ agentId, title: 'AI SDK' })).thread_id;
  const seeded = await client.threads.observe({ agentId, threadId, observations: [{ content: [{ type: 'text', text: 'My sister Ingrid lives in Tromsø and works as a marine biologist.' }] }] });
  await client.waitForObservation({ agentId, threadId, observationId: seeded.observation_id, timeoutMs: 60_000 });
});
afterAll(async () => {
  await server.stop();
  await removeDataDir(server.dataDir);
});

describe('memoryMiddleware', () => {
  it('generateText: the model receives the remembered fact with its sources, and the exchange is learned afterwards', async () => {
    const model = new MockLanguageModelV3({ doGenerate: async () => answer('Ingrid lives in Tromsø; she keeps a cormorant called Bartholomew.') });
    const middleware = memoryMiddleware({ baseUrl: server.url, apiKey: server.key!, agentId, threadId });
    const { text } = await generateText({ model: wrapLanguageModel({ model, middleware }), system: 'You are helpful.', prompt: 'Where does my sister Ingrid live?' });
    expect(text).toContain('Bartholomew');

    const prompt = model.doGenerateCalls[0]!.prompt;
    expect(prompt[0]).toEqual({ role: 'system', content: 'You are helpful.' });
    expect(prompt[1]!.role).toBe('system');
    expect(systemText(prompt)).not.toContain('Tromsø');
    expect(userText(prompt)).toContain('Tromsø');
    expect(userText(prompt)).toMatch(/Sources of these items:\n> \[S1\] /);
    expect(prompt.at(-1)!.role).toBe('user');

    await middleware.flush();
    await learned('Bartholomew');
    // The user turn was learned too.
    await learned('Where does my sister Ingrid live?');
  });

  it('streamText: memory in the prompt, the stream unchanged, and the exchange observed when the stream finishes', async () => {
    const chunks: LanguageModelV3StreamPart[] = [
      { type: 'stream-start', warnings: [] },
      { type: 'text-start', id: 't' },
      { type: 'text-delta', id: 't', delta: 'She works as a marine biologist, ' },
      { type: 'text-delta', id: 't', delta: 'mostly on the Lofoten kelp forests.' },
      { type: 'text-end', id: 't' },
      { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage },
    ];
    const model = new MockLanguageModelV3({ doStream: async () => ({ stream: simulateReadableStream({ chunks }) }) });
    const middleware = memoryMiddleware({ client, agentId, threadId });
    const result = streamText({ model: wrapLanguageModel({ model, middleware }), prompt: 'What does Ingrid work as?' });
    let streamed = '';
    for await (const delta of result.textStream) streamed += delta;
    expect(streamed).toBe('She works as a marine biologist, mostly on the Lofoten kelp forests.');
    expect(userText(model.doStreamCalls[0]!.prompt)).toContain('marine biologist');

    await middleware.flush();
    await learned('Lofoten kelp forests');
  });

  it('observe: false reads memory and learns nothing; a prompt without memory on the topic is passed unchanged', async () => {
    const model = new MockLanguageModelV3({ doGenerate: async () => answer('The password is zebra-quokka-1987.') });
    const middleware = memoryMiddleware({ client, agentId, threadId, observe: false, maxContextChars: 200 });
    await generateText({ model: wrapLanguageModel({ model, middleware }), prompt: 'Where does Ingrid live?' });
    expect(userText(model.doGenerateCalls[0]!.prompt).length).toBeLessThan(1200);
    expect(userText(model.doGenerateCalls[0]!.prompt)).toContain('Tromsø');
    await middleware.flush();
    // Give a (wrong) observation time to be learned, then check nothing was.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect((await client.agents.recall({ agentId, query: 'zebra-quokka-1987 password' })).memory_context).not.toContain('zebra-quokka');

    const empty = await client.agents.waitUntilReady({ agentId: (await client.agents.create({ agent_config: { role: 'r', objective: 'o' } })).agent_id, timeoutMs: 60_000 });
    const plain = new MockLanguageModelV3({ doGenerate: async () => answer('Hello.') });
    await generateText({ model: wrapLanguageModel({ model: plain, middleware: memoryMiddleware({ client, agentId: empty.agent_id, observe: false }) }), prompt: 'Hi' });
    expect(plain.doGenerateCalls[0]!.prompt.filter((m) => m.role === 'system')).toEqual([]);
  });

  it('a refusal of the service fails the call with its code (unknown agent)', async () => {
    const model = new MockLanguageModelV3({ doGenerate: async () => answer('never') });
    const middleware = memoryMiddleware({ client, agentId: 'agent_00000000000000000000000000', threadId });
    await expect(generateText({ model: wrapLanguageModel({ model, middleware }), prompt: 'Hi' })).rejects.toMatchObject({ code: 'agent_not_found' });
    expect(model.doGenerateCalls).toHaveLength(0);
  });
});

describe('memoryTools', () => {
  it('remember and recall run as AI SDK tools in a multi-step call', async () => {
    const tools = memoryTools({ client, agentId, threadId });
    let step = 0;
    const model = new MockLanguageModelV3({
      doGenerate: async () => {
        step++;
        if (step === 1) {
          return {
            content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'remember', input: JSON.stringify({ text: 'I always book window seat 14A on the night train to Narvik.' }) }],
            finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
            usage,
            warnings: [],
          };
        }
        if (step === 2) {
          return {
            content: [{ type: 'tool-call', toolCallId: 'c2', toolName: 'recall', input: JSON.stringify({ query: 'Which seat on the night train?' }) }],
            finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
            usage,
            warnings: [],
          };
        }
        return answer('Seat 14A.');
      },
    });
    const result = await generateText({ model, tools, stopWhen: stepCountIs(4), prompt: 'Remember my seat, then tell me which it is.' });
    expect(result.text).toBe('Seat 14A.');
    const outputs = result.steps.flatMap((s) => s.toolResults).map((r) => ({ tool: r.toolName, output: r.output as Record<string, unknown> }));
    expect(outputs[0]).toMatchObject({ tool: 'remember', output: { status: 'committed', thread_id: threadId, observation_id: expect.stringMatching(/^obs_/) } });
    expect(outputs[1]!.tool).toBe('recall');
    expect(String(outputs[1]!.output.memory_context)).toContain('14A');
    expect((outputs[1]!.output.citations as unknown[]).length).toBeGreaterThan(0);
  });
});
