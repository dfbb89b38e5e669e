import { findReadyAgent, findThread } from '../agents/lookup.js';
import type { Caller } from '../auth/caller.js';
import { ServiceError, isServiceError } from '../errors/index.js';
import { createIdempotency, requestFingerprint } from '../idempotency/idempotency.js';
import type { NewTurn, Observations } from '../observations/observations.js';
import type { JobRecord, StoreAreas } from '../ports/store/index.js';
import { DEFAULT_MAX_CONTEXT_CHARS, type RetrievalResult } from '../retrieval/retrieve.js';
import { observeAndEnrichBody, recallBody } from '../schemas/observations.js';
import type { ChatOutput, ChatStreamEventOutput, ObserveAndEnrichOutput, ObserveAndRespondOutput, RecallOutput } from '../schemas/outputs.js';
import type { ServiceContext } from '../service/context.js';
import { parseBody } from '../validation/parse.js';
import { createAnswering } from './answering.js';
import { enrich } from './enrich.js';
import { pushedEvents, releasingOnReturn } from './pushed-events.js';
import { timed, type Stage } from './stages.js';

/** Events of `chat/stream` (DESIGN "Decisions"). */
export type ChatStreamEvent = ChatStreamEventOutput;

/**
 * The answering routes: chat (whole or streamed), observe-and-respond, observe-and-enrich and
 * recall, over the parts in `answering.ts` (admission, retrieval, the model call, citations,
 * recording the turn).
 */
