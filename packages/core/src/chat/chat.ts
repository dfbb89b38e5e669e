import { describeError } from '../service/logger.js';
import { findReadyAgent, findThread } from '../agents/lookup.js';
import { ServiceError, isServiceError } from '../errors/index.js';
import { createIdempotency, requestFingerprint } from '../idempotency/idempotency.js';
import type { MemoryService } from '../memory-service.js';
import type { InsertJob } from '../observations/insert-job.js';
import type { NewTurn } from '../observations/new-job.js';
import { DEFAULT_MAX_CONTEXT_CHARS, type RetrievalResult } from '../retrieval/retrieve.js';
import { observeAndEnrichBody, recallBody } from '../schemas/observations.js';
import type { ChatOutput, ChatStreamEventOutput, ObserveAndEnrichOutput, ObserveAndRespondOutput, RecallOutput } from '../schemas/outputs.js';
import type { ServiceContext } from '../service/context.js';
import type { ChatRequest, ObserveAndEnrichRequest, ObserveAndRespondRequest, RecallRequest, RetrieveRequest } from '../service/requests.js';
import { parseBody } from '../validation/parse.js';
import { createAnswering } from './answering.js';
import { enrich } from './enrich.js';
import { pushedEvents, releasingOnReturn } from './pushed-events.js';
import { timed, type Stage } from './stages.js';

/** Events of `chat/stream` (DESIGN "Decisions"). */

/** The members of `MemoryService` the chat area answers. */
export type ChatOperations = Pick<MemoryService, 'chat' | 'chatStream' | 'observeAndRespond' | 'observeAndEnrich' | 'recall' | 'retrieve'>;

/**
 * The answering routes: chat (whole or streamed), observe-and-respond, observe-and-enrich and
 * recall, over the parts in `answering.ts` (admission, retrieval, the model call, citations,
 * recording the turn).
 */
