/**
 * Memory for a Vercel AI SDK app: `wrapLanguageModel` with `memoryMiddleware` recalls what the
 * agent learned before each call and learns each exchange after it. Two separate calls here: the
 * first tells the model something, the second (a fresh prompt, no chat history) is answered from
 * memory.
 *
 * The model: an OpenAI-compatible API when MEMORY_AGENTS_MODEL_URL and MEMORY_AGENTS_MODEL are set
 * (key in MEMORY_AGENTS_MODEL_API_KEY; the same variables `memory-agents serve` reads), else a
 * scripted model that answers with the memory it was given. The memory: the server at
 * MEMORY_AGENTS_URL with MEMORY_AGENTS_API_KEY (and MEMORY_AGENTS_AGENT, or a new agent), else an
 * in-process server on the in-memory adapters.
 * Run: npx tsx examples/ai-sdk-chat.ts
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import type { LanguageModelV4, LanguageModelV4Middleware, LanguageModelV4Prompt } from '@ai-sdk/provider';
import { memoryMiddleware } from '@memory-agents/ai-sdk';
import { createClient } from '@memory-agents/client';
import { createMemoryService, inMemoryStore } from '@memory-agents/core';
import { createHandler } from '@memory-agents/http';
import { generateText, wrapLanguageModel } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';

type Env = Record<string, string | undefined>;

export async function main(env: Env = process.env): Promise<{ output: string; prompts: LanguageModelV4Prompt[] }> {
  const lines: string[] = [];
  const say = (line: string) => {
    lines.push(line);
    if (import.meta.url === `file://${process.argv[1]}`) console.log(line);
  };
  const memory = await memoryServer(env);
  try {
    const client = createClient({ baseUrl: memory.url, apiKey: memory.key });
    const agentId =
      env.MEMORY_AGENTS_AGENT ??
      (await client.agents.waitUntilReady({ agentId: (await client.agents.create({ agent_config: { role: 'travel assistant', objective: 'remember what the traveller tells us' } })).agent_id })).agent_id;
    const { thread_id: threadId } = await client.threads.create({ agentId, title: 'AI SDK example' });

    const prompts: LanguageModelV4Prompt[] = [];
    const middleware = memoryMiddleware({ client, agentId, threadId, maxContextChars: 2000 });
    // A second middleware records the prompts the model receives (the test reads them).
    const recorder: LanguageModelV4Middleware = { specificationVersion: 'v4', transformParams: async ({ params }) => (prompts.push(params.prompt), params) };
    const model = wrapLanguageModel({ model: languageModel(env), middleware: [middleware, recorder] });

    const first = 'I moved to Lisbon last month, and I only fly with a window seat.';
    say(`user: ${first}`);
    say(`model: ${(await generateText({ model, prompt: first })).text}`);
    // The exchange is learned in the background; a short-lived process waits for it here.
    await middleware.flush();
    await waitUntilLearned(client, agentId, 'Lisbon');

    const second = 'Where did I move to last month?';
    say(`user: ${second}`);
    say(`model: ${(await generateText({ model, system: 'Answer in one sentence.', prompt: second })).text}`);
    await middleware.flush();
    return { output: lines.join('\n'), prompts };
  } finally {
    await memory.close();
  }
}

/** The OpenAI-compatible model when configured, else a scripted one that repeats its memory. */
function languageModel(env: Env): LanguageModelV4 {
  if (env.MEMORY_AGENTS_MODEL_URL && env.MEMORY_AGENTS_MODEL) {
    const provider = createOpenAICompatible({ name: 'openai-compatible', baseURL: env.MEMORY_AGENTS_MODEL_URL, ...(env.MEMORY_AGENTS_MODEL_API_KEY ? { apiKey: env.MEMORY_AGENTS_MODEL_API_KEY } : {}) });
    return provider.chatModel(env.MEMORY_AGENTS_MODEL);
  }
  return new MockLanguageModelV4({
    modelId: 'scripted',
    doGenerate: async ({ prompt }) => {
      // The middleware puts memory in the last user message, as quoted data (`> [1] …` lines).
      const user = prompt.findLast((message) => message.role === 'user');
      const memory = user?.role === 'user' ? user.content.find((part) => part.type === 'text' && part.text.startsWith('Memory:')) : undefined;
      // The first numbered memory item, as the scripted answer.
      const item = memory?.type === 'text' ? /^> (\[1\][^\n]*)/m.exec(memory.text)?.[1] : undefined;
      const text = item ? `From memory ${item}` : 'Noted, thank you.';
      return {
        content: [{ type: 'text', text }],
        finishReason: { unified: 'stop', raw: 'stop' },
        usage: { inputTokens: { total: 0, noCache: 0, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: 0, text: 0, reasoning: undefined } },
        warnings: [],
      };
    },
  });
}

/** The configured server, or one in process (the in-memory adapters, on a loopback port). */
async function memoryServer(env: Env): Promise<{ url: string; key: string; close(): Promise<void> }> {
  if (env.MEMORY_AGENTS_URL && env.MEMORY_AGENTS_API_KEY) return { url: env.MEMORY_AGENTS_URL, key: env.MEMORY_AGENTS_API_KEY, close: async () => undefined };
  const service = createMemoryService({ store: inMemoryStore() });
  await service.start();
  const org = await service.admin.createOrganization({ name: 'Example' });
  const { key } = await service.admin.createKey({ organizationId: org.organizationId });
  const server = http.createServer(createHandler(service));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    key,
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await service.stop();
    },
  };
}

async function waitUntilLearned(client: ReturnType<typeof createClient>, agentId: string, text: string): Promise<void> {
  for (let attempt = 0; attempt < 600; attempt++) {
    if ((await client.agents.recall({ agentId, query: text })).memory_context.includes(text)) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`"${text}" was not learned in 30 s`);
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
