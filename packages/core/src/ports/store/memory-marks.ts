/**
 * Store area `memoryMarks` (issue 42): what people did to a memory besides learning it: pinned it,
 * forgot it with a reason (restorable until a date), edited it, and how often answers cited it;
 * and what the agent's extraction policy said when it was learned (issue 44): its category and the
 * policy version that kept it.
 * Part of the {@link Store} port (see `index.ts` for the general contract). A mark holds ids, dates,
 * flags and the caller's reason, never the memory's text; it goes with its agent.
 */

/** A memory forgotten softly: hidden everywhere, restorable until `restoreUntil`, then erased. */
export type MemoryForgetting = {
  /** ISO date-time it was forgotten (the memory expires at this instant in the index). */
  at: string;
  /** The caller's reason, as given (1..500 characters). */
  reason: string;
  /** Who forgot it: the API key id, with the end user when the request carried one. */
  by: string;
  /** ISO date-time until which `restore` brings it back; afterwards it is erased. */
  restoreUntil: string;
  /** The memory's `expiresAt` before it was forgotten, given back on restore. */
  expiresAtBefore: string | null;
};

/** A memory written by an edit: the memory it replaced (now superseded history), by whom, when. */
export type MemoryEdit = { at: string; by: string; fromMemoryId: string };

export type MemoryMarkRecord = {
  organizationId: string;
  agentId: string;
  memoryId: string;
  /** Where the memory was learned (so an erasure of the thread, observation or source takes the mark too). */
  threadId: string;
  observationId: string;
  sourceId: string | null;
  /** Pinned: never decays, and pinning clears an expiry (a later explicit expiry still applies). */
  pinned: boolean;
  forgotten: MemoryForgetting | null;
  edited: MemoryEdit | null;
  /** ISO date-time an answer last cited it (decay reinforcement), or null. */
  citedAt: string | null;
  citedCount: number;
  /** The category of the agent's extraction policy it was given when learned (issue 44). @default null */
  category?: string | null;
  /** The version of the extraction policy that kept it (issue 44). @default null (no policy) */
  policyVersion?: number | null;
  updatedAt: string;
};

/** A memory and where it was learned, as a mark records it. */
export type MemoryMarkSource = Pick<MemoryMarkRecord, 'memoryId' | 'threadId' | 'observationId' | 'sourceId'>;

/** A memory just learned and what the extraction policy said of it (see {@link MemoryMarkStore.recordLearned}). */
export type LearnedMark = MemoryMarkSource & { category: string | null; policyVersion: number | null };

export type MemoryMarkStore = {
  /** The marks of these memories of the agent (memories with none are absent from the result). */
  get(request: { agentId: string; memoryIds: readonly string[] }): Promise<MemoryMarkRecord[]>;
  /** Creates or replaces the mark of `record.memoryId`. */
  put(request: { record: MemoryMarkRecord }): Promise<void>;
  /**
   * Records that an answer cited these memories at `at`: `citedAt = at`, `citedCount + 1`, creating
   * a mark (with the memory's source) where there is none; a memory named twice counts once.
   */
  cite(request: { organizationId: string; agentId: string; memories: readonly MemoryMarkSource[]; at: string }): Promise<void>;
  /**
   * Records what the extraction policy said of memories just learned (issue 44), in one write:
   * sets `category` and `policyVersion` (and `updatedAt = at`) of each, creating a mark (with the
   * memory's source, nothing else set) where there is none; the other fields of an existing mark
   * stay. A memory named twice: the last entry counts.
   */
  recordLearned(request: { organizationId: string; agentId: string; memories: readonly LearnedMark[]; at: string }): Promise<void>;
  /** Removes the marks of these memories (absent ones are ignored). */
  delete(request: { agentId: string; memoryIds: readonly string[] }): Promise<void>;
  /** Removes the agent's marks of memories learned in the thread / observation / source given (all given must match). */
  deleteBy(request: { agentId: string; threadId?: string; observationId?: string; sourceId?: string }): Promise<void>;
  /** Forgotten marks whose `restoreUntil` is at or before `before`, soonest first, of any organization. */
  listForgottenDue(request: { before: string; limit: number }): Promise<MemoryMarkRecord[]>;
};
