import { z } from 'zod';
import { isInstructionLike, type LanguageModel, type MemoryWriter } from '@memory-agents/core';
import { sumModelUsage } from '@memory-agents/core/adapter';
import type {
  DraftRef,
  MemoryDraft,
  MemoryHitRecord,
  MemoryWriteRequest,
  MemoryWriteResult,
  ModelMessage,
  ModelUsage,
  Supersession,
  TurnOutcome,
  WriterTurn,
} from '@memory-agents/core/adapter';
import { abortError, isAbortError } from './abort.js';
import { parseJsonReply, ReplyParseError } from './parse-json-reply.js';
import { extractionMessages, reconciliationMessages, repairMessages, type ReconcileCandidate } from './writer-prompts.js';

const optionsSchema = z.object({
  model: z.custom<LanguageModel>((value) => typeof value === 'object' && value !== null && typeof (value as LanguageModel).generate === 'function', {
    message: 'model must be a LanguageModel',
  }),
  batchSize: z.number().int().min(1).max(64).default(8),
  maxFactsPerTurn: z.number().int().min(1).max(100).default(20),
  similarPerFact: z.number().int().min(0).max(20).default(5),
  maxCandidates: z.number().int().min(0).max(200).default(40),
  documentWriter: z
    .custom<MemoryWriter>((value) => typeof value === 'object' && value !== null && typeof (value as MemoryWriter).write === 'function', {
      message: 'documentWriter must be a MemoryWriter',
    })
    .optional(),
});

/** Options of {@link llmMemoryWriter}. */
export type LlmMemoryWriterOptions = {
  /** The model that extracts and reconciles facts (any `LanguageModel`, e.g. `openaiCompatibleLanguageModel`). */
  model: LanguageModel;
  /** Turns sent to the model in one extraction call. @default 8 */
  batchSize?: number;
  /** Facts kept per turn; the model is told the same limit. @default 20 */
  maxFactsPerTurn?: number;
  /** Similar existing memories fetched per fact for reconciliation (`searchSimilar(fact, n)`); 0 turns reconciliation off. @default 5 */
  similarPerFact?: number;
  /** Distinct existing memories shown in one reconciliation call, to bound the prompt. @default 40 */
  maxCandidates?: number;
  /**
   * Writes the turns that are pieces of an uploaded document (`source.kind === 'document'`)
   * instead of the model, e.g. core's `defaultMemoryWriter()`: pieces stay verbatim, so their
   * citations verify against the stored file, and a 2,000-piece upload costs no model calls.
   * @default none (the model extracts facts from document pieces too)
   */
  documentWriter?: MemoryWriter;
};

/** Learning reasons (spec, ObservationLearning) for each `LanguageModelError` kind. */
/** A later turn of a request whose earlier turn failed (port "MemoryWriter", `reconciles`). */
const EARLIER_TURN_FAILED = {
  reason: 'earlier_turn_failed',
  message: 'An earlier turn of this request was not learned, so this one was not written either (memories are reconciled in order).',
} as const;

const REASONS = {
  timeout: { reason: 'generation_timeout', message: 'The language model timed out while writing memories from this turn.' },
  unavailable: { reason: 'model_unavailable', message: 'The language model could not be reached while writing memories from this turn.' },
  unparseable: { reason: 'generation_unparseable', message: 'The language model answered in a form that could not be read as memories, also after one retry.' },
  failed: { reason: 'generation_failed', message: 'The language model failed while writing memories from this turn.' },
} as const;

type Failure = (typeof REASONS)[keyof typeof REASONS];

/** Raised inside a batch to fail all its turns with one reason. */
class BatchFailure extends Error {
  constructor(readonly failure: Failure) {
    super(failure.message);
  }
}

/** `category`: what the model proposed (undefined when it said nothing); core checks it against the list. */
type Fact = { text: string; turns: number[]; speaker: string | null; occurredAt: string | null; keywords: string[]; category?: string | null };
type Decision = { action: 'add' | 'update' | 'delete' | 'noop'; targets: string[]; text: string | null };

