import { z } from 'zod';
import { agentId, dateTime, text } from './common.js';

/** The kinds of maintenance run (an extension, issue 43). */
export const MAINTENANCE_KINDS = ['merge_duplicates', 'supersede_history', 'sweep_expired', 'reapply_policy'] as const;

/** An `mnt_` id (an extension: maintenance runs). */
export const maintenanceRunId = z.string().regex(/^mnt_[0-9A-HJKMNP-TV-Z]{26}$/);

/** `POST /v1/agents/{agent_id}/maintenance`: a dry run of one kind; `max_share` is the guard's share (0..1]. */
export const maintenancePlanBody = z
  .object({
    kind: z.enum(MAINTENANCE_KINDS),
    /** Largest share of the agent's current memories the application may take out of current search (default 0.25; at most the service's maximum). */
    max_share: z.number().gt(0).max(1).optional(),
  })
  .strict()
  .meta({ id: 'MaintenancePlanRequest' });

/** One change of a run's diff, with the texts of the memories it touches (null once erased). */
export const maintenanceChange = z
  .object({
    action: z.enum(['merge', 'supersede', 'forget', 'redact', 'recategorise']),
    memory_id: z.string(),
    memory_text: z.string().nullable(),
    keep_id: z.string().nullable(),
    keep_text: z.string().nullable(),
    reason: z.string(),
    /** `reapply_policy`: the memory's category of the extraction policy before and after (null otherwise). */
    category: z.object({ from: z.string().nullable(), to: z.string().nullable() }).strict().nullable(),
  })
  .strict()
  .meta({ id: 'MaintenanceChange' });

const runFields = {
  run_id: maintenanceRunId,
  agent_id: agentId,
  kind: z.enum(MAINTENANCE_KINDS),
  status: z.enum(['dry_run', 'applying', 'applied', 'undoing', 'undone', 'failed']),
  /** `done` changes applied (or undone while undoing) of `total`. */
  progress: z.object({ done: z.number().int().min(0), total: z.number().int().min(0) }).strict(),
  /** Whether applying is allowed: the share of current memories it takes away against `max_share`, or a keeper with empty text. */
  guard: z
    .object({ allowed: z.boolean(), max_share: z.number(), share: z.number(), current_memories: z.number().int().min(0), reason: z.string().nullable() })
    .strict(),
  /** What the application did (zero until applied). */
  receipt: z
    .object({ merged: z.number().int().min(0), superseded: z.number().int().min(0), forgotten: z.number().int().min(0), redacted: z.number().int().min(0), recategorised: z.number().int().min(0) })
    .strict(),
  error: z.string().nullable(),
  /** Who planned it: the key id, or `schedule` for a run of the idle schedule. */
  created_by: z.string(),
  created_at: dateTime,
  updated_at: dateTime,
  applied_at: dateTime.nullable(),
  undo_until: dateTime.nullable(),
  undone_at: dateTime.nullable(),
};

/** A maintenance run's resource (`POST .../maintenance`, `GET .../maintenance/{run_id}`, apply, undo). */
export const maintenanceRun = z
  .object({ ...runFields, changes: z.array(maintenanceChange) })
  .strict()
  .meta({ id: 'MaintenanceRun' });

/** `GET /v1/agents/{agent_id}/maintenance`: runs newest first, without their diffs; `next_cursor` "" on the last page. */
export const maintenanceRunList = z
  .object({ runs: z.array(z.object(runFields).strict()), next_cursor: z.string() })
  .strict()
  .meta({ id: 'MaintenanceRunList' });

/** `GET /v1/agents/{agent_id}/maintenance` query: `limit` 1..100 (default 20), `cursor` from the last page. */
export const maintenanceListQuery = z
  .object({ limit: z.coerce.number().int().min(1).max(100).optional(), cursor: text().max(2048).optional() })
  .strict();

export type MaintenancePlanInput = z.input<typeof maintenancePlanBody>;
export type MaintenanceChangeOutput = z.output<typeof maintenanceChange>;
export type MaintenanceRunOutput = z.output<typeof maintenanceRun>;
export type MaintenanceRunListOutput = z.output<typeof maintenanceRunList>;
