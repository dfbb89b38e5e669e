import { findReadyAgent, findThread } from '../agents/lookup.js';
import { redactForAgent } from '../policy/extraction-policy.js';
import { readableThreadIds } from '../agents/memory-scope.js';
import type { Caller } from '../auth/caller.js';
import type { AnswerHold } from '../credits/index.js';
import { ServiceError, isServiceError } from '../errors/index.js';
import { createImages } from '../images/images.js';
import { activityEntry } from '../logs/activity.js';
import { LanguageModelError, type AnswerContextItem, type GenerateRequest, type ModelMessage } from '../ports/language-model.js';
import type { AgentRecord, ThreadRecord } from '../ports/store/index.js';
import { DEFAULT_MAX_CONTEXT_CHARS, retrieve, sourceLabel, type RetrievalResult } from '../retrieval/retrieve.js';
import { chatBody, type ChatBody, type ChatLearningItem } from '../schemas/observations.js';
import type { ChatOutput, Citation } from '../schemas/outputs.js';
import type { ServiceContext } from '../service/context.js';
import type { ThreadRequest } from '../service/requests.js';
import { parseBody } from '../validation/parse.js';
import { agentSystemPrompt, buildAnswerMessages, parseCitations } from './answer-prompt.js';
import { citationsOf } from './citations.js';
import { queryEmbedder } from './query-embedder.js';
import { timed, type Stage } from './stages.js';
import { describeError } from '../service/logger.js';
import { decayFor, reinforce, withDecay } from '../memories/decay.js';

/** The routes that write an answer (activity log and credit entries name them). */
export type AnswerRoute = 'chat' | 'chat_stream' | 'observe_and_respond';

/** A turn answered: the user's message and the answer, recorded as thread messages. */
type RecordedTurn = { caller: Caller; agent: AgentRecord; thread: ThreadRecord; message: string; answer: string; citations: Citation[]; route: AnswerRoute };

/** One answer to write, streamed (`onContext`, `onDelta`) or not. */
type AnswerCall<Opened> = {
  caller: Caller;
  /** The validated request with its agent, thread and images (`open`). */
  opened: Opened;
  route: AnswerRoute;
  abortSignal?: AbortSignal | undefined;
  /** Called once with the memory context and its citations, before the answer (a stream's `context` event). */
  onContext?: (memoryContext: string, citations: Citation[]) => void;
  /** Called with each piece of the answer; set, the model streams. */
  onDelta?: (text: string) => void;
};

/**
 * What every answering call is made of: admission (answer place and credits), validation and
 * lookups, retrieval, the model call, citations, and recording the turn.
 */
