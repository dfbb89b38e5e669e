import { describeError } from '../service/logger.js';
import type { ErasureCounts, ThreadRecord, UploadRecord } from '../ports/store/index.js';
import type { ServiceContext } from '../service/context.js';
import { sourceBlobKey } from '../sources/read-document.js';
import { detachMerged } from './merged.js';

/**
 * The removal steps erasure, thread delete and agent delete share (issue 30: erasure that leaves
 * no copy). Each step is idempotent, so a job resumed after a restart runs them again safely.
 */

export const NO_COUNTS: ErasureCounts = { memories: 0, threads: 0, observations: 0, originals: 0, replays: 0 };

/** Memories of the agent removed by `fn` (the index's count before and after). */
export async function countingRemovals(context: ServiceContext, agentId: string, fn: () => Promise<void>): Promise<number> {
  const before = (await context.index.stats({ agentId })).count;
  await fn();
  return Math.max(0, before - (await context.index.stats({ agentId })).count);
}

/**
 * A thread and everything derived from it: its jobs are cancelled (a learning batch in flight
 * forgets what it wrote), its turns taken out of the memories they were merged into and its merged
 * memories re-pointed ({@link detachMerged}), its memories removed from the index (no byte left: `deleteBy`), then the
 * thread with its messages, jobs, turns, learning records and upload records. Resolves the upload
 * records it had (their originals and replays are dropped by the caller).
 */
export async function eraseThread(context: ServiceContext, thread: ThreadRecord): Promise<UploadRecord[]> {
  const uploads = await context.store.uploads.listByThread({ agentId: thread.agentId, threadId: thread.id });
  await context.store.jobs.cancelForThread({ threadId: thread.id, at: context.nowIso() });
  const jobs = await context.store.jobs.allForThread({ threadId: thread.id });
  await detachMerged(context, thread.agentId, jobs.map((job) => job.id));
  await context.index.deleteBy({ agentId: thread.agentId, threadId: thread.id });
  await context.store.memoryMarks.deleteBy({ agentId: thread.agentId, threadId: thread.id });
  await context.store.threads.delete({ agentId: thread.agentId, threadId: thread.id });
  return uploads;
}

/**
 * Observation jobs of the agent and everything derived from them: cancelled first (a batch in
 * flight forgets its memories when it settles), their memories removed, then the jobs with their
 * turns (the text kept for citations), details, learning records and upload records. Deleted
 * jobs cannot be leased again, so nothing erased is learned again.
 */
export async function eraseJobs(context: ServiceContext, agentId: string, jobIds: readonly string[]): Promise<number> {
  for (const jobId of jobIds) {
    await context.store.jobs.update({ jobId, patch: { status: 'cancelled', updatedAt: context.nowIso() }, ifStatus: ['queued', 'converting', 'processing', 'interrupted'] });
  }
  await detachMerged(context, agentId, jobIds);
  for (const jobId of jobIds) {
    await context.index.deleteBy({ agentId, observationId: jobId });
    await context.store.memoryMarks.deleteBy({ agentId, observationId: jobId });
  }
  return context.store.jobs.delete({ agentId, jobIds });
}

/**
 * Stored originals (and their figure crops) no upload of the organization still uses: removed
 * from the blob store. Resolves how many were removed.
 */
export async function dropOriginals(context: ServiceContext, organizationId: string, sourceIds: Iterable<string>): Promise<number> {
  let dropped = 0;
  for (const sourceId of new Set(sourceIds)) {
    if (sourceId === '' || (await context.store.uploads.findStored({ organizationId, sourceId }))) continue;
    await context.blobs.delete({ key: sourceBlobKey(organizationId, sourceId) });
    await context.blobs.deletePrefix({ prefix: `figures/${organizationId}/${sourceId}/` });
    dropped++;
  }
  return dropped;
}

/** Idempotent replays of the organization mentioning any of `ids` are forgotten. */
export function forgetReplays(context: ServiceContext, organizationId: string, ids: readonly string[]): Promise<number> {
  return context.store.idempotency.forget({ organizationId, mentioning: ids });
}

/**
 * Storage reclaim after removals (`store.erasures.reclaim`: a plain VACUUM on PostgreSQL/PGlite),
 * in the background and never inside a transaction; calls while one runs fold into one more run.
 */
export function createReclaimer(context: ServiceContext) {
  let running: Promise<void> | null = null;
  let again = false;
  const loop = async () => {
    do {
      again = false;
      try {
        await context.store.erasures.reclaim();
      } catch (error) {
        context.logger.warn('storage reclaim after an erasure failed', { error: describeError(error) });
      }
    } while (again);
    running = null;
  };
  return {
    /** Schedules a reclaim; resolves when the run that covers this call ends. */
    schedule(): Promise<void> {
      if (running) {
        again = true;
        return running;
      }
      running = loop();
      context.background.run('storage reclaim', {}, () => running ?? Promise.resolve());
      return running;
    },
  };
}

export type Reclaimer = ReturnType<typeof createReclaimer>;
