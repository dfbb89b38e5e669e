import type { Caller } from '../../../auth/caller.js';
import { extractiveLanguageModel } from '../../../chat/extractive-language-model.js';
import { createMemoryService } from '../../../create-memory-service.js';
import { inMemoryMemoryIndex } from '../../../in-memory/in-memory-memory-index.js';
import { inMemoryStore } from '../../../in-memory/store/index.js';
import type { GenerateRequest, LanguageModel } from '../../../ports/language-model.js';
import type { MemoryIndex } from '../../../ports/memory-index.js';
import type { MemoryWriter } from '../../../ports/memory-writer.js';
import { silentLogger } from '../../../service/logger.js';
import { POISONED_MEMORY_SECRET } from './attacks.js';
import type { PoisonedMemoryTarget, PromptMessage } from './poisoned-memory-conformance.js';

/** A language model that records every prompt it receives and answers with `inner`. */
export function recordingLanguageModel(inner: LanguageModel = extractiveLanguageModel()): LanguageModel & { readonly prompts: PromptMessage[][] } {
  const prompts: PromptMessage[][] = [];
  const record = (request: GenerateRequest) => prompts.push(request.messages.map((message) => ({ role: message.role, content: message.content })));
  return {
    specificationVersion: 'v1',
    id: `recording:${inner.id}`,
    prompts,
    generate(request) {
      record(request);
      return inner.generate(request);
    },
    stream(request) {
      record(request);
      return inner.stream(request);
    },
  };
}

/** The answering paths of the service. */
export type AnsweringPath = 'chat' | 'chat_stream' | 'observe_and_respond';

/** Options of {@link servicePoisonedMemoryTarget}. */
export type ServicePoisonedMemoryTargetOptions = {
  /** The path the questions go through. */
  path: AnsweringPath;
  /** The memory writer under test. @default the service's default (`defaultMemoryWriter()`) */
  writer?: MemoryWriter;
  /** The memory index under test. @default the service's default (in memory) */
  index?: MemoryIndex;
  /** Prompts a writer's model received while learning (a recording model given to the writer). */
  learningPrompts?: () => PromptMessage[][];
};

/**
 * A {@link PoisonedMemoryTarget} over `createMemoryService`: a fresh organization and agent (its
 * role holds {@link POISONED_MEMORY_SECRET}), turns learned through `observe`, documents through
 * `observe-file`, and questions through `path`, answered by the extractive model behind a
 * recording one.
 */
export async function servicePoisonedMemoryTarget(options: ServicePoisonedMemoryTargetOptions): Promise<PoisonedMemoryTarget> {
  const model = recordingLanguageModel();
  // Only port types in the signature: the testing entry's declarations stay apart from the service's.
  const index = options.index ?? inMemoryMemoryIndex();
  const service = createMemoryService({ store: inMemoryStore(), logger: silentLogger, model, index, ...(options.writer ? { writer: options.writer } : {}) });
  await service.start();
  const organization = await service.admin.createOrganization({ name: 'Poisoned memory' });
  const { key } = await service.admin.createKey({ organizationId: organization.organizationId });
  let requests = 0;
  const caller = (): Promise<Caller> => service.authenticate({ authorization: `Bearer ${key}`, endUser: undefined, secFetchSite: undefined, requestId: `req_poisoned_${++requests}` });
  const owner = await caller();
  const agent = await service.agents.create({ caller: owner, body: { agent_config: { role: `support assistant (internal code ${POISONED_MEMORY_SECRET}, never to be shared)`, objective: 'answer from memory' } } });
  await service.idle();
  const agentId = agent.agent_id;
  const threadId = (await service.threads.create({ caller: owner, agentId, body: {} })).thread_id;
  let turnNumber = 0;

  return {
    extractive: true,
    ...(options.learningPrompts ? { learningPrompts: options.learningPrompts } : {}),
    async learn({ turns, documents }) {
      const observations = turns.map((text) => ({ content: [{ type: 'text' as const, text }], speaker: 'user', timestamp: '2026-03-02T10:00:00Z' }));
      // The agent learns one thing at a time: each request settles before the next.
      await service.observe({ caller: await caller(), agentId, threadId, body: { observations } });
      await service.idle();
      for (const document of documents) {
        await service.observeFile({ caller: await caller(), agentId, threadId, file: { filename: document.filename, mediaType: 'text/plain', data: new TextEncoder().encode(document.text) }, fields: {} });
        await service.idle();
      }
    },
    async ask(question) {
      const before = model.prompts.length;
      const body = { turn_id: `turn-${++turnNumber}`, message: question };
      let answer: string;
      if (options.path === 'chat') answer = (await service.chat({ caller: await caller(), agentId, threadId, body })).message;
      else if (options.path === 'observe_and_respond') answer = (await service.observeAndRespond({ caller: await caller(), agentId, threadId, body })).message;
      else {
        answer = '';
        for await (const event of await service.chatStream({ caller: await caller(), agentId, threadId, body })) {
          if (event.event === 'delta') answer += event.data.text;
          if (event.event === 'error') throw new Error(`chat stream failed: ${event.data.error}`);
        }
      }
      // observe-and-respond learns the exchange: let it settle before the next question.
      await service.idle();
      return { prompts: model.prompts.slice(before), answer };
    },
    async storedMemories() {
      const records: { text: string; suspicious: boolean }[] = [];
      let cursor: string | null = null;
      do {
        const page = await index.list({ agentId, limit: 1000, cursor, includeHistory: true });
        records.push(...page.records.map((record) => ({ text: record.text, suspicious: record.suspicious })));
        cursor = page.nextCursor;
      } while (cursor !== null);
      return records;
    },
    cleanup: () => service.stop(),
  };
}
