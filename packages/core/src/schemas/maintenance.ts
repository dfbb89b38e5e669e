import { z } from 'zod';

/** The kinds of maintenance run (an extension, issue 43). */
export const MAINTENANCE_KINDS = ['merge_duplicates', 'supersede_history', 'sweep_expired'] as const;

/** `POST /v1/agents/{agent_id}/maintenance`: a dry run of one kind; `max_share` is the guard's share (0..1]. */
export const maintenancePlanBody = z
  .object({
    kind: z.enum(MAINTENANCE_KINDS),
    max_share: z.number().gt(0).max(1).optional(),
  })
  .strict();

export type MaintenancePlanInput = z.input<typeof maintenancePlanBody>;

/** One change of a run's diff, with the texts of the memories it touches (null once erased). */
export type MaintenanceChangeOutput = {
  action: 'merge' | 'supersede' | 'forget';
  memory_id: string;
  memory_text: string | null;
  keep_id: string | null;
  keep_text: string | null;
  reason: string;
};

/** A maintenance run's resource (`POST .../maintenance`, `GET .../maintenance/{run_id}`, apply, undo). */
export type MaintenanceRunOutput = {
  run_id: string;
  agent_id: string;
  kind: (typeof MAINTENANCE_KINDS)[number];
  status: 'dry_run' | 'applying' | 'applied' | 'undoing' | 'undone' | 'failed';
  /** `done` changes applied (or undone while undoing) of `total`. */
  progress: { done: number; total: number };
  /** Whether applying is allowed: the share of current memories it takes away against `max_share`. */
  guard: { allowed: boolean; max_share: number; share: number; current_memories: number; reason: string | null };
  /** What the application did (zero until applied). */
  receipt: { merged: number; superseded: number; forgotten: number };
  changes: MaintenanceChangeOutput[];
  error: string | null;
  created_at: string;
  updated_at: string;
  applied_at: string | null;
  undo_until: string | null;
  undone_at: string | null;
};

/** `GET /v1/agents/{agent_id}/maintenance`: runs newest first, without their diffs; `next_cursor` "" on the last page. */
export type MaintenanceRunListOutput = { runs: Omit<MaintenanceRunOutput, 'changes'>[]; next_cursor: string };
