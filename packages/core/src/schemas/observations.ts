import { z } from 'zod';
import { agentId, dateTime, decimalString, imageId, observationId, text, threadId } from './common.js';

export const contentBlock = z
  .object({
    type: z.literal('text'),
    text: text().max(100_000),
    img_url: text().max(2048).optional(),
  })
  .strict()
  .meta({ id: 'ContentBlock' });

export const observation = z
  .object({
    content: z.array(contentBlock).min(1).max(20),
    timestamp: dateTime.optional(),
    tags: z.array(text().max(200)).max(50).optional(),
    speaker: text().min(1).max(200).optional(),
    /** An extension (issue 42): when the memories learned from this observation expire (gone from every read path from then on). */
    expires_at: dateTime.optional(),
  })
  .strict()
  .meta({ id: 'Observation' });

export const observeBody = z
  .object({ observations: z.array(observation).min(1).max(100) })
  .strict()
  .meta({ id: 'ObserveRequest' });

export const observeAccepted = z
  .object({ agent_id: agentId, thread_id: threadId, observation_id: observationId, accepted: z.literal(true) })
  .strict()
  .meta({ id: 'ObserveAccepted' });

export const turnRange = z.object({ first: z.number().int().min(1), last: z.number().int().min(1) }).strict();

export const observationLearning = z
  .object({
    status: z.literal('not_learned'),
    not_learned_turns: z.array(turnRange),
    reason: z.string(),
    message: z.string(),
    refunded_credits: decimalString.nullable(),
    action: z.literal('resend'),
  })
  .strict()
  .meta({ id: 'ObservationLearning' });

export const observationStatus = z
  .object({
    agent_id: agentId,
    thread_id: threadId,
    observation_id: observationId,
    status: z.enum(['queued', 'converting', 'processing', 'committed', 'failed', 'cancelled', 'interrupted']),
    turns_total: z.number().int().min(0),
    turns_processed: z.number().int().min(0),
    queue_depth: z.number().int().min(0),
    error: z.string().nullable(),
    queued: z.boolean(),
    resumed_at: dateTime.nullable(),
    learning: observationLearning.nullable(),
  })
  .strict()
  .meta({ id: 'ObservationStatus' });

/** `GET .../threads/{thread_id}/observations` (an extension): newest first, one page at a time. */
export const observationsQuery = z
  .object({
    limit: z.coerce.number().int().min(1).max(100).default(20),
    cursor: text().max(32).optional(),
  })
  .strict();

export const observationListResponse = z
  .object({ observations: z.array(observationStatus), next_cursor: z.string() })
  .strict()
  .meta({ id: 'ObservationList' });

/** Tokens one model used (issue 33): input and output as the provider counted them (embedders: output 0). */
export const receiptModelTokens = z
  .object({
    /** The model's id (the language model's or embedder's `id`, e.g. `openai-compatible:gpt-4o-mini`). */
    model: z.string(),
    input_tokens: z.number().int().min(0),
    output_tokens: z.number().int().min(0),
  })
  .strict()
  .meta({ id: 'ObservationReceiptModelTokens' });

/** One turn of a receipt: what became of it, what it wrote and superseded, what it cost. */
export const receiptTurn = z
  .object({
    turn_index: z.number().int().min(0),
    /** `merged`: a near-duplicate of an existing memory, added to its sources (`memory_ids` is that memory). */
    outcome: z.enum(['learned', 'merged', 'skipped']),
    /** The not-learned reason of a skipped turn (spec "ObservationLearning" reasons); null when learned. */
    reason: z.string().nullable(),
    memory_ids: z.array(z.string()),
    superseded: z.array(z.string()),
    /**
     * What the agent's extraction policy redacted from the turn before it was stored (an extension,
     * issue 44): each kind (the policy's rule) and how many times; empty when nothing was.
     */
    redacted: z.array(z.object({ kind: z.string(), count: z.number().int().min(1) }).strict()),
    /** The extraction policy rule that kept this turn from the writer (an extension, issue 44; reason `excluded_by_policy`), else null. */
    excluded_by: z.string().nullable(),
    /**
     * Memories the writer made of the turn that the extraction policy did not keep (an extension,
     * issue 44): each one's category (null: none) and the rule, as a sentence. A turn all of whose
     * memories were dropped is `learned` with no `memory_ids`.
     */
    dropped: z.array(z.object({ category: z.string().nullable(), rule: z.string() }).strict()),
    /**
     * Model tokens of the turn: its learning batch's tokens split over the batch's turns in
     * proportion to their text length (the remainder on the batch's last turn). Empty when no model
     * reported tokens (the default writer and the built-in hashed embedder use none).
     */
    model_tokens: z.array(receiptModelTokens),
    charged_credits: decimalString,
    refunded_credits: decimalString,
    ledger_entry_ids: z.array(z.number().int()),
  })
  .strict()
  .meta({ id: 'ObservationReceiptTurn' });

export const receiptLedgerEntry = z
  .object({
    entry_id: z.number().int(),
    kind: z.enum(['charge', 'refund']),
    cost: z.string(),
    created_at: dateTime,
  })
  .strict()
  .meta({ id: 'ObservationReceiptLedgerEntry' });

