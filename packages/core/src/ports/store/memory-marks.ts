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

/** What a review decision did (issue 43): approve, decline, edit the text, or undo the last approve or decline. */
export type ReviewAction = 'approve' | 'decline' | 'edit' | 'undo';

/** One decision on a proposed memory, for the audit: what, when, by whom, and the reason given. */
export type ReviewDecision = { action: ReviewAction; at: string; by: string; reason: string | null };

/** Where a memory stands in the review queue (issue 43). */
export type ReviewState = 'pending' | 'approved' | 'declined';

/**
 * A memory learning proposed under the agent's `review_mode` (issue 43): hidden from every read
 * path (it expires at the instant it was proposed, as a forgotten memory does) until a person
 * approves it; a declined one stays hidden, and its fingerprint keeps learning from proposing it again.
 */
export type MemoryReview = {
  state: ReviewState;
  /**
   * Why it was held: `inferred` (its words are not the source's: a paraphrase, a resolved date, a
   * reflection), `all` (every memory is reviewed), `relearn` (a turn learned again reads differently).
   */
  heldAs: 'inferred' | 'all' | 'relearn';
  /** ISO date-time it was proposed. */
  proposedAt: string;
  /** A hash of its speaker and normalised text: what a decline refuses for good. */
  fingerprint: string;
  /** The memory's own expiry (from the words or the observe body), given back on approval. */
  expiresAtBefore: string | null;
  /** Memories the writer said it replaces: superseded when it is approved (if still current then). */
  supersedes: string[];
  /** The memories its approval superseded (undo makes them current again). */
  superseded: string[];
  /** Every decision, oldest first. */
  decisions: ReviewDecision[];
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
  /** Its place in the review queue (issue 43). @default null (never held for review) */
  review?: MemoryReview | null;
  updatedAt: string;
};

/** A memory and where it was learned, as a mark records it. */
export type MemoryMarkSource = Pick<MemoryMarkRecord, 'memoryId' | 'threadId' | 'observationId' | 'sourceId'>;

/** A memory just learned and what the extraction policy said of it (see {@link MemoryMarkStore.recordLearned}). */
export type LearnedMark = MemoryMarkSource & { category: string | null; policyVersion: number | null; review?: MemoryReview | null };

/** One page of the review queue: marks oldest proposal first, and where the next page starts. */
export type ReviewPage = { records: MemoryMarkRecord[]; nextCursor: string | null };

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
   * stay. A memory named twice: the last entry counts. A `review` given (issue 43) is set too; an
   * entry without one keeps the mark's.
   */
  recordLearned(request: { organizationId: string; agentId: string; memories: readonly LearnedMark[]; at: string }): Promise<void>;
  /** Removes the marks of these memories (absent ones are ignored). */
  delete(request: { agentId: string; memoryIds: readonly string[] }): Promise<void>;
  /** Removes the agent's marks of memories learned in the thread / observation / source given (all given must match). */
  deleteBy(request: { agentId: string; threadId?: string; observationId?: string; sourceId?: string }): Promise<void>;
  /**
   * The agent's marks whose review is in `state` (issue 43), oldest proposal first (ties by memory
   * id), `limit` at most, from `cursor` (the `nextCursor` of the page before; opaque).
   */
  listReview(request: { agentId: string; state: ReviewState; limit: number; cursor?: string | null }): Promise<ReviewPage>;
  /** Which of these fingerprints the agent's review declined (issue 43): a declined proposal is never proposed again. */
  declinedFingerprints(request: { agentId: string; fingerprints: readonly string[] }): Promise<string[]>;
  /** Forgotten marks whose `restoreUntil` is at or before `before`, soonest first, of any organization. */
  listForgottenDue(request: { before: string; limit: number }): Promise<MemoryMarkRecord[]>;
};