/**
 * A `MemoryWriter` that asks a language model for memories.
 *
 * Per batch of at most `batchSize` turns it makes:
 * 1. one extraction call: self-contained facts as JSON, each citing its turn number(s), with relative
 *    dates resolved against the turn timestamps shown in the prompt;
 * 2. when similar memories exist (`searchSimilar(fact, similarPerFact)` per fact, an index lookup,
 *    not a model call), one reconciliation call deciding per fact `add`, `update` (the new memory is
 *    written and supersedes the old ones: `supersedes` with `by`), `delete` (the old memories are
 *    superseded without a successor, the fact is not stored) or `noop`. Superseded memories are kept
 *    as history (issue 32), never deleted.
 *
 * An unreadable reply gets ONE repair call (the reply and the parse error sent back). If extraction
 * is still unreadable the batch fails `generation_unparseable`; if reconciliation is, every fact is
 * added (nothing is superseded on a guess). A `LanguageModelError` fails every turn of the batch with
 * its reason (`timeout` -> `generation_timeout`, `unavailable` -> `model_unavailable`, `unparseable`
 * -> `generation_unparseable`, else `generation_failed`); the later turns of the request fail
 * `earlier_turn_failed` without a model call (`capabilities.reconciles`). An abort rejects
 * `write` with the `AbortError`, and so does an error thrown by `searchSimilar` (the index failed,
 * not the model). A fact citing several turns is returned with the first turn it cites. The
 * result's `usage` sums the tokens the model reported for every call that answered (repairs and
 * the calls of a failed batch included), under the model's `id`.
 *
 * @example
 * const writer = llmMemoryWriter({ model: openaiCompatibleLanguageModel({ baseURL, model: 'gpt-4o-mini' }) });
 */