/** `GET .../observe/{observation_id}/receipt` (an extension, issue 33): once the job is final. */
export const observationReceipt = z
  .object({
    agent_id: agentId,
    thread_id: threadId,
    observation_id: observationId,
    status: z.enum(['committed', 'failed', 'cancelled']),
    turns: z.array(receiptTurn),
    /** Memories ended by a "no longer true" statement of the job (no successor, so no turn). */
    superseded_without_successor: z.array(z.string()),
    /** The job's model tokens per model, equal to the sum of its turns' `model_tokens`. */
    model_tokens: z.array(receiptModelTokens),
    /** Sum of the job's ledger entries (charges minus refunds), equal to the turns' charged minus refunded. */
    net_credits: z.string(),
    ledger_entries: z.array(receiptLedgerEntry),
  })
  .strict()
  .meta({ id: 'ObservationReceipt' });

export const chatBody = z
  .object({
    turn_id: text().min(1).max(200),
    message: text().min(1).max(2000),
    // The count of distinct images is a limit of the organization (413 when over), not a schema rule.
    images: z.array(imageId).max(1000).optional(),
    answer_length: z.enum(['brief', 'standard', 'detailed']).default('standard'),
    max_context_chars: z.number().int().min(100).max(100_000).optional(),
    /**
     * Extension (issue 32): answer from what was true at this ISO date-time (memories valid then,
     * superseded ones included) instead of the current facts. docs/api.md.
     */
    as_of: dateTime.optional(),
  })
  .strict()
  .meta({ id: 'ChatRequest' });

export const citation = z
  .object({ source_id: z.string(), label: z.string(), media_type: z.string(), href: z.string(), verified: z.boolean() })
  .strict()
  .meta({ id: 'Citation' });

export const stage = z.object({ name: z.string(), duration_ms: z.number().int().min(0) }).strict();

export const chatLearningItem = z
  .object({
    request_id: z.string(),
    role: z.enum(['user', 'agent']),
    status: z.enum(['learned', 'not_learned']),
    reason: z.string(),
    message: z.string(),
    refunded_credits: decimalString.nullable(),
    action: z.literal('resend'),
  })
  .strict();

export const chatResponse = z
  .object({
    agent_id: agentId,
    thread_id: threadId,
    turn_id: z.string(),
    message: z.string(),
    memory_context: z.string(),
    model: z.string(),
    duration_ms: z.number().int().min(0),
    stages: z.array(stage),
    citations: z.array(citation),
    learning: z.array(chatLearningItem),
  })
  .strict()
  .meta({ id: 'ChatResponse' });

export const observeAndEnrichBody = z
  .object({
    turn_id: text().min(1).max(200),
    message: text().min(1).max(2000),
    max_context_chars: z.number().int().min(100).max(100_000).optional(),
  })
  .strict()
  .meta({ id: 'ObserveAndEnrichRequest' });

export type ChatBody = z.infer<typeof chatBody>;

export const learningRecordResponse = z
  .object({
    agent_id: agentId,
    thread_id: threadId,
    entries: z.array(
      z
        .object({
          observation_id: observationId,
          not_learned_turns: z.array(turnRange),
          reason: z.string(),
          message: z.string(),
          refunded_credits: decimalString.nullable(),
          action: z.literal('resend'),
          created_at: dateTime,
        })
        .strict(),
    ),
    next_cursor: z.string().nullable(),
  })
  .strict()
  .meta({ id: 'ThreadLearningRecord' });

export const learningQuery = z
  .object({
    limit: z.coerce.number().int().min(1).max(100).default(50),
    cursor: z.string().regex(/^[1-9][0-9]{0,15}$/, 'not a value returned as next_cursor').optional(),
  })
  .strict();

export const observeAndRespondResponse = chatResponse.extend({ observation_id: observationId }).strict().meta({ id: 'ObserveAndRespondResponse' });

export const observeAndEnrichResponse = z
  .object({
    agent_id: agentId,
    thread_id: threadId,
    turn_id: z.string(),
    memory_context: z.string(),
    citations: z.array(citation),
    stages: z.array(stage),
    observation_id: observationId,
  })
  .strict()
  .meta({ id: 'ObserveAndEnrichResponse' });

/** `POST /v1/agents/{agent_id}/recall`: the memory context for a query, learning nothing. */
export const recallBody = z
  .object({
    query: text().min(1).max(2000),
    max_context_chars: z.number().int().min(100).max(100_000).optional(),
    /** Extension (issue 32): the memory context of what was true at this ISO date-time. docs/api.md. */
    as_of: dateTime.optional(),
  })
  .strict()
  .meta({ id: 'RecallRequest' });

export const recallResponse = z
  .object({
    agent_id: agentId,
    memory_context: z.string(),
    citations: z.array(citation),
    stages: z.array(stage),
  })
  .strict()
  .meta({ id: 'RecallResponse' });

export type ChatLearningItem = z.infer<typeof chatLearningItem>;
export type CitationBody = z.infer<typeof citation>;