export function createChat(context: ServiceContext, insertJob: InsertJob) {
  const answering = createAnswering(context);
  const idempotency = createIdempotency(context);

  return {
    /** `POST .../chat`: retrieve, generate, record, cite: one operation. */
    async chat(request: ChatRequest): Promise<ChatOutput> {
      const { caller, abortSignal } = request;
      const opened = await answering.open(request);
      const place = await answering.admit(caller, opened.input, 'chat');
      // A caller that goes away gives its place back at once, even while a model ignores the abort
      // (spec "Limits / Concurrent answers"); the answer itself stops when the model honours it.
      abortSignal?.addEventListener('abort', place.releasePlace, { once: true });
      try {
        const response = await answering.answer({ caller, opened, route: 'chat', abortSignal });
        await place.hold.settle(response.message);
        return response;
      } finally {
        abortSignal?.removeEventListener('abort', place.releasePlace);
        await place.release();
      }
    },

    /**
     * `POST .../chat/stream`. Everything that can be refused is refused before the first event
     * (thrown); after that, a failure is an `error` event. The answer place is held until the
     * stream ends or the consumer stops reading.
     */
    async chatStream(request: ChatRequest): Promise<AsyncIterable<ChatStreamEventOutput>> {
      const { caller, abortSignal } = request;
      const opened = await answering.open(request);
      const place = await answering.admit(caller, opened.input, 'chat_stream');
      // A caller that goes away gives its place back at once, even while a model ignores the abort
      // (spec "Limits / Concurrent answers"); the answer itself stops when the model honours it.
      abortSignal?.addEventListener('abort', place.releasePlace, { once: true });
      // `return()` gives the place back even before the first event (a generator not yet started skips its `finally`).
      return releasingOnReturn(place.release, (async function* events(): AsyncGenerator<ChatStreamEventOutput> {
        try {
          yield* pushedEvents<ChatStreamEventOutput>((push) =>
            answering
              .answer({
                caller,
                opened,
                route: 'chat_stream',
                abortSignal,
                onContext: (memoryContext, citations) => push({ event: 'context', data: { memory_context: memoryContext, citations } }),
                onDelta: (text) => push({ event: 'delta', data: { text } }),
              })
              .then(async (response) => {
                await place.hold.settle(response.message);
                push({ event: 'done', data: response });
              })
              .catch((error: unknown) => {
                const serviceError = isServiceError(error) ? error : new ServiceError('internal_error', 'The answer failed.');
                if (!isServiceError(error)) context.logger.error('chat stream failed', { error: describeError(error) });
                push({ event: 'error', data: { error: serviceError.message, code: serviceError.code, request_id: caller.requestId } });
              }),
          );
        } finally {
          abortSignal?.removeEventListener('abort', place.releasePlace);
          await place.release();
        }
      })());
    },

    /** `POST .../observe-and-respond`: answers like chat and learns the message and the answer. */
    async observeAndRespond(request: ObserveAndRespondRequest): Promise<ObserveAndRespondOutput> {
      const { caller, abortSignal, idempotencyKey } = request;
      const opened = await answering.open(request);
      const fingerprint = requestFingerprint(['observe_and_respond', opened.agent.id, opened.thread.id, opened.input]);
      type Respond = ObserveAndRespondOutput;
      // With an Idempotency-Key: a retry of the same request replays the first answer, learned once.
      return idempotency.run<Respond>({ caller, idempotencyKey, fingerprint, what: 'request', status: 200 }, async (bind) => {
        const place = await answering.admit(caller, opened.input, 'observe_and_respond');
        try {
          const response = await answering.answer({ caller, opened, route: 'observe_and_respond', abortSignal });
          await place.hold.settle(response.message);
          const now = context.nowIso();
          const turns: NewTurn[] = [
            { speaker: 'user', text: opened.input.message, timestamp: now, tags: [] },
            { speaker: 'agent', text: response.message, timestamp: now, tags: [] },
          ];
          // Answering calls run while the agent learns something else: this job queues behind it.
          return await insertJob({
            caller,
            thread: opened.thread,
            turns,
            kind: 'respond',
            onlyIfIdle: false,
            onStored: async (store, job) => {
              const result: Respond = { ...response, observation_id: job.id };
              if (bind) await bind(store, result);
              return result;
            },
          });
        } finally {
          await place.release();
        }
      });
    },

    /** `POST .../observe-and-enrich`: learns the message and returns memory context, no answer. */
    async observeAndEnrich({ caller, agentId, threadId, body, idempotencyKey }: ObserveAndEnrichRequest): Promise<ObserveAndEnrichOutput> {
      const input = parseBody(observeAndEnrichBody, body);
      const agent = await findReadyAgent(context, caller, agentId);
      const thread = await findThread(context, caller, agent, threadId);
      const fingerprint = requestFingerprint(['observe_and_enrich', agent.id, thread.id, input]);
      return idempotency.run({ caller, idempotencyKey, fingerprint, what: 'request', status: 200 }, (bind) =>
        enrich({ context, insertJob, answering, caller, agent, thread, input, bind }),
      );
    },

    /**
     * `POST /v1/agents/{agent_id}/recall`: the memory context retrieval builds for a query, with
     * its citations, as chat would use it. Nothing is learned, recorded or charged: the query is
     * not an observation (observe-and-enrich is the call that also learns the message).
     */
    async recall({ caller, agentId, body }: RecallRequest): Promise<RecallOutput> {
      const input = parseBody(recallBody, body);
      const agent = await findReadyAgent(context, caller, agentId);
      const stages: Stage[] = [];
      const retrieval = await timed(stages, 'memory_context', () => answering.recall(caller, agent, input.query, input.max_context_chars, input.as_of));
      const citations = await answering.contextCitations(retrieval);
      return { agent_id: agent.id, memory_context: retrieval.memoryContext, citations, stages };
    },

    /** The retrieval chat uses, for callers (and the evaluation harness) that score it directly. */
    async retrieve({ caller, agentId, query, maxContextChars = DEFAULT_MAX_CONTEXT_CHARS, asOf }: RetrieveRequest): Promise<RetrievalResult> {
      const agent = await findReadyAgent(context, caller, agentId);
      return answering.recall(caller, agent, query, maxContextChars, asOf);
    },
  } satisfies ChatOperations;
}

export type Chat = ReturnType<typeof createChat>;
