/**
 * Store area `maintenanceRuns` (issue 43): maintenance runs of an agent (merge duplicates,
 * supersede across history, sweep expired), each a dry run's diff that may be applied and undone.
 * Part of the {@link Store} port (see `index.ts` for the general contract: absent is `null`,
 * records are copies, backend failures reject). A run holds ids, dates and validity only, never a
 * memory's text (the diff's texts are read from the memory index when it is shown); its rows go
 * with their agent.
 */

export type MaintenanceKind = 'merge_duplicates' | 'supersede_history' | 'sweep_expired' | 'reapply_policy';

/**
 * `dry_run`: planned, nothing changed; `applying` / `undoing`: the intent, recorded before the
 * index is changed (a process that stops there resumes it on start); `applied`, `undone`; `failed`
 * (the error says why; what was applied stays applied and can be undone).
 */
export type MaintenanceStatus = 'dry_run' | 'applying' | 'applied' | 'undoing' | 'undone' | 'failed';

/** The parts of a memory a run changes or checks, as they were when the run was planned. */
export type MaintenanceMemoryState = {
  validTo: string | null;
  supersededBy: string | null;
  /** `alsoFrom` as source references (ids only). */
  alsoFrom: MaintenanceSourceRef[];
  expiresAt: string | null;
  /** A hash of the memory's text and speaker: a text edited since the dry run is a change. */
  textHash: string;
};

/** A memory's source (`MemorySourceRef`), stored as given. */
export type MaintenanceSourceRef = Record<string, unknown> & { kind: string; threadId: string; observationId: string; turnIndex: number };

/**
 * One change of a run: `merge` (the memory is superseded by `keepId`, its sources join the
 * keeper's `alsoFrom`), `supersede` (the memory is superseded by `keepId`), `forget` (the expired
 * memory, or one the current extraction policy drops, is forgotten: restorable for the window, then
 * erased); with `reapply_policy` (issue 44) also `redact` (a new memory `keepId`, planned but not
 * written before the application, holds the redacted text; the memory is superseded by it and
 * forgotten) and `recategorise` (the memory's mark gets `category.to`).
 */
export type MaintenanceChange = {
  action: 'merge' | 'supersede' | 'forget' | 'redact' | 'recategorise';
  memoryId: string;
  /** The memory kept (merge) or replacing it (supersede); null for forget. */
  keepId: string | null;
  /** Why, in a sentence (no memory text). */
  reason: string;
  /** The `validTo` the change sets (merge, supersede); null for forget. */
  validTo: string | null;
  /** The sources the change adds to the keeper's `alsoFrom` (merge; undo takes exactly these out). */
  added: MaintenanceSourceRef[];
  before: { memory: MaintenanceMemoryState; keep: MaintenanceMemoryState | null };
  /** `reapply_policy`: the memory's category in its mark before and after (redact, recategorise). */
  category?: { from: string | null; to: string | null };
  /** `reapply_policy`: the policy version its mark recorded, and the agent's policy version the change applies. */
  policyVersion?: { from: number | null; to: number };
};

export type MaintenanceRunRecord = {
  /** `mnt_` id. */
  id: string;
  organizationId: string;
  agentId: string;
  kind: MaintenanceKind;
  status: MaintenanceStatus;
  /** Largest share (0..1) of the agent's current memories the application may take away. */
  maxShare: number;
  /** The agent's current memories when the run was planned (the guard's base). */
  currentMemories: number;
  changes: MaintenanceChange[];
  /** Changes applied (or undone, while undoing) so far. */
  done: number;
  /** Who asked (the key id, and the person when there was one). */
  createdBy: string;
  error: string | null;
  createdAt: string;
  updatedAt: string;
  appliedAt: string | null;
  /** Until when the application can be undone (set with `appliedAt`). */
  undoUntil: string | null;
  undoneAt: string | null;
};

export type MaintenanceRunStore = {
  /** Inserts a new run; its id MUST be new. */
  insert(request: { run: MaintenanceRunRecord }): Promise<void>;
  /** The run, only when it belongs to the agent. */
  get(request: { agentId: string; runId: string }): Promise<MaintenanceRunRecord | null>;
  /**
   * Applies `patch`; with `ifStatus`, only when the run's status is one of them (else resolves null,
   * changing nothing: how two requests applying one run at once are told apart). Resolves the
   * updated record (null when absent).
   */
  update(request: {
    runId: string;
    patch: Partial<Pick<MaintenanceRunRecord, 'status' | 'done' | 'error' | 'appliedAt' | 'undoUntil' | 'undoneAt'>>;
    updatedAt: string;
    ifStatus?: readonly MaintenanceStatus[];
  }): Promise<MaintenanceRunRecord | null>;
  /** The agent's runs, newest first (createdAt desc, id desc), at most `limit`, older than `before` (a run id) when given. */
  list(request: { agentId: string; limit: number; before?: string | null }): Promise<MaintenanceRunRecord[]>;
  /** Runs in any of `statuses`, across agents, oldest first (used on start to resume them). */
  listByStatus(request: { statuses: readonly MaintenanceStatus[] }): Promise<MaintenanceRunRecord[]>;
};
