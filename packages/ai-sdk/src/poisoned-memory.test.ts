// The poisoned-memory suite (issue 33) on the AI SDK middleware: recall answered by an in-process
// service (core, in-memory store) behind a fetch double, the prompt recorded by the AI SDK's mock model.
import { createClient } from '@memory-agents/client';
import { createMemoryService, inMemoryStore, silentLogger } from '@memory-agents/core';
import { describePoisonedMemoryConformance, POISONED_MEMORY_SECRET, type PromptMessage } from '@memory-agents/core/testing';
import { generateText, wrapLanguageModel } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { memoryMiddleware } from './memory-middleware.js';

const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: 1, text: 1, reasoning: undefined } };

/** A V3 prompt as the suite reads it: each message's text parts joined. */
const promptMessages = (prompt: ReadonlyArray<{ role: string; content: unknown }>): PromptMessage[] =>
  prompt.map((message) => ({
    role: message.role,
    content: typeof message.content === 'string' ? message.content : (message.content as { type: string; text?: string }[]).map((part) => part.text ?? '').join('\n'),
  }));

describePoisonedMemoryConformance({
  name: 'AI SDK middleware',
  create: async () => {
    const service = createMemoryService({ store: inMemoryStore(), logger: silentLogger });
    await service.start();
    const organization = await service.admin.createOrganization({ name: 'Poisoned memory' });
    const { key } = await service.admin.createKey({ organizationId: organization.organizationId });
    const caller = () => service.authenticate({ authorization: `Bearer ${key}`, endUser: undefined, secFetchSite: undefined, requestId: `req_${Math.random()}` });
    const agentId = (await service.agents.create({ caller: await caller(), body: { agent_config: { role: `assistant (code ${POISONED_MEMORY_SECRET})`, objective: 'remember' } } })).agent_id;
    await service.idle();
    const threadId = (await service.threads.create({ caller: await caller(), agentId, body: {} })).thread_id;
    // Only recall reaches the service: the middleware's observe is off, the suite learns directly.
    const fetch = async (input: string | URL | Request, init?: RequestInit) => {
      const body = JSON.parse(String(init?.body));
      const recalled = await service.recall({ caller: await caller(), agentId, body });
      return new Response(JSON.stringify(recalled), { status: 200, headers: { 'content-type': 'application/json' } });
    };
    const client = createClient({ baseUrl: 'http://memory.test', apiKey: key, fetch: fetch as typeof globalThis.fetch });
    return {
      async learn({ turns, documents }) {
        await service.observe({ caller: await caller(), agentId, threadId, body: { observations: turns.map((text) => ({ content: [{ type: 'text' as const, text }] })) } });
        await service.idle();
        for (const document of documents) {
          await service.observeFile({ caller: await caller(), agentId, threadId, file: { filename: document.filename, mediaType: 'text/plain', data: new TextEncoder().encode(document.text) }, fields: {} });
          await service.idle();
        }
      },
      async ask(question) {
        const model = new MockLanguageModelV3({ doGenerate: async () => ({ content: [{ type: 'text', text: 'ok' }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] }) });
        const middleware = memoryMiddleware({ client, agentId, threadId, observe: false });
        await generateText({ model: wrapLanguageModel({ model, middleware }), system: 'You are a helpful assistant.', prompt: question });
        return { prompts: model.doGenerateCalls.map((call) => promptMessages(call.prompt)), answer: null };
      },
      cleanup: () => service.stop(),
    };
  },
});
