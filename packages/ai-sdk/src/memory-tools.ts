import { tool } from 'ai';
import { z } from 'zod';
import { memoryTarget, type MemoryTarget } from './memory-client.js';

/** Options of `memoryTools`. */
export type MemoryToolsOptions = MemoryTarget & {
  /** How long `remember` waits for the turn to be learned before answering "still learning". @default 30000 */
  waitTimeoutMs?: number;
};

/**
 * AI SDK tools over an agent's memory, for `generateText({ tools })` and `streamText({ tools })`:
 * `remember` (observe one turn and wait until it is learned) and `recall` (the memory context
 * and sources for a query; nothing is learned). Refusals of the service are thrown as
 * `MemoryAgentsError`, which the AI SDK reports to the model as a tool error.
 *
 * @example
 * const tools = memoryTools({ baseUrl, apiKey, agentId, threadId });
 * await generateText({ model, tools, stopWhen: stepCountIs(3), prompt: 'Remember that I prefer window seats.' });
 */
export function memoryTools(options: MemoryToolsOptions) {
  const target = memoryTarget(options);
  const waitTimeoutMs = options.waitTimeoutMs ?? 30_000;
  return {
    remember: tool({
      description:
        'Store one fact or turn of the conversation in long-term memory (a preference, a plan, something the user said). ' +
        'Waits until it is learned and returns the observation id and status ("committed" once learned).',
      inputSchema: z.object({
        text: z.string().min(1).max(100_000).describe('What to remember, as said or as a short statement of fact.'),
        speaker: z.string().min(1).max(200).optional().describe('Who said it, e.g. a person\'s name. Defaults to "user".'),
        timestamp: z.string().datetime({ offset: true }).optional().describe('When it was said (ISO 8601). Defaults to now.'),
      }),
      execute: async ({ text, speaker, timestamp }, { abortSignal }) => {
        const threadId = await target.thread();
        const signal = abortSignal ? { signal: abortSignal } : {};
        const accepted = await target.client.threads.observe({
          agentId: options.agentId,
          threadId,
          observations: [{ content: [{ type: 'text', text }], ...(speaker ? { speaker } : {}), ...(timestamp ? { timestamp } : {}) }],
          ...target.request,
          ...signal,
          idempotencyKey: globalThis.crypto.randomUUID(),
          retries: { max: 20, maxDelayMs: 2_000 },
        });
        let status: string;
        try {
          status = (await target.client.waitForObservation({ agentId: options.agentId, threadId, observationId: accepted.observation_id, ...target.request, ...signal, timeoutMs: waitTimeoutMs })).status;
        } catch (error) {
          if (abortSignal?.aborted || !(error instanceof Error) || !error.message.startsWith('Timed out')) throw error;
          status = (await target.client.threads.observationStatus({ agentId: options.agentId, threadId, observationId: accepted.observation_id, ...target.request })).status;
        }
        return { observation_id: accepted.observation_id, thread_id: threadId, status };
      },
    }),
    recall: tool({
      description:
        'Look up what long-term memory holds about a query: returns the memory context (the most relevant remembered turns and ' +
        'document passages, numbered) and their sources. Nothing is stored.',
      inputSchema: z.object({
        query: z.string().min(1).max(2000).describe('What to look up, e.g. a question or a topic.'),
      }),
      execute: async ({ query }, { abortSignal }) => {
        const recalled = await target.client.agents.recall({
          agentId: options.agentId,
          query,
          ...(options.maxContextChars === undefined ? {} : { max_context_chars: options.maxContextChars }),
          ...target.request,
          ...(abortSignal ? { signal: abortSignal } : {}),
        });
        return { memory_context: recalled.memory_context, citations: recalled.citations.map(({ label, href, source_id }) => ({ label, href, source_id })) };
      },
    }),
  };
}
