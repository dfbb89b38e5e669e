/**
 * Store area `learning`: the turns a job did not learn, per thread.
 * Part of the {@link Store} port (see `index.ts` for the general contract: absent is `null`,
 * records are copies, backend failures reject).
 */

/**
 * Every learning reason (spec "ObservationLearning") -> the sentence shown to a person. A reason
 * is `keyof` this table (`LearningReason`), so an unknown reason does not compile.
 */
export const LEARNING_REASONS = {
  generation_failed: { message: 'Writing the memory for these turns failed; send them again.' },
  model_unavailable: { message: 'The model that writes memories could not be reached; send these turns again.' },
  generation_timeout: { message: 'Writing the memory for these turns timed out; send them again.' },
  generation_unparseable: { message: 'The model wrote memories that could not be read; send these turns again.' },
  memory_commit_shortfall: { message: 'The memories of these turns could not be stored in the memory index; send them again.' },
  embedder_mismatch: { message: 'The memory index was built with a different embedder than the one configured; these turns were not learned.' },
  earlier_turn_failed: { message: 'An earlier turn of this request was not learned, so these were not either; send them again.' },
  queue_full: { message: 'Too much was waiting to be learned; send these turns again.' },
  job_failed: { message: 'The learning job stopped on an error of its own; send these turns again.' },
  cancelled: { message: 'The learning job was cancelled; send these turns again.' },
  credits_exhausted: {
    message: 'The organization ran out of credit before these turns were read; nothing was charged for them. Add credits and send them again.',
  },
} as const satisfies Record<string, { message: string }>;

/** Why turns were not learned: a key of {@link LEARNING_REASONS}. */
export type LearningReason = keyof typeof LEARNING_REASONS;

/** The turns a finished job did not learn, and why (spec "ObservationLearning"). */
export type LearningReport = {
  /** 1-based inclusive ranges of the job's turns. */
  ranges: { first: number; last: number }[];
  reason: LearningReason;
  message: string;
  /** Decimal string of credits refunded for the input side, or null when nothing was charged. */
  refundedCredits: string | null;
};

export type NotLearnedRecord = LearningReport & {
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

export type NotLearnedStore = {
  insert(request: { record: Omit<NotLearnedRecord, 'id' | 'reported'> }): Promise<number>;
  /** Newest first; with `beforeId`, only records with a smaller id. */
  list(request: { threadId: string; limit: number; beforeId?: number }): Promise<NotLearnedRecord[]>;
  /**
   * Marks the thread's unreported records reported and resolves them, oldest first. Of concurrent
   * calls, each record is returned by exactly one.
   */
  takeUnreported(request: { threadId: string }): Promise<NotLearnedRecord[]>;
};
