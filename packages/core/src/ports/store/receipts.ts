import type { ModelUsage } from '../model-usage.js';

/**
 * Store area `receipts`: what a job's learning did, kept per job for its receipt (issue 33):
 * memories it superseded, turns merged into existing memories, memories the extraction policy
 * did not keep, and model tokens per batch. Every entry goes with its job (`jobs.delete`).
 * Part of the {@link Store} port (see `index.ts` for the general contract).
 */

/**
 * Memories a job's learning superseded (issue 33, receipts): `turnIndex` is the turn whose memory
 * replaced them, null for a supersession without a successor ("no longer true").
 */
export type JobSupersession = { turnIndex: number | null; memoryIds: string[] };

/**
 * A memory a turn's learning wrote that the agent's extraction policy did not keep (issue 44): its
 * category (null: none) and the rule, as the sentence the receipt shows.
 */
export type JobPolicyDrop = { turnIndex: number; category: string | null; rule: string };

/**
 * Model tokens one batch of a job's learning used (issue 33, receipts): the turns the batch sent to
 * the models (ascending) and, per model id, the tokens (the writer's language model, and the
 * embedder under its id with `outputTokens` 0).
 */
export type JobModelUsage = { turnIndexes: number[]; usage: ModelUsage[] };

/**
 * A turn of a job merged into an existing memory as a near-duplicate (issue 33): no memory of its
 * own, its source added to `memoryId`'s `alsoFrom`.
 */
export type JobMerge = { turnIndex: number; memoryId: string };

export type ReceiptStore = {
  /**
   * Records memories the job's learning superseded (appended to what is recorded; a memory id
   * recorded again for the job is kept once). Ignored when the job is absent.
   */
  recordSupersessions(request: { jobId: string; supersessions: readonly JobSupersession[] }): Promise<void>;
  /** What {@link ReceiptStore.recordSupersessions} recorded for the job, one entry per turn (null last), ids in recording order. */
  supersessions(request: { jobId: string }): Promise<JobSupersession[]>;
  /**
   * Records the model tokens of one learning batch. It replaces what is recorded for every earlier
   * batch of the job that shares a turn with it (a batch re-run after a crash replaces, never adds);
   * a batch with no usage is not kept. Ignored when the job is absent.
   */
  recordModelUsage(request: { jobId: string; batch: JobModelUsage }): Promise<void>;
  /** What {@link ReceiptStore.recordModelUsage} kept for the job, by first turn index, models in recorded order. */
  modelUsage(request: { jobId: string }): Promise<JobModelUsage[]>;
  /**
   * Records turns of the job merged into existing memories; a turn recorded again keeps the latest
   * memory id. Ignored when the job is absent. Goes with the job (`delete`).
   */
  recordMerges(request: { jobId: string; merges: readonly JobMerge[] }): Promise<void>;
  /** What {@link ReceiptStore.recordMerges} recorded for the job, by turn index ascending. */
  merges(request: { jobId: string }): Promise<JobMerge[]>;
  /**
   * Records memories of the job's turns the extraction policy did not keep (issue 44, receipts);
   * a turn recorded again replaces its earlier entries (a resumed batch). Ignored when the job is
   * absent. Goes with the job (`delete`).
   */
  recordPolicyDrops(request: { jobId: string; drops: readonly JobPolicyDrop[] }): Promise<void>;
  /** What {@link ReceiptStore.recordPolicyDrops} recorded for the job, by turn index ascending then recording order. */
  policyDrops(request: { jobId: string }): Promise<JobPolicyDrop[]>;
};