export function llmMemoryWriter(options: LlmMemoryWriterOptions): MemoryWriter {
  const config = optionsSchema.parse(options);
  const { model } = config;

  /**
   * One generate call, with a single repair attempt when `read` cannot use the reply. The tokens of
   * every call that answered (the repaired one too) are noted in `spent`.
   */
  async function ask<T>(messages: ModelMessage[], read: (value: unknown) => T, signal: AbortSignal | undefined, spent: ModelUsage[]): Promise<T> {
    const generate = async (prompt: ModelMessage[]) => {
      const result = await model.generate({ messages: prompt, responseFormat: 'json', ...(signal ? { signal } : {}) });
      if (result.usage) spent.push({ model: model.id, inputTokens: result.usage.inputTokens, outputTokens: result.usage.outputTokens });
      return result;
    };
    const first = await generate(messages);
    try {
      return read(parseJsonReply(first.text));
    } catch (error) {
      if (!(error instanceof ReplyParseError)) throw error;
      const second = await generate(repairMessages(messages, first.text, error.message));
      return read(parseJsonReply(second.text));
    }
  }

  async function writeBatch(turns: WriterTurn[], request: MemoryWriteRequest, spent: ModelUsage[]): Promise<{ outcomes: TurnOutcome[]; supersedes: Supersession[] }> {
    let facts: Fact[];
    try {
      const prompt = extractionMessages(turns, config.maxFactsPerTurn, request.policy ? { policy: request.policy } : {});
      facts = await ask(prompt, (value) => readFacts(value, turns.length, (request.policy?.categories.length ?? 0) > 0), request.signal, spent);
    } catch (error) {
      throw toBatchFailure(error);
    }
    facts = capPerTurn(facts, config.maxFactsPerTurn);

    const decisions = await reconcile(facts, request, spent);
    const outcomes: TurnOutcome[] = turns.map((turn) => ({ turnIndex: turn.turnIndex, ok: true, memories: [] }));
    const supersedes: Supersession[] = [];
    const superseded = new Set<string>();
    facts.forEach((fact, position) => {
      const decision = decisions[position] ?? { action: 'add', targets: [], text: null };
      let by: DraftRef | undefined;
      if (decision.action === 'add' || decision.action === 'update') {
        const turnPosition = (fact.turns[0] ?? 1) - 1;
        const turn = turns[turnPosition];
        const outcome = outcomes[turnPosition];
        if (turn && outcome?.ok) {
          by = { turnIndex: turn.turnIndex, piece: outcome.memories.length };
          outcome.memories.push(toDraft(decision.text ? { ...fact, text: decision.text } : fact, turn));
        }
      }
      for (const id of decision.targets) {
        if (superseded.has(id)) continue;
        superseded.add(id);
        supersedes.push(by ? { old: { id }, by } : { old: { id } });
      }
    });
    return { outcomes, supersedes };
  }

  /** Decisions per fact (same order); ids in `targets` are real ids of existing memories. */
  async function reconcile(facts: Fact[], request: MemoryWriteRequest, spent: ModelUsage[]): Promise<Decision[]> {
    const add = (): Decision[] => facts.map(() => ({ action: 'add', targets: [], text: null }));
    if (facts.length === 0 || config.similarPerFact === 0) return add();
    // Document pieces are sources, not beliefs: a conversation never updates or deletes them.
    const similar = await Promise.all(
      facts.map(async (fact) => (await request.searchSimilar(fact.text, config.similarPerFact)).filter((record) => record.source.kind !== 'document')),
    );
    const byRef = new Map<string, MemoryHitRecord>();
    const seen = new Set<string>();
    // Interleave the facts' hit lists so every fact keeps its best matches under `maxCandidates`.
    for (let rank = 0; rank < config.similarPerFact; rank += 1) {
      for (const hits of similar) {
        const record = hits[rank];
        if (!record || seen.has(record.id) || byRef.size >= config.maxCandidates) continue;
        seen.add(record.id);
        byRef.set(`M${byRef.size + 1}`, record);
      }
    }
    if (byRef.size === 0) return add();
    const candidates: ReconcileCandidate[] = [...byRef].map(([ref, record]) => ({ ref, text: record.text, occurredAt: record.occurredAt, speaker: record.speaker }));
    try {
      return await ask(reconciliationMessages(facts, candidates), (value) => readDecisions(value, facts.length, byRef), request.signal, spent);
    } catch (error) {
      // Still unreadable after the repair: keep every fact and supersede nothing rather than guess.
      if (error instanceof ReplyParseError) return add();
      throw toBatchFailure(error);
    }
  }

  /** The model's part: batches in order; after a failed batch the rest fail `earlier_turn_failed`. */
  async function writeWithModel(request: MemoryWriteRequest): Promise<MemoryWriteResult> {
    const outcomes: TurnOutcome[] = [];
    const supersedes: Supersession[] = [];
    const spent: ModelUsage[] = [];
    for (let start = 0; start < request.turns.length; start += config.batchSize) {
      if (request.signal?.aborted) throw abortError(request.signal);
      const turns = request.turns.slice(start, start + config.batchSize);
      try {
        const result = await writeBatch(turns, request, spent);
        outcomes.push(...result.outcomes);
        // An old memory is superseded once: by the first fact that replaced it.
        for (const supersession of result.supersedes) {
          const id = 'id' in supersession.old ? supersession.old.id : null;
          if (id !== null && supersedes.some(({ old }) => 'id' in old && old.id === id)) continue;
          supersedes.push(supersession);
        }
      } catch (error) {
        if (!(error instanceof BatchFailure)) throw error;
        const { reason, message } = error.failure;
        outcomes.push(...turns.map((turn): TurnOutcome => ({ turnIndex: turn.turnIndex, ok: false, reason, message })));
        // Later facts would be reconciled against a memory missing this batch's facts.
        for (const turn of request.turns.slice(start + config.batchSize)) outcomes.push({ turnIndex: turn.turnIndex, ok: false, ...EARLIER_TURN_FAILED });
        break;
      }
    }
    return withUsage(supersedes.length > 0 ? { outcomes, supersedes } : { outcomes }, spent);
  }

  const { documentWriter } = config;
  const isDocument = (turn: WriterTurn) => turn.source.kind === 'document';

  return {
    specificationVersion: 'v1',
    id: documentWriter ? `llm-memory-writer:${model.id}+documents:${documentWriter.id}` : `llm-memory-writer:${model.id}`,
    capabilities: { reconciles: true },

    async write(request: MemoryWriteRequest): Promise<MemoryWriteResult> {
      if (!documentWriter || !request.turns.some(isDocument)) return writeWithModel(request);
      const documentTurns = request.turns.filter(isDocument);
      const otherTurns = request.turns.filter((turn) => !isDocument(turn));
      const fromDocuments = await documentWriter.write({ ...request, turns: documentTurns });
      const fromModel: MemoryWriteResult = otherTurns.length > 0 ? await writeWithModel({ ...request, turns: otherTurns }) : { outcomes: [] };
      const outcomes = [...fromDocuments.outcomes, ...fromModel.outcomes].sort((a, b) => a.turnIndex - b.turnIndex);
      const supersedes = [...(fromDocuments.supersedes ?? []), ...(fromModel.supersedes ?? [])];
      return withUsage(supersedes.length > 0 ? { outcomes, supersedes } : { outcomes }, [...(fromModel.usage ?? []), ...(fromDocuments.usage ?? [])]);
    },
  };
}

