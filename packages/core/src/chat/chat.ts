import { findReadyAgent, findThread } from '../agents/lookup.js';
import type { Caller } from '../auth/caller.js';
import { ServiceError, isServiceError } from '../errors/index.js';
import { billedWords, type AnswerHold } from '../credits/index.js';
import type { z } from 'zod';
import { createIdempotency, requestFingerprint, type BindResponse } from '../idempotency/idempotency.js';
import { activityEntry } from '../logs/activity.js';
import type { NewTurn, Observations } from '../observations/observations.js';
import { LanguageModelError, type AnswerContextItem, type GenerateRequest, type ModelMessage } from '../ports/language-model.js';
import type { AgentRecord, JobRecord, StoreAreas, ThreadRecord } from '../ports/store.js';
import { DEFAULT_MAX_CONTEXT_CHARS, retrieve, sourceLabel, type RetrievalResult } from '../retrieval/retrieve.js';
import { chatBody, observeAndEnrichBody, observeAndEnrichResponse, recallBody, type ChatBody, type ChatLearningItem, type ChatResponseBody, type CitationBody } from '../schemas/observations.js';
import type { ServiceContext } from '../service/context.js';
import { parseBody } from '../validation/parse.js';
import { agentSystemPrompt, buildAnswerMessages, parseCitations } from './answer-prompt.js';
import { citationOf } from './citations.js';
import { queryEmbedder } from './query-embedder.js';
import { createImages } from '../images/images.js';

/** Events of `chat/stream` (DESIGN "Decisions"). */
export type ChatStreamEvent =
  | { event: 'context'; data: { memory_context: string; citations: CitationBody[] } }
  | { event: 'delta'; data: { text: string } }
  | { event: 'done'; data: ChatResponseBody }
  | { event: 'error'; data: { error: string; code: string; request_id: string } };

type Stage = { name: string; duration_ms: number };

/** Times one stage; the durations are whole milliseconds. */
async function timed<T>(stages: Stage[], name: string, work: () => Promise<T>): Promise<T> {
  const start = performance.now();
  try {
    return await work();
  } finally {
    stages.push({ name, duration_ms: Math.max(0, Math.round(performance.now() - start)) });
  }
}

type ObserveAndEnrichInput = z.output<typeof observeAndEnrichBody>;
type EnrichResponse = z.output<typeof observeAndEnrichResponse>;

