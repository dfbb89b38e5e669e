import { z } from 'zod';
import { agentId, dateTime, observationId, sourceId, text, threadId } from './common.js';

/** An `era_` id (an extension: erasure jobs). */
export const erasureId = z.string().regex(/^era_[0-9A-HJKMNP-TV-Z]{26}$/);

const TARGET_FIELDS = ['source_id', 'thread_id', 'observation_id', 'end_user_id', 'person_id'] as const;

/**
 * `POST /v1/agents/{agent_id}/memories/erase`: exactly one target. `end_user_id` is the value a
 * client sends as `X-SP-End-User` (every thread that person created); `person_id` (issue 45) is the
 * same person by their `eu_` id, as the activity log, the memory list's `end_user_id` filter and an
 * erasure's `target.id` name them (the header value itself is never stored).
 */
export const eraseBody = z
  .object({
    source_id: sourceId.optional(),
    thread_id: threadId.optional(),
    observation_id: observationId.optional(),
    end_user_id: text().min(1).max(256).optional(),
    person_id: z.string().regex(/^eu_[0-9a-f]{32}$/, 'not an eu_ id (eu_ and 32 hexadecimal digits)').optional(),
  })
  .strict()
  .refine((body) => TARGET_FIELDS.filter((field) => body[field] !== undefined).length === 1, {
    message: 'Give exactly one of source_id, thread_id, observation_id, end_user_id or person_id.',
  })
  .meta({ id: 'EraseRequest' });

export const erasureCounts = z
  .object({
    memories: z.number().int().min(0),
    threads: z.number().int().min(0),
    observations: z.number().int().min(0),
    originals: z.number().int().min(0),
    replays: z.number().int().min(0),
  })
  .strict()
  .meta({ id: 'ErasureCounts' });

/** An erasure job's status resource (`202` of erase, `GET .../erasures/{erasure_id}`). */
export const erasure = z
  .object({
    erasure_id: erasureId,
    agent_id: agentId,
    status: z.enum(['queued', 'running', 'completed', 'failed']),
    /** For `end_user`, `id` is the person's `eu_` id, never the header value. */
    target: z.object({ kind: z.enum(['source', 'thread', 'observation', 'end_user']), id: z.string() }).strict(),
    counts: erasureCounts,
    error: z.string().nullable(),
    created_at: dateTime,
    updated_at: dateTime,
    started_at: dateTime.nullable(),
    completed_at: dateTime.nullable(),
  })
  .strict()
  .meta({ id: 'Erasure' });

export type EraseInput = z.input<typeof eraseBody>;
export type ErasureOutput = z.output<typeof erasure>;