/** The result with `usage` summed per model (port "MemoryWriter"), left out when no call reported any. */
function withUsage(result: MemoryWriteResult, spent: readonly ModelUsage[]): MemoryWriteResult {
  const usage = sumModelUsage(spent);
  return usage.length > 0 ? { ...result, usage } : result;
}

/** Errors of a model call fail the batch (unknown ones as `generation_failed`); an abort propagates. */
function toBatchFailure(error: unknown): unknown {
  if (isAbortError(error)) return error;
  if (error instanceof ReplyParseError) return new BatchFailure(REASONS.unparseable);
  if (error instanceof Error && error.name === 'LanguageModelError') {
    const kind = (error as Error & { kind?: unknown }).kind;
    return new BatchFailure(kind === 'timeout' || kind === 'unavailable' || kind === 'unparseable' ? REASONS[kind] : REASONS.failed);
  }
  return new BatchFailure(REASONS.failed);
}

const factSchema = z.object({
  text: z.string(),
  turns: z.union([z.array(z.union([z.number(), z.string()])), z.number(), z.string()]).optional(),
  turn: z.union([z.number(), z.string()]).optional(),
  speaker: z.string().nullish(),
  occurred_at: z.string().nullish(),
  keywords: z.union([z.array(z.unknown()), z.string()]).nullish(),
  category: z.unknown().optional(),
});

/** Reads `{ facts: [...] }` (or a bare array); facts without text or a valid turn are dropped. */
function readFacts(value: unknown, turnCount: number, categorized = false): Fact[] {
  const list = Array.isArray(value) ? value : (value as { facts?: unknown } | null)?.facts;
  if (!Array.isArray(list)) throw new ReplyParseError('expected an object with a "facts" array');
  const facts: Fact[] = [];
  for (const item of list) {
    const parsed = factSchema.safeParse(item);
    if (!parsed.success) continue;
    const fact = parsed.data;
    const cited = [fact.turns ?? [], fact.turn ?? []].flat().map((turn) => Number(String(turn).replace(/^turn\s*/i, '')));
    const turns = [...new Set(cited.filter((turn) => Number.isInteger(turn) && turn >= 1 && turn <= turnCount))].sort((a, b) => a - b);
    const text = fact.text.trim();
    if (text === '' || turns.length === 0) continue;
    const keywords = typeof fact.keywords === 'string' ? [fact.keywords] : (fact.keywords ?? []).filter((keyword): keyword is string => typeof keyword === 'string');
    // A proposed category is passed on as said (core refuses a name outside the list); not asked for, none.
    const category = !categorized ? undefined : typeof fact.category === 'string' && fact.category.trim() !== '' ? fact.category.trim() : null;
    facts.push({ text, turns, speaker: fact.speaker?.trim() || null, occurredAt: normalizeDate(fact.occurred_at ?? null), keywords, ...(category === undefined ? {} : { category }) });
  }
  if (list.length > 0 && facts.length === 0) {
    throw new ReplyParseError(`no fact had a non-empty "text" and "turns" citing turn numbers between 1 and ${turnCount}`);
  }
  return facts;
}

