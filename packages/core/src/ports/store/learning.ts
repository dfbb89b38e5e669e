/**
 * Store area `learning`: the turns a job did not learn, per thread.
 * Part of the {@link Store} port (see `index.ts` for the general contract: absent is `null`,
 * records are copies, backend failures reject).
 */

/** The turns a finished job did not learn, and why (spec "ObservationLearning"). */
export type LearningReport = {
  /** 1-based inclusive ranges of the job's turns. */
  ranges: { first: number; last: number }[];
  reason: string;
  message: string;
  /** Decimal string of credits refunded for the input side, or null when nothing was charged. */
  refundedCredits: string | null;
};

export type LearningRecord = LearningReport & {
  /** Assigned by the store, increasing. */
  id: number;
  organizationId: string;
  agentId: string;
  threadId: string;
  jobId: string;
  /** Request id of the call whose turns were not learned. */
  requestId: string;
  /** True once a chat response in the thread reported it. */
  reported: boolean;
  createdAt: string;
};

export type LearningStore = {
  insert(request: { record: Omit<LearningRecord, 'id' | 'reported'> }): Promise<number>;
  /** Newest first; with `beforeId`, only records with a smaller id. */
  list(request: { threadId: string; limit: number; beforeId?: number }): Promise<LearningRecord[]>;
  /**
   * Marks the thread's unreported records reported and resolves them, oldest first. Of concurrent
   * calls, each record is returned by exactly one.
   */
  takeUnreported(request: { threadId: string }): Promise<LearningRecord[]>;
};