export function createChat(context: ServiceContext, observations: Observations) {
  const answering = createAnswering(context);
  const idempotency = createIdempotency(context);

  return {
    /** `POST .../chat`: retrieve, generate, record, cite: one operation. */
    async chat(caller: Caller, agentId: string, threadId: string, body: unknown, signal?: AbortSignal): Promise<ChatOutput> {
      const opened = await answering.open(caller, agentId, threadId, body);
      const place = await answering.admit(caller, opened.input, 'chat');
      // A caller that goes away gives its place back at once, even while a model ignores the abort
      // (spec "Limits / Concurrent answers"); the answer itself stops when the model honours it.
      signal?.addEventListener('abort', place.releasePlace, { once: true });
      try {
        const response = await answering.answer(caller, opened, 'chat', signal);
        await place.hold.settle(response.message);
        return response;
      } finally {
        signal?.removeEventListener('abort', place.releasePlace);
        await place.release();
      }
    },

    /**
     * `POST .../chat/stream`. Everything that can be refused is refused before the first event
     * (thrown); after that, a failure is an `error` event. The answer place is held until the
     * stream ends or the consumer stops reading.
     */
    async chatStream(caller: Caller, agentId: string, threadId: string, body: unknown, signal?: AbortSignal): Promise<AsyncIterable<ChatStreamEvent>> {
      const opened = await answering.open(caller, agentId, threadId, body);
      const place = await answering.admit(caller, opened.input, 'chat_stream');
      // A caller that goes away gives its place back at once, even while a model ignores the abort
      // (spec "Limits / Concurrent answers"); the answer itself stops when the model honours it.
      signal?.addEventListener('abort', place.releasePlace, { once: true });
      // `return()` gives the place back even before the first event (a generator not yet started skips its `finally`).
      return releasingOnReturn(place.release, (async function* events(): AsyncGenerator<ChatStreamEvent> {
        try {
          yield* pushedEvents<ChatStreamEvent>((push) =>
            answering
              .answer(
                caller,
                opened,
                'chat_stream',
                signal,
                (memoryContext, citations) => push({ event: 'context', data: { memory_context: memoryContext, citations } }),
                (text) => push({ event: 'delta', data: { text } }),
              )
              .then(async (response) => {
                await place.hold.settle(response.message);
                push({ event: 'done', data: response });
              })
              .catch((error: unknown) => {
                const serviceError = isServiceError(error) ? error : new ServiceError('internal_error', 'The answer failed.');
                if (!isServiceError(error)) context.logger.error('chat stream failed', { error: String(error) });
                push({ event: 'error', data: { error: serviceError.message, code: serviceError.code, request_id: caller.requestId } });
              }),
          );
        } finally {
          signal?.removeEventListener('abort', place.releasePlace);
          await place.release();
        }
      })());
    },

    /** `POST .../observe-and-respond`: answers like chat and learns the message and the answer. */
    async observeAndRespond(caller: Caller, agentId: string, threadId: string, body: unknown, signal?: AbortSignal, options: { idempotencyKey?: string | undefined } = {}): Promise<ObserveAndRespondOutput> {
      const opened = await answering.open(caller, agentId, threadId, body);
      const fingerprint = requestFingerprint(['observe_and_respond', opened.agent.id, opened.thread.id, opened.input]);
      type Respond = ObserveAndRespondOutput;
      // With an Idempotency-Key: a retry of the same request replays the first answer, learned once.
      return idempotency.run<Respond>(caller, options.idempotencyKey, fingerprint, { what: 'request', status: 200 }, async (bind) => {
        const place = await answering.admit(caller, opened.input, 'observe_and_respond');
        try {
          const response = await answering.answer(caller, opened, 'observe_and_respond', signal);
          await place.hold.settle(response.message);
          const now = context.nowIso();
          const turns: NewTurn[] = [
            { speaker: 'user', text: opened.input.message, timestamp: now, tags: [] },
            { speaker: 'agent', text: response.message, timestamp: now, tags: [] },
          ];
          let result: Respond | null = null;
          const record = async (store: StoreAreas, job: JobRecord) => {
            result = { ...response, observation_id: job.id };
            if (bind) await bind(store, result);
          };
          // Answering calls run while the agent learns something else: this job queues behind it.
          const job = await observations.enqueue(caller, opened.thread, turns, { kind: 'respond', onlyIfIdle: false, ...(bind ? { within: record } : {}) });
          if (!bind) await record(context.store, job);
          return result!;
        } finally {
          await place.release();
        }
      });
    },

    /** `POST .../observe-and-enrich`: learns the message and returns memory context, no answer. */
    async observeAndEnrich(caller: Caller, agentId: string, threadId: string, body: unknown, options: { idempotencyKey?: string | undefined } = {}): Promise<ObserveAndEnrichOutput> {
      const input = parseBody(observeAndEnrichBody, body);
      const agent = await findReadyAgent(context, caller, agentId);
      const thread = await findThread(context, caller, agent, threadId);
      const fingerprint = requestFingerprint(['observe_and_enrich', agent.id, thread.id, input]);
      return idempotency.run(caller, options.idempotencyKey, fingerprint, { what: 'request', status: 200 }, (bind) => enrich({ context, observations, answering }, caller, agent, thread, input, bind));
    },

    /**
     * `POST /v1/agents/{agent_id}/recall`: the memory context retrieval builds for a query, with
     * its citations, as chat would use it. Nothing is learned, recorded or charged: the query is
     * not an observation (observe-and-enrich is the call that also learns the message).
     */
    async recall(caller: Caller, agentId: string, body: unknown): Promise<RecallOutput> {
      const input = parseBody(recallBody, body);
      const agent = await findReadyAgent(context, caller, agentId);
      const stages: Stage[] = [];
      const retrieval = await timed(stages, 'memory_context', () => answering.recall(agent, input.query, input.max_context_chars));
      const citations = await answering.contextCitations(retrieval);
      return { agent_id: agent.id, memory_context: retrieval.memoryContext, citations, stages };
    },

    /** The retrieval chat uses, for callers (and the evaluation harness) that score it directly. */
    async retrieve(caller: Caller, agentId: string, query: string, maxContextChars = DEFAULT_MAX_CONTEXT_CHARS): Promise<RetrievalResult> {
      const agent = await findReadyAgent(context, caller, agentId);
      return answering.recall(agent, query, maxContextChars);
    },
  };
}

export type Chat = ReturnType<typeof createChat>;