const decisionSchema = z.object({
  fact: z.union([z.number(), z.string()]),
  action: z.enum(['add', 'update', 'delete', 'noop']),
  targets: z.array(z.string()).nullish(),
  text: z.string().nullish(),
});

function readDecisions(value: unknown, factCount: number, byRef: Map<string, MemoryHitRecord>): Decision[] {
  const list = Array.isArray(value) ? value : (value as { decisions?: unknown } | null)?.decisions;
  if (!Array.isArray(list)) throw new ReplyParseError('expected an object with a "decisions" array');
  const decisions: Decision[] = Array.from({ length: factCount }, () => ({ action: 'add', targets: [], text: null }));
  for (const item of list) {
    const parsed = decisionSchema.safeParse(item);
    if (!parsed.success) throw new ReplyParseError(`a decision is not of the form {"fact": n, "action": "add|update|delete|noop", "targets": [...]}`);
    const position = Number(String(parsed.data.fact).replace(/^F/i, '')) - 1;
    if (!Number.isInteger(position) || position < 0 || position >= factCount) continue;
    // Only ids we showed can be deleted: a made-up reference is ignored.
    const targets = (parsed.data.targets ?? []).map((ref) => byRef.get(ref.trim().toUpperCase())?.id).filter((id): id is string => id !== undefined);
    const { action } = parsed.data;
    if ((action === 'update' || action === 'delete') && targets.length === 0) continue; // nothing to replace: add
    decisions[position] = { action, targets: action === 'update' || action === 'delete' ? targets : [], text: action === 'update' ? parsed.data.text?.trim() || null : null };
  }
  return decisions;
}

function capPerTurn(facts: Fact[], max: number): Fact[] {
  const counts = new Map<number, number>();
  return facts.filter((fact) => {
    const turn = fact.turns[0] ?? 1;
    const count = counts.get(turn) ?? 0;
    counts.set(turn, count + 1);
    return count < max;
  });
}

/** `2024-05-03`, `2024-05`, `2024` or an ISO date-time -> ISO date-time (UTC); anything else -> null. */
export function normalizeDate(value: string | null): string | null {
  if (!value) return null;
  const text = value.trim();
  const partial = /^(\d{4})(?:-(\d{2}))?(?:-(\d{2}))?$/.exec(text);
  const date = partial
    ? new Date(Date.UTC(Number(partial[1]), Number(partial[2] ?? '1') - 1, Number(partial[3] ?? '1')))
    : /^\d{4}-\d{2}-\d{2}T/.test(text)
      ? new Date(text)
      : null;
  return date && !Number.isNaN(date.getTime()) ? date.toISOString() : null;
}

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

function toDraft(fact: Fact, turn: WriterTurn): MemoryDraft {
  const occurredAt = fact.occurredAt ?? turn.timestamp;
  const speaker = fact.speaker ?? turn.speaker;
  const date = new Date(occurredAt);
  // Dates in words let a full-text query like "in May" or "2024-05-03" find the memory.
  const dateWords = Number.isNaN(date.getTime())
    ? []
    : [date.toISOString().slice(0, 10), `${MONTHS[date.getUTCMonth()]} ${date.getUTCFullYear()}`];
  const keywords = [...new Set([...fact.keywords, speaker, ...dateWords].map((keyword) => keyword.trim()).filter(Boolean))];
  // Instruction-like facts, or facts from an instruction-like turn, are kept as evidence with a
  // `suspicious` mark (issue 33): a paraphrase may drop the words that gave the turn away.
  return {
    text: fact.text,
    keywords: keywords.join(' '),
    speaker,
    occurredAt,
    source: turn.source,
    suspicious: isInstructionLike(fact.text) || isInstructionLike(turn.text),
    ...(fact.category === undefined ? {} : { category: fact.category }),
  };
}