export function createChat(context: ServiceContext, observations: Observations) {
  const imageStore = createImages(context);
  const idempotency = createIdempotency(context);

  /**
   * Takes an answer place (429 past 2 per subject / 4 per organization), then charges the
   * answer's credits (402 when they are not covered), both before any work. `release` gives back
   * the place and whatever of the charge was not settled.
   */
  async function admit(caller: Caller, input: ChatBody, route: 'chat' | 'chat_stream' | 'observe_and_respond') {
    const releasePlace = await context.limiter.acquireAnswer(caller);
    let hold: AnswerHold;
    try {
      hold = await context.credits.holdAnswer(caller, { message: input.message, answerLength: input.answer_length, route });
    } catch (error) {
      releasePlace();
      throw error;
    }
    return {
      hold,
      /** Gives back only the place (idempotent); `release` also cancels what was not settled. */
      releasePlace,
      async release() {
        releasePlace();
        await hold.cancel();
      },
    };
  }

  /** Validation and lookups shared by every answering call; throws before any work is done. */
  async function open(caller: Caller, agentId: string, threadId: string, body: unknown) {
    const input = parseBody(chatBody, body);
    const agent = await findReadyAgent(context, caller, agentId);
    const thread = await findThread(context, caller, agent, threadId);
    // Uploaded images (POST /v1/images): 413 over the per-turn limits, 404 for unknown ids.
    const images = await imageStore.forChat(caller, input.images ?? []);
    return { input, agent, thread, images };
  }

  async function recall(agent: AgentRecord, message: string, maxContextChars: number | undefined): Promise<RetrievalResult> {
    // Full-text only after an embedder change; 503 when a network embedder is down (query-embedder.ts).
    const embedder = await queryEmbedder(context.index, context.embedder);
    return retrieve(context.index, embedder, { agentId: agent.id, query: message, maxContextChars: maxContextChars ?? DEFAULT_MAX_CONTEXT_CHARS });
  }

  function generateRequest(agent: AgentRecord, input: ChatBody, retrieval: RetrievalResult, signal: AbortSignal | undefined, images: NonNullable<ModelMessage['images']> = []): GenerateRequest {
    const items: AnswerContextItem[] = retrieval.packed.map((item, i) => ({
      number: i + 1,
      text: item.record.text,
      speaker: item.record.speaker,
      occurredAt: item.record.occurredAt,
      label: sourceLabel(item.record),
    }));
    return {
      // The grounded-answer prompt (numbered items, cite as [n], answer_length as an instruction):
      // a network model answers from `messages` alone; the extractive default reads `task`.
      messages: buildAnswerMessages({ question: input.message, items, answerLength: input.answer_length, systemPrompt: agentSystemPrompt(agent.config), images }),
      task: { kind: 'answer', question: input.message, items, answerLength: input.answer_length },
      ...(signal ? { signal } : {}),
    };
  }

  /** Citations of the items the answer relies on (all packed items when the model names none). */
  async function citationsFor(retrieval: RetrievalResult, citedItems: number[] | undefined): Promise<CitationBody[]> {
    const chosen = citedItems === undefined ? retrieval.packed : citedItems.map((n) => retrieval.packed[n - 1]).filter((item) => item !== undefined);
    const citations: CitationBody[] = [];
    const seen = new Set<string>();
    for (const item of chosen) {
      const citation = await citationOf(context, item.record);
      const key = `${citation.source_id}|${citation.label}`;
      if (seen.has(key)) continue;
      seen.add(key);
      citations.push(citation);
    }
    return citations;
  }

  async function contextCitations(retrieval: RetrievalResult): Promise<CitationBody[]> {
    return citationsFor(retrieval, undefined);
  }

  /** Records the turn as thread messages and activity entries; reports unreported failed turns. */
  async function record(caller: Caller, agent: AgentRecord, thread: ThreadRecord, message: string, answer: string, citations: CitationBody[], route: 'chat' | 'chat_stream' | 'observe_and_respond') {
    const now = context.nowIso();
    await context.store.messages.append({
      messages: [
        { threadId: thread.id, agentId: agent.id, speaker: 'user', text: message, timestamp: now, sourceIds: [] },
        { threadId: thread.id, agentId: agent.id, speaker: 'agent', text: answer, timestamp: now, sourceIds: [...new Set(citations.map((c) => c.source_id))] },
      ],
    });
    await context.store.logs.append({
      entries: [
        activityEntry(context, caller, { agentId: agent.id, threadId: thread.id, route, direction: 'user' }),
        activityEntry(context, caller, { agentId: agent.id, threadId: thread.id, route, direction: 'agent' }),
      ],
    });
    return learningItems(thread);
  }

  async function learningItems(thread: ThreadRecord): Promise<ChatLearningItem[]> {
    const records = await context.store.learning.takeUnreported({ threadId: thread.id });
    return records.map((learning) => ({
      request_id: learning.requestId,
      role: 'user',
      status: 'not_learned',
      reason: learning.reason,
      message: learning.message,
      refunded_credits: learning.refundedCredits ?? '0',
      action: 'resend',
    }));
  }

  function modelFailure(error: unknown): never {
    if (isServiceError(error)) throw error;
    if (error instanceof Error && error.name === 'AbortError') throw error;
    const detail = error instanceof LanguageModelError ? ` (${error.kind})` : '';
    throw new ServiceError('answer_model_unavailable', `The model that writes answers could not be reached${detail}; the turn produced no answer.`, { cause: error });
  }

  /** The whole answering operation, streaming or not, while holding an answer place. */
  async function answer(
    caller: Caller,
    opened: Awaited<ReturnType<typeof open>>,
    route: 'chat' | 'chat_stream' | 'observe_and_respond',
    signal: AbortSignal | undefined,
    onContext?: (memoryContext: string, citations: CitationBody[]) => void,
    onDelta?: (text: string) => void,
  ): Promise<ChatResponseBody> {
    const started = performance.now();
    const { input, agent, thread } = opened;
    const stages: Stage[] = [];
    const retrieval = await timed(stages, 'memory_context', () => recall(agent, input.message, input.max_context_chars));
    if (onContext) onContext(retrieval.memoryContext, await contextCitations(retrieval));
    const request = generateRequest(agent, input, retrieval, signal, opened.images);
    const generated = await timed(stages, 'generate', async () => {
      try {
        if (!onDelta) return await context.model.generate(request);
        let text = '';
        for await (const delta of context.model.stream(request)) {
          text += delta;
          onDelta(delta);
        }
        return { text, citedItems: parseCitations(text, retrieval.packed.length) };
      } catch (error) {
        return modelFailure(error);
      }
    });
    // Exactly the items the answer cites: as the model reports them, else its [n] markers.
    const citations = await citationsFor(retrieval, generated.citedItems ?? parseCitations(generated.text, retrieval.packed.length));
    const learning = await timed(stages, 'record', () => record(caller, agent, thread, input.message, generated.text, citations, route));
    return {
      agent_id: agent.id,
      thread_id: thread.id,
      turn_id: input.turn_id,
      message: generated.text,
      memory_context: retrieval.memoryContext,
      model: context.model.id,
      duration_ms: Math.max(0, Math.round(performance.now() - started)),
      stages,
      citations,
      learning,
    };
  }

  /** `observe-and-enrich` after validation: learns the message, returns memory context, no answer. */
  async function enrich(caller: Caller, agent: AgentRecord, thread: ThreadRecord, input: ObserveAndEnrichInput, bind: BindResponse<EnrichResponse> | null): Promise<EnrichResponse> {
    // No answer is written: the message is charged when its job reads it; refuse now if it cannot be.
    const release = await context.limiter.acquireAnswer(caller);
    try {
      await context.credits.requireFunds(caller.organizationId, billedWords(input.message));
      const stages: Stage[] = [];
      const retrieval = await timed(stages, 'memory_context', () => recall(agent, input.message, input.max_context_chars));
      const citations = await contextCitations(retrieval);
      let result: EnrichResponse | null = null;
      const recordStart = performance.now();
      const record = async (store: StoreAreas, job: JobRecord) => {
        await store.logs.append({ entries: [activityEntry(context, caller, { agentId: agent.id, threadId: thread.id, route: 'observe_and_enrich' })] });
        // The `record` stage ends here, so a replay of the recorded body equals this answer.
        stages.push({ name: 'record', duration_ms: Math.max(0, Math.round(performance.now() - recordStart)) });
        result = {
          agent_id: agent.id,
          thread_id: thread.id,
          turn_id: input.turn_id,
          memory_context: retrieval.memoryContext,
          citations,
          stages,
          observation_id: job.id,
        };
        if (bind) await bind(store, result);
      };
      const job = await observations.enqueue(caller, thread, [{ speaker: 'user', text: input.message, timestamp: context.nowIso(), tags: [] }], {
        kind: 'respond',
        onlyIfIdle: false,
        ...(bind ? { within: record } : {}),
      });
      if (!bind) await record(context.store, job);
      return result!;
    } finally {
      release();
    }
  }

  return {
    /** `POST .../chat`: retrieve, generate, record, cite: one operation. */
    async chat(caller: Caller, agentId: string, threadId: string, body: unknown, signal?: AbortSignal): Promise<ChatResponseBody> {
      const opened = await open(caller, agentId, threadId, body);
      const place = await admit(caller, opened.input, 'chat');
      // A caller that goes away gives its place back at once, even while a model ignores the abort
      // (spec "Limits / Concurrent answers"); the answer itself stops when the model honours it.
      signal?.addEventListener('abort', place.releasePlace, { once: true });
      try {
        const response = await answer(caller, opened, 'chat', signal);
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
      const opened = await open(caller, agentId, threadId, body);
      const place = await admit(caller, opened.input, 'chat_stream');
      // A caller that goes away gives its place back at once, even while a model ignores the abort
      // (spec "Limits / Concurrent answers"); the answer itself stops when the model honours it.
      signal?.addEventListener('abort', place.releasePlace, { once: true });
      // `return()` gives the place back even before the first event (a generator not yet started skips its `finally`).
      return releasingOnReturn(place.release, (async function* events(): AsyncGenerator<ChatStreamEvent> {
        const queue: ChatStreamEvent[] = [];
        let wake: (() => void) | null = null;
        let finished = false;
        const push = (event: ChatStreamEvent) => {
          queue.push(event);
          wake?.();
        };
        const work = answer(
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
          })
          .finally(() => {
            finished = true;
            wake?.();
          });
        try {
          for (;;) {
            while (queue.length > 0) yield queue.shift()!;
            if (finished) break;
            await new Promise<void>((resolve) => {
              wake = resolve;
            });
            wake = null;
          }
          await work;
        } finally {
          signal?.removeEventListener('abort', place.releasePlace);
          await place.release();
        }
      })());
    },

    /** `POST .../observe-and-respond`: answers like chat and learns the message and the answer. */
    async observeAndRespond(caller: Caller, agentId: string, threadId: string, body: unknown, signal?: AbortSignal, options: { idempotencyKey?: string | undefined } = {}) {
      const opened = await open(caller, agentId, threadId, body);
      const fingerprint = requestFingerprint(['observe_and_respond', opened.agent.id, opened.thread.id, opened.input]);
      type Respond = Awaited<ReturnType<typeof answer>> & { observation_id: string };
      // With an Idempotency-Key: a retry of the same request replays the first answer, learned once.
      return idempotency.run<Respond>(caller, options.idempotencyKey, fingerprint, { what: 'request', status: 200 }, async (bind) => {
        const place = await admit(caller, opened.input, 'observe_and_respond');
        try {
          const response = await answer(caller, opened, 'observe_and_respond', signal);
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
    async observeAndEnrich(caller: Caller, agentId: string, threadId: string, body: unknown, options: { idempotencyKey?: string | undefined } = {}) {
      const input = parseBody(observeAndEnrichBody, body);
      const agent = await findReadyAgent(context, caller, agentId);
      const thread = await findThread(context, caller, agent, threadId);
      const fingerprint = requestFingerprint(['observe_and_enrich', agent.id, thread.id, input]);
      return idempotency.run(caller, options.idempotencyKey, fingerprint, { what: 'request', status: 200 }, (bind) => enrich(caller, agent, thread, input, bind));
    },

    /**
     * `POST /v1/agents/{agent_id}/recall`: the memory context retrieval builds for a query, with
     * its citations, as chat would use it. Nothing is learned, recorded or charged: the query is
     * not an observation (observe-and-enrich is the call that also learns the message).
     */
    async recall(caller: Caller, agentId: string, body: unknown) {
      const input = parseBody(recallBody, body);
      const agent = await findReadyAgent(context, caller, agentId);
      const stages: Stage[] = [];
      const retrieval = await timed(stages, 'memory_context', () => recall(agent, input.query, input.max_context_chars));
      const citations = await contextCitations(retrieval);
      return { agent_id: agent.id, memory_context: retrieval.memoryContext, citations, stages };
    },

    /** The retrieval chat uses, for callers (and the evaluation harness) that score it directly. */
    async retrieve(caller: Caller, agentId: string, query: string, maxContextChars = DEFAULT_MAX_CONTEXT_CHARS): Promise<RetrievalResult> {
      const agent = await findReadyAgent(context, caller, agentId);
      return recall(agent, query, maxContextChars);
    },
  };
}

/** Runs `release` (idempotent) when the consumer stops the generator, started or not. */
function releasingOnReturn<T>(release: () => Promise<void>, generator: AsyncGenerator<T>): AsyncGenerator<T> {
  const original = generator.return.bind(generator);
  generator.return = async (value) => {
    try {
      return await original(value);
    } finally {
      await release();
    }
  };
  return generator;
}

export type Chat = ReturnType<typeof createChat>;