export function createAnswering(context: ServiceContext) {
  const imageStore = createImages(context);

  /**
   * Takes an answer place (429 past 2 per subject / 4 per organization), then charges the
   * answer's credits (402 when they are not covered), both before any work. `release` gives back
   * the place and whatever of the charge was not settled.
   */
  async function admit(caller: Caller, input: ChatBody, route: AnswerRoute) {
    const releasePlace = await context.limiter.acquireAnswer(caller);
    let hold: AnswerHold;
    try {
      hold = await context.credits.holdAnswer(caller, { message: input.message, answerLength: input.answer_length, route });
    } catch (error) {
      await releasePlace();
      throw error;
    }
    return {
      hold,
      /** Gives back only the place (idempotent); `release` also cancels what was not settled. */
      releasePlace,
      async release() {
        await Promise.all([releasePlace(), hold.cancel()]);
      },
    };
  }

  /** Validation and lookups shared by every answering call; throws before any work is done. */
  async function open({ caller, agentId, threadId, body }: ThreadRequest & { body: unknown }) {
    const input = parseBody(chatBody, body);
    const agent = await findReadyAgent(context, caller, agentId);
    const thread = await findThread(context, caller, agent, threadId);
    // Uploaded images (POST /v1/images): 413 over the per-turn limits, 404 for unknown ids.
    const images = await imageStore.forChat(caller, input.images ?? []);
    return { input, agent, thread, images };
  }

  /** Retrieval for `message`; `thread` when the answer is given (recorded, maybe learned) in a thread. */
  async function recall(caller: Caller, agent: AgentRecord, message: string, maxContextChars: number | undefined, asOf?: string, thread?: ThreadRecord): Promise<RetrievalResult> {
    // The memories the caller may draw on: every one, or with `memory_scope: "end_user"` a person's and no person's (issue 42).
    const threadIds = await readableThreadIds(context, caller, agent, 'answer', thread);
    // Full-text only after an embedder change; 503 when a network embedder is down (query-embedder.ts).
    const embedder = await queryEmbedder(context.index, context.embedder);
    // `as_of` (issue 32): what was true then; relative times in the query ("last week") read from it too.
    const at = asOf === undefined ? undefined : new Date(asOf);
    return retrieve(context.index, embedder, {
      agentId: agent.id,
      query: message,
      maxContextChars: maxContextChars ?? DEFAULT_MAX_CONTEXT_CHARS,
      options: context.retrieval,
      ...(at ? { asOf: at.toISOString(), now: at.getTime() } : {}),
      ...(threadIds === undefined ? {} : { threadIds }),
      // Expired memories (issue 42) are gone from every answer at the service clock's instant.
      unexpiredAt: context.nowIso(),
      // Old memories rank lower when the agent says so (issue 42); what was true then has no age.
      ...(at ? {} : withDecay(decayFor(context, agent))),
    });
  }

  function generateRequest({ agent, input, retrieval, abortSignal: signal, images = [] }: {
    agent: AgentRecord;
    input: ChatBody;
    retrieval: RetrievalResult;
    abortSignal: AbortSignal | undefined;
    images?: NonNullable<ModelMessage['images']>;
  }): GenerateRequest {
    const items: AnswerContextItem[] = retrieval.packed.map((item, i) => ({
      number: i + 1,
      text: item.record.text,
      speaker: item.record.speaker,
      occurredAt: item.record.occurredAt,
      label: sourceLabel(item.record),
      ...(item.replacedBy === undefined ? {} : { replacedBy: item.replacedBy }),
    }));
    return {
      // The grounded-answer prompt (numbered items, cite as [n], answer_length as an instruction):
      // a network model answers from `messages` alone; the extractive default reads `task`.
      messages: buildAnswerMessages({ question: input.message, items, answerLength: input.answer_length, systemPrompt: agentSystemPrompt(agent.config), images }),
      task: { kind: 'answer', question: input.message, items, answerLength: input.answer_length },
      ...(signal ? { signal } : {}),
    };
  }

  /**
   * Citations of the items the answer relies on (all packed items when the model names none).
   * `known` holds the citations of every packed item already made (a streamed answer made them
   * for its context event), so no store call is repeated.
   */
  async function citationsFor(retrieval: RetrievalResult, citedItems: number[] | undefined, known?: Citation[]): Promise<Citation[]> {
    const chosen = chosenItems(retrieval, citedItems);
    const made = known ? chosen.map((i) => known[i]!) : await citationsOf(context, chosen.map((i) => retrieval.packed[i]!.record));
    const citations: Citation[] = [];
    const seen = new Set<string>();
    for (const citation of made) {
      const key = `${citation.source_id}|${citation.label}`;
      if (seen.has(key)) continue;
      seen.add(key);
      citations.push(citation);
    }
    return citations;
  }

  async function contextCitations(retrieval: RetrievalResult): Promise<Citation[]> {
    return citationsFor(retrieval, undefined);
  }

  /** Records the turn as thread messages and activity entries; reports unreported failed turns. */
  async function record({ caller, agent, thread, message, answer, citations, route }: RecordedTurn) {
    const now = context.nowIso();
    // Messages and activity entries in one store call (one round trip, stored together).
    await context.store.messages.append({
      messages: [
        // The agent's extraction policy holds for the thread's messages too (issue 44): the answer
        // goes back as it is, what is kept is redacted.
        { threadId: thread.id, agentId: agent.id, speaker: 'user', text: redactForAgent(context, agent.config, message), timestamp: now, sourceIds: [] },
        { threadId: thread.id, agentId: agent.id, speaker: 'agent', text: redactForAgent(context, agent.config, answer), timestamp: now, sourceIds: [...new Set(citations.map((c) => c.source_id))] },
      ],
      logEntries: [
        activityEntry(context, caller, { agentId: agent.id, threadId: thread.id, route, direction: 'user' }),
        activityEntry(context, caller, { agentId: agent.id, threadId: thread.id, route, direction: 'agent' }),
      ],
    });
    return learningItems(thread);
  }

  async function learningItems(thread: ThreadRecord): Promise<ChatLearningItem[]> {
    const records = await context.store.notLearned.takeUnreported({ threadId: thread.id });
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
  async function answer({ caller, opened, route, abortSignal: signal, onContext, onDelta }: AnswerCall<Awaited<ReturnType<typeof open>>>): Promise<ChatOutput> {
    const started = performance.now();
    const { input, agent, thread } = opened;
    const stages: Stage[] = [];
    const retrieval = await timed(stages, 'memory_context', () => recall(caller, agent, input.message, input.max_context_chars, input.as_of, thread));
    // A streamed answer cites from the packed items' citations made for its context event.
    const packedCitations = onContext ? await citationsOf(context, retrieval.packed.map((item) => item.record)) : undefined;
    if (onContext) onContext(retrieval.memoryContext, await citationsFor(retrieval, undefined, packedCitations));
    const request = generateRequest({ agent, input, retrieval, abortSignal: signal, images: opened.images });
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
    const citations = await citationsFor(retrieval, generated.citedItems ?? parseCitations(generated.text, retrieval.packed.length), packedCitations);
    const learning = await timed(stages, 'record', () => record({ caller, agent, thread, message: input.message, answer: generated.text, citations, route }));
    // A memory an answer cites is reinforced against decay (only agents with decay record it).
    // Best effort: the answer is given and recorded; a lost reinforcement only ages a memory sooner.
    await reinforce(context, agent, citedRecords(retrieval, generated.citedItems ?? parseCitations(generated.text, retrieval.packed.length))).catch((error: unknown) =>
      context.logger.warn('citations could not be recorded for decay', { agentId: agent.id, error: describeError(error) }),
    );
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

  return { admit, open, recall, contextCitations, answer };
}

export type Answering = ReturnType<typeof createAnswering>;

/** The packed items an answer relies on (0-based): those it cites, or all when it names none. */
function chosenItems(retrieval: RetrievalResult, citedItems: number[] | undefined): number[] {
  return citedItems === undefined ? retrieval.packed.map((_, i) => i) : citedItems.map((n) => n - 1).filter((i) => retrieval.packed[i] !== undefined);
}

/** The memories behind {@link chosenItems}. */
function citedRecords(retrieval: RetrievalResult, citedItems: number[] | undefined) {
  return chosenItems(retrieval, citedItems).map((i) => retrieval.packed[i]!.record);
}
/** A validated answering request with its agent, thread and images (`Answering.open`). */
export type OpenedAnswer = Awaited<ReturnType<Answering['open']>>;
