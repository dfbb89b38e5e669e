import { z } from 'zod';
import { agentId, dateTime, observationId, sourceId, text, threadId } from './common.js';

/**
 * A `mem_` id: a ULID (copied memories), or the learning job's ULID with the turn index and the
 * piece (`mem_<ulid>_<turn>_<piece>`, what learning writes).
 */
export const memoryId = z.string().regex(/^mem_[0-9A-HJKMNP-TV-Z]{26}(_\d{1,9}){0,2}$/);

/** A character span [start, end) of the turn's text (UTF-16 code units). */
export const memorySpan = z.object({ start: z.number().int().min(0), end: z.number().int().min(0) }).strict().meta({ id: 'MemorySpan' });

/** A conversation turn a memory was learned from. */
const turnSource = z
  .object({
    kind: z.literal('turn'),
    thread_id: threadId,
    observation_id: observationId,
    /** 0-based index of the turn in its observation job. */
    turn_index: z.number().int().min(0),
  })
  .strict();

/** A piece of a document a memory was learned from (one piece is one turn of the job). */
const documentSource = z
  .object({
    kind: z.literal('document'),
    thread_id: threadId,
    observation_id: observationId,
    turn_index: z.number().int().min(0),
    source_id: sourceId,
    filename: z.string(),
    /** The page the piece starts on, when the format has pages. */
    page: z.number().int().nullable(),
    /** The 0-based piece of the document (its turn index). */
    piece: z.number().int().min(0),
  })
  .strict();

/** Where a memory stands in the review queue (an extension, issue 43; `schemas/review.ts`). */
export const reviewState = z.enum(['pending', 'approved', 'declined']).meta({ id: 'ReviewState' });

/** Where a memory was learned from. */
export const memorySource = z.discriminatedUnion('kind', [turnSource, documentSource]).meta({ id: 'MemorySource' });

/** One memory as the memories API shows it (docs/api.md "Memories"). */
export const memory = z
  .object({
    memory_id: memoryId,
    agent_id: agentId,
    text: z.string(),
    speaker: z.string().nullable(),
    /** When what it says happened (the turn's timestamp or a date resolved from it). */
    occurred_at: dateTime.nullable(),
    /** When it was learned. */
    learned_at: dateTime,
    /** When the fact became true; null when unknown. */
    valid_from: dateTime.nullable(),
    /** When it stopped being true (superseded); null while current. */
    valid_to: dateTime.nullable(),
    superseded_by: memoryId.nullable(),
    /** Flagged as instruction-like content when learned. */
    suspicious: z.boolean(),
    source: memorySource,
    /** The character span of the turn's text it is a verbatim slice of; null when paraphrased. */
    span: memorySpan.nullable(),
    /** Other turns it was also learned from (near-duplicates merged into it). */
    also_from: z.array(memorySource),
    /** The observation job that learned it (`obs_`), or null. */
    job_id: z.string().nullable(),
    /** The memory writer that produced it. */
    writer: z.string(),
    /** Extension (issue 42): when it expires (gone from every read path from then on); null: never. */
    expires_at: dateTime.nullable(),
    /** Extension (issue 42): pinned memories never decay, and pinning cleared any expiry. */
    pinned: z.boolean(),
    /** Extension (issue 42): forgotten with a reason (hidden everywhere), restorable until `restore_until`, then erased; else null. */
    forgotten: z.object({ at: dateTime, reason: z.string(), by: z.string(), restore_until: dateTime }).strict().nullable(),
    /** Extension (issue 42): written by an edit of `from_memory_id` (now superseded history), by whom, when; else null. */
    edited: z.object({ at: dateTime, by: z.string(), from_memory_id: memoryId }).strict().nullable(),
    /** Extension (issue 44): the category of the agent's extraction policy it was given when learned; else null. */
    category: z.string().nullable(),
    /** Extension (issue 44): the version of the agent's extraction policy that kept it; null when learned without one. */
    policy_version: z.number().int().nullable(),
    /** Extension (issue 43): its state in the review queue (a pending or declined one is hidden everywhere); null when it was never held. */
    review_state: reviewState.nullable(),
  })
  .strict()
  .meta({ id: 'Memory' });

/** `GET .../memories/{memory_id}`: the memory and what its learning cost. */
export const memoryDetail = memory
  .extend({
    /**
     * Credits charged for learning the turn it came from (decimal string; docs/api.md says the
     * rule): "0" when billing was off or the turn was refunded.
     */
    learning_credits: z.string(),
  })
  .strict()
  .meta({ id: 'MemoryDetail' });

export const memoryList = z
  .object({ agent_id: agentId, memories: z.array(memory), next_cursor: z.string().nullable() })
  .strict()
  .meta({ id: 'MemoryList' });

/**
 * `GET .../memories/{memory_id}/history` (extension): every version of the fact the memory holds,
 * oldest first: the memories it replaced (an edit's original, the older statements learning or a
 * maintenance run superseded), itself, and those that replaced it.
 */
export const memoryHistory = z
  .object({
    agent_id: agentId,
    memory_id: z.string(),
    versions: z.array(memory),
    /** True when the chain has more than the 100 versions listed (the oldest are left out). */
    truncated: z.boolean(),
  })
  .strict()
  .meta({ id: 'MemoryHistory' });

