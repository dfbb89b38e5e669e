import { z } from 'zod';
import { agentId, dateTime, observationId, sourceId, threadId } from './common.js';

// `GET /v1/agents/{agent_id}/threads/{thread_id}/turns` (an extension, issue 45): the turns a thread
// observed (what `observe`, observe-and-respond and document uploads stored), in the order they
// arrived, so a memory's source (`observation_id`, `turn_index`) can be read as the words it came from.

/** Where a document's piece comes from in its file; null for a turn that was said. */
const turnDocument = z
  .object({
    source_id: sourceId,
    filename: z.string().nullable(),
    /** 1-based page the piece starts on (null when the format has no pages). */
    page: z.number().int().nullable(),
    page_end: z.number().int().nullable(),
    /** 0-based index of the piece in the whole document. */
    piece: z.number().int().nullable(),
  })
  .strict();

export const threadTurn = z
  .object({
    observation_id: observationId,
    /** 0-based position of the turn in its observation (a memory's `source.turn_index`). */
    turn_index: z.number().int().min(0),
    /** The job that stored it: `observe`, `respond` (observe-and-respond) or `document` (an upload). */
    kind: z.enum(['observe', 'respond', 'document']),
    speaker: z.string(),
    text: z.string(),
    timestamp: dateTime,
    tags: z.array(z.string()),
    /** `pending` until learning reaches it; `learned`; `not_learned` with `not_learned_reason`. */
    learning: z.enum(['pending', 'learned', 'not_learned']),
    not_learned_reason: z.string().nullable(),
    document: turnDocument.nullable(),
  })
  .strict()
  .meta({ id: 'ThreadTurn' });

export const threadTurnsQuery = z
  .object({
    limit: z.coerce.number().int().min(1).max(200).default(50),
    cursor: z.string().regex(/^[1-9][0-9]{0,15}\.[0-9]{1,9}$/, 'not a value returned as next_cursor').optional(),
    /** Only the turns of this observation. */
    observation_id: observationId.optional(),
  })
  .strict();

export const threadTurnsResponse = z
  .object({
    agent_id: agentId,
    thread_id: threadId,
    turns: z.array(threadTurn),
    /** Turns stored in the thread (or in the observation `observation_id` names), on every page. */
    total: z.number().int().min(0),
    /** "" on the last page. */
    next_cursor: z.string(),
  })
  .strict()
  .meta({ id: 'ThreadTurns' });
