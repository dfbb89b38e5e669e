import { z } from 'zod';
import { agentId, dateTime, text, threadId } from './common.js';
import { MAX_EDITED_MEMORY_CHARS, MAX_FORGET_REASON_CHARS, memory, memoryId, reviewState } from './memories.js';

/**
 * The review queue (an extension, issue 43). An agent's `review_mode` says which memories learning
 * holds for a person to approve: none (`off`, the default), those whose words are not the source's
 * (`inferred`: a paraphrase by a model writer, a resolved date), or every one (`all`).
 */
export const reviewMode = z.enum(['off', 'inferred', 'all']).meta({ id: 'ReviewMode' });


/** A character a page would not show (zero-width, bidi controls, other format characters): where it is and what it is. */
export const hiddenCharacter = z
  .object({ index: z.number().int().min(0), code_point: z.string().regex(/^U\+[0-9A-F]{4,6}$/), name: z.string() })
  .strict()
  .meta({ id: 'HiddenCharacter' });

export const reviewDecision = z
  .object({ action: z.enum(['approve', 'decline', 'edit', 'undo']), at: dateTime, by: z.string(), reason: z.string().nullable() })
  .strict()
  .meta({ id: 'ReviewDecision' });

/** One memory in the review queue: the memory (its own expiry shown, not the hiding), why it waits, and every decision. */
export const reviewItem = z
  .object({
    memory,
    state: reviewState,
    /** Why it was held: `inferred` (its words are not the source's; a reflection's), `all` (every memory is reviewed), `relearn` (a turn learned again reads differently). */
    held_as: z.enum(['inferred', 'all', 'relearn']),
    proposed_at: dateTime,
    /** Memories it replaces once approved (those still current then). */
    supersedes: z.array(memoryId),
    /** Memories its approval superseded (made current again by an undo). */
    superseded: z.array(memoryId),
    /** Who decided what, when, oldest first. */
    decisions: z.array(reviewDecision),
    /** Characters of its text a page would not show: listed here, shown as markers by the inspector. */
    hidden_characters: z.array(hiddenCharacter),
  })
  .strict()
  .meta({ id: 'ReviewItem' });

/** `GET /v1/agents/{agent_id}/review`: one state's memories, oldest proposal first. */
export const reviewList = z
  .object({ agent_id: agentId, review_mode: reviewMode, state: reviewState, items: z.array(reviewItem), next_cursor: z.string().nullable() })
  .strict()
  .meta({ id: 'ReviewList' });

/** `GET .../review` query: `state` (default pending), `limit` 1..100 (default 20), `cursor`. */
export const reviewListQuery = z
  .object({
    state: reviewState.optional(),
    limit: z.coerce.number().int().min(1).max(100).default(20),
    cursor: text().max(2048).optional(),
  })
  .strict();

/** `POST .../review/{memory_id}/decline`: an optional reason, kept in the audit. */
export const reviewDeclineBody = z
  .object({
    reason: text()
      .refine((value) => value.trim().length > 0, { message: 'reason must not be empty or only spaces' })
      .refine((value) => value.length <= MAX_FORGET_REASON_CHARS, { message: `reason is at most ${MAX_FORGET_REASON_CHARS} characters` })
      .optional(),
  })
  .strict()
  .meta({ id: 'ReviewDeclineRequest' });

/** `PATCH .../review/{memory_id}`: the text a pending memory will have (embedded again). */
export const reviewEditBody = z
  .object({
    text: text()
      .refine((value) => value.trim().length > 0, { message: 'text must not be empty or only spaces' })
      .refine((value) => value.length <= MAX_EDITED_MEMORY_CHARS, { message: `text is at most ${MAX_EDITED_MEMORY_CHARS} characters` }),
  })
  .strict()
  .meta({ id: 'ReviewEditRequest' });

/** `POST .../review/reflect`: how many proposals at most (1..20, default 5). */
export const reviewReflectBody = z
  .object({ max_proposals: z.number().int().min(1).max(20).optional() })
  .strict()
  .meta({ id: 'ReviewReflectRequest' });

/** What a reflection proposed: each proposal pending in the queue (none when the memories imply nothing new). */
export const reviewReflection = z
  .object({
    agent_id: agentId,
    /** The language model that reflected. */
    model: z.string(),
    /** How many memories it read (the newest current ones, at most 100; never a reflection's own). */
    memories_read: z.number().int().min(0),
    /** Credits charged (the words read, at the input-word price; "0" with billing off). */
    credits: z.string(),
    proposals: z.array(reviewItem),
  })
  .strict()
  .meta({ id: 'ReviewReflection' });

/** `POST .../review/relearn`: one thread (else every thread), at most `max_turns` turns (1..2000, default 500), from `cursor`. */
export const reviewRelearnBody = z
  .object({
    thread_id: threadId.optional(),
    max_turns: z.number().int().min(1).max(2000).optional(),
    cursor: z.string().min(1).max(200).optional(),
  })
  .strict()
  .meta({ id: 'ReviewRelearnRequest' });

/** What a re-learning proposed: each memory that now reads differently, pending review. */
export const reviewRelearning = z
  .object({
    agent_id: agentId,
    /** The memory writer that learned the turns again. */
    writer: z.string(),
    turns_read: z.number().int().min(0),
    /** Turns whose memories read the same under the current writer and policy. */
    unchanged_turns: z.number().int().min(0),
    credits: z.string(),
    proposals: z.array(reviewItem),
    /** Where the next call continues (whole jobs a call); null when every turn was read. */
    next_cursor: z.string().nullable(),
  })
  .strict()
  .meta({ id: 'ReviewRelearning' });

export type ReviewModeValue = z.output<typeof reviewMode>;
export type ReviewItemOutput = z.output<typeof reviewItem>;
export type ReviewListOutput = z.output<typeof reviewList>;
export type HiddenCharacterOutput = z.output<typeof hiddenCharacter>;
export type ReviewReflectionOutput = z.output<typeof reviewReflection>;
export type ReviewRelearningOutput = z.output<typeof reviewRelearning>;