const booleanString = z.enum(['true', 'false']).transform((value) => value === 'true');

/** `GET .../memories` query: filters, `limit` 1..100 (default 20) and `cursor`. */
export const memoryListQuery = z
  .object({
    limit: z.coerce.number().int().min(1).max(100).default(20),
    cursor: text().max(2048).optional(),
    thread_id: threadId.optional(),
    end_user_id: z.string().regex(/^eu_[0-9a-f]{32}$/).optional(),
    source_id: sourceId.optional(),
    observation_id: observationId.optional(),
    speaker: text().min(1).max(200).optional(),
    learned_after: dateTime.optional(),
    learned_before: dateTime.optional(),
    occurred_after: dateTime.optional(),
    occurred_before: dateTime.optional(),
    text_contains: text().min(1).max(200).optional(),
    include_history: z.union([z.boolean(), booleanString]).optional(),
    /** Extension (issue 42): expired memories too, for audit. */
    include_expired: z.union([z.boolean(), booleanString]).optional(),
    /**
     * Extension (issue 44): only memories of this category of the agent's extraction policy. The
     * filter runs on the memories' marks after the index pages (at most 20 index pages a request),
     * so a page may hold fewer than `limit` memories while `next_cursor` is not null.
     */
    category: z.string().regex(/^[a-z][a-z0-9_-]{0,39}$/, 'a category name is lower-case letters, digits, _ and -, starting with a letter (at most 40)').optional(),
  })
  .strict();

/** `GET .../memories/{memory_id}` query (extension, issue 42): `include_expired` shows an expired memory for audit. */
export const memoryGetQuery = z.object({ include_expired: z.union([z.boolean(), booleanString]).optional() }).strict();

/** Longest text an edit may give a memory (characters). */
export const MAX_EDITED_MEMORY_CHARS = 4000;

/**
 * `PATCH .../memories/{memory_id}` (extension, issue 42), at least one field: `expires_at` sets
 * (ISO date-time) or clears (null) its expiry; `pinned` pins or unpins it; `text` edits it (the old
 * text stays as superseded history, the new memory is embedded and answers cite it as edited).
 */
export const memoryPatchBody = z
  .object({
    expires_at: dateTime.nullable().optional(),
    pinned: z.boolean().optional(),
    text: text()
      .refine((value) => value.trim().length > 0, { message: 'text must not be empty or only spaces' })
      .refine((value) => value.length <= MAX_EDITED_MEMORY_CHARS, { message: `text is at most ${MAX_EDITED_MEMORY_CHARS} characters` })
      .optional(),
  })
  .strict()
  .refine((body) => body.expires_at !== undefined || body.pinned !== undefined || body.text !== undefined, { message: 'give at least one of expires_at, pinned, text' })
  .meta({ id: 'MemoryPatchRequest' });

/** Longest reason a forget may give (characters). */
export const MAX_FORGET_REASON_CHARS = 500;

/** `POST .../memories/{memory_id}/forget` (extension, issue 42): why (kept with the memory until it is erased). */
export const memoryForgetBody = z
  .object({
    reason: text()
      .refine((value) => value.trim().length > 0, { message: 'reason must not be empty or only spaces' })
      .refine((value) => value.length <= MAX_FORGET_REASON_CHARS, { message: `reason is at most ${MAX_FORGET_REASON_CHARS} characters` }),
  })
  .strict()
  .meta({ id: 'MemoryForgetRequest' });

/** `POST .../memories/search`. */
export const memorySearchBody = z
  .object({
    query: text().min(1).max(2000),
    /** Hits returned, best first. */
    limit: z.number().int().min(1).max(100).optional(),
    /** Search what was true then (superseded memories included); absent: current memories only. */
    as_of: dateTime.optional(),
    /** Extension (issue 42): expired memories too, for audit. */
    include_expired: z.boolean().optional(),
  })
  .strict()
  .meta({ id: 'MemorySearchRequest' });

/**
 * What each retrieval signal added to a hit's fused score (their sum is `score`); 0 when the
 * signal did not fire. Weights: docs/benchmarks.md.
 */
export const memorySignals = z
  .object({
    full_text: z.number(),
    vector: z.number(),
    speaker: z.number(),
    self: z.number(),
    time: z.number(),
    episode: z.number(),
    hyponyms: z.number(),
    /** Negative: the penalty of a memory flagged instruction-like, when the query asks for instructions or rules. */
    suspicious: z.number(),
    /** Extension (issue 42), 0 or negative: what the agent's `memory_decay` took off an old, uncited memory. */
    decay: z.number(),
  })
  .strict()
  .meta({ id: 'MemorySignals' });

export const memorySearchHit = z
  .object({
    /** 1-based rank in retrieval's fused order (after deduplication). */
    rank: z.number().int().min(1),
    score: z.number(),
    signals: memorySignals,
    /** Whether a chat turn asking `query` would see it in its memory context. */
    in_memory_context: z.boolean(),
    memory: memory,
  })
  .strict()
  .meta({ id: 'MemorySearchHit' });

export const memorySearchResponse = z
  .object({
    agent_id: agentId,
    /** The memory context a chat turn asking `query` would get. */
    memory_context: z.string(),
    hits: z.array(memorySearchHit),
  })
  .strict()
  .meta({ id: 'MemorySearchResponse' });
