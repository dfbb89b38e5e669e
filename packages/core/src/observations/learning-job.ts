import { describeError } from '../service/logger.js';
import { LEARNING_REASONS, type JobRecord, type LearningReason, type LearningReport, type TurnRecord } from '../ports/store/index.js';
import { CREDITS_EXHAUSTED_REASON } from '../credits/credits.js';
import { isDependencyUnavailable } from '../store/available-store.js';
import type { ServiceContext } from '../service/context.js';
import { inSpan } from '../service/telemetry.js';
import { turnRanges } from './learning-report.js';
import { JobStopped, type JobRun } from './job-run.js';
import { learnBatch, type TurnResult } from './learn-batch.js';
import { updateJobWithEvents } from '../webhooks/events.js';
import { detachMerged } from '../erasures/merged.js';

/** Most turns handed to the memory writer (and committed to the index) at once. */
export const TURN_BATCH = 128;
/**
 * Most characters of turn text in one batch (a batch always holds at least one turn). Long turns
 * make small batches, so one index commit stays bounded and a crash loses little work; short
 * conversation turns make one batch per `observe` (an index commit has a fixed cost).
 */
export const TURN_BATCH_CHARS = 256_000;

/**
 * Runs one job to its final status: marks it `processing` (a job found mid-flight was interrupted
 * by a dead process and resumes at its first turn not yet finished, with `resumedAt` set), learns
 * its turns batch by batch, then settles it. Returns early, leaving it resumable, when the run stops.
 */
export function processJob(run: JobRun, found: JobRecord): Promise<void> {
  return inSpan('memory_agents.learning.job', { 'memory_agents.job.kind': found.kind, 'memory_agents.job.turns': found.turnsTotal }, () => runJob(run, found));
}

async function runJob(run: JobRun, found: JobRecord): Promise<void> {
  const { store } = run.context;
  const nowIso = () => run.context.nowIso();
  let job = found;
  // Found mid-flight with the lease free: its worker died. Mark it, then resume where it stopped.
  if (job.status === 'processing' || job.status === 'interrupted') {
    if (job.status === 'processing') await store.jobs.update({ jobId: job.id, patch: { status: 'interrupted', updatedAt: nowIso() } });
    job = (await store.jobs.update({ jobId: job.id, patch: { status: 'processing', resumedAt: nowIso(), updatedAt: nowIso() } })) ?? job;
  } else {
    job = (await store.jobs.update({ jobId: job.id, patch: { status: 'processing', queued: false, updatedAt: nowIso() } })) ?? job;
  }
  // A job that starts with no turn finished and commits all its turns in this run has no failed
  // turn to report: it settles in one statement.
  let allCommitted = false;
  try {
    const committed = await processTurns(run, job);
    allCommitted = job.turnsProcessed === 0 && committed === job.turnsTotal;
  } catch (error) {
    if (error instanceof JobStopped) return forgetIfStoppedCancelled(run.context, job);
    // The database (or the index) went away: nothing is failed; the job stays `processing` and the
    // next sweep after the database is back resumes it from its last committed turn (the worker
    // stops here rather than look for the next job at once).
    if (isDependencyUnavailable(error)) {
      run.context.logger.warn('observation job paused: a dependency did not respond; it resumes when it answers', { jobId: job.id, error: describeError(error) });
      throw error;
    }
    run.context.logger.error('observation job failed', { jobId: job.id, error: describeError(error) });
    await failRemaining(run.context, job, 'job_failed');
  }
  if (run.shouldStop()) return forgetIfStoppedCancelled(run.context, job);
  await settle(run.context, job, allCommitted);
}

/** Learns the job's unfinished turns batch by batch; resolves how many turns this run committed. */
async function processTurns(run: JobRun, job: JobRecord): Promise<number> {
  const { store } = run.context;
  let fromIndex = 0;
  let committed = 0;
  // Turns are only appended while a job is `converting`, never while it is processed: past its
  // last turn there is nothing left to list, and settling checks for a cancel once more.
  while (fromIndex < job.turnsTotal) {
    if (run.shouldStop()) throw new JobStopped();
    // The job as just set `processing` needs no second read before its first batch.
    const current = fromIndex === 0 ? job : await store.jobs.get({ agentId: job.agentId, jobId: job.id });
    if (!current || current.status === 'cancelled') {
      await forgetCancelled(run.context, job);
      throw new JobStopped();
    }
    const next = await nextBatch(run.context, job, fromIndex);
    if (!next) break;
    fromIndex = next.fromIndex;
    if (next.batch.length === 0) continue;
    const results = await learnTurns(run, job, next.batch);
    await recordResults(run.context, job, results);
    committed += results.filter((result) => result.ok).length;
    if (results.some((result) => !result.ok && result.reason === 'embedder_mismatch')) {
      await failRemaining(run.context, job, 'embedder_mismatch');
      break;
    }
    // A reconciling writer (port "MemoryWriter") learns turns in order: after a failed turn the
    // rest of the job is not learned against a memory missing it, and a resend replays in order.
    if (run.context.writer.capabilities?.reconciles && results.some((result) => !result.ok && result.reason !== CREDITS_EXHAUSTED_REASON)) {
      await failRemaining(run.context, job, 'earlier_turn_failed');
      break;
    }
  }
  return committed;
}

/**
 * The next batch of unfinished turns from `fromIndex` (bounded by {@link TURN_BATCH} turns and
 * {@link TURN_BATCH_CHARS} characters) and where the following one starts; null past the last turn.
 * Committed and failed turns are final: a resumed job never reads them again.
 */
async function nextBatch(context: ServiceContext, job: JobRecord, fromIndex: number): Promise<{ batch: TurnRecord[]; fromIndex: number } | null> {
  const page = await context.store.turns.list({ jobId: job.id, fromIndex, limit: TURN_BATCH });
  if (page.length === 0) return null;
  const batch: TurnRecord[] = [];
  let chars = 0;
  let next = page.at(-1)!.turnIndex + 1;
  for (const turn of page) {
    if (turn.state !== 'pending' && turn.state !== 'read') continue;
    if (batch.length > 0 && chars + turn.text.length > TURN_BATCH_CHARS) {
      next = turn.turnIndex;
      break;
    }
    batch.push(turn);
    chars += turn.text.length;
  }
  return { batch, fromIndex: next };
}

/** Reads (and charges) the batch's fresh turns, then learns those the balance covered. */
async function learnTurns(run: JobRun, job: JobRecord, batch: TurnRecord[]): Promise<TurnResult[]> {
  // A turn is read and charged once, in one transaction (credits/credits.ts): resumed turns in
  // `read` are not read again; turns the balance cannot cover are not read and fail.
  const { refused } = await run.context.credits.readTurns(job, batch.filter((turn) => turn.state === 'pending'));
  const refusedIndexes = new Set(refused.map((turn) => turn.turnIndex));
  const readable = batch.filter((turn) => !refusedIndexes.has(turn.turnIndex));
  return [
    ...refused.map((turn): TurnResult => ({ turnIndex: turn.turnIndex, ok: false, reason: CREDITS_EXHAUSTED_REASON })),
    ...(readable.length > 0 ? await learnBatch(run, job, readable) : []),
  ];
}

async function recordResults(context: ServiceContext, job: JobRecord, results: TurnResult[]): Promise<void> {
  const { store } = context;
  const committed = results.filter((result) => result.ok).map((result) => result.turnIndex);
  if (committed.length > 0) {
    await store.turns.setStates({ jobId: job.id, turnIndexes: committed, state: 'committed' });
    context.telemetry({ kind: 'turns_learned', turns: committed.length });
  }
  const failures = new Map<LearningReason, number[]>();
  for (const result of results) {
    if (result.ok) continue;
    failures.set(result.reason, [...(failures.get(result.reason) ?? []), result.turnIndex]);
  }
  for (const [reason, turnIndexes] of failures) await store.turns.setStates({ jobId: job.id, turnIndexes, state: 'failed', failureReason: reason });
}

/**
 * A job is cancelled (or gone) when its thread or agent is deleted. The deletion removes the
 * memories learned so far, but a batch committed while it ran lands after that: remove what this
 * job wrote, so a deleted conversation is forgotten (docs/decisions.md "Thread delete").
 */
async function forgetCancelled(context: ServiceContext, job: JobRecord): Promise<void> {
  try {
    await detachMerged(context, job.agentId, [job.id]);
    await context.index.deleteBy({ agentId: job.agentId, observationId: job.id });
    await context.store.memoryMarks.deleteBy({ agentId: job.agentId, observationId: job.id });
  } catch (error) {
    context.logger.warn('forgetting a cancelled job failed', { jobId: job.id, error: describeError(error) });
  }
}

/** Every turn of the job in the given states, in order. */
async function turnsIn(context: ServiceContext, job: JobRecord, states: readonly TurnRecord['state'][]): Promise<TurnRecord[]> {
  const found: TurnRecord[] = [];
  for (let fromIndex = 0; ; ) {
    const page = await context.store.turns.list({ jobId: job.id, fromIndex, limit: 1000 });
    if (page.length === 0) return found;
    found.push(...page.filter((turn) => states.includes(turn.state)));
    fromIndex = page.at(-1)!.turnIndex + 1;
  }
}

/** Fails every turn of the job not yet committed or failed. */
async function failRemaining(context: ServiceContext, job: JobRecord, reason: LearningReason): Promise<void> {
  const remaining = (await turnsIn(context, job, ['pending', 'read'])).map((turn) => turn.turnIndex);
  if (remaining.length > 0) await context.store.turns.setStates({ jobId: job.id, turnIndexes: remaining, state: 'failed', failureReason: reason });
}

/**
 * Final status: committed when every turn committed; failed (with a learning report) otherwise.
 * Only a job still `processing` is settled: one cancelled meanwhile keeps its status and loses
 * what this run wrote.
 */
async function settle(context: ServiceContext, job: JobRecord, allCommitted: boolean): Promise<void> {
  const { store } = context;
  const committed = { jobId: job.id, patch: { status: 'committed' as const, updatedAt: context.nowIso() }, ifStatus: ['processing' as const] };
  // Every turn committed in this run (the usual case): no read, count or listing before the update.
  if (allCommitted && (await updateJobWithEvents(context, committed))) return;
  const current = await store.jobs.get({ agentId: job.agentId, jobId: job.id });
  if (!current || current.status !== 'processing') {
    if (!current || current.status === 'cancelled') await forgetCancelled(context, job);
    return;
  }
  // Counting first: a job that learned every turn is not listed again.
  const counts = await store.turns.counts({ jobId: job.id });
  const failed =
    counts.failed > 0
      ? (await turnsIn(context, job, ['failed'])).map((turn) => ({ turnIndex: turn.turnIndex, reason: turn.failureReason ?? 'generation_failed' }))
      : [];
  if (failed.length === 0) {
    if (!(await updateJobWithEvents(context, committed))) await forgetIfCancelled(context, job);
    return;
  }
  await settleFailed(context, job, failed);
}

/**
 * A run that stops without settling (the service stopping, or the agent's lease lost to another
 * process) may have committed a batch after a thread delete or an erasure cancelled the job and
 * removed its memories: no other run settles a cancelled or deleted job, so this one forgets what
 * it wrote. Best effort: a store going away leaves the job to the erasure's own removal.
 */
async function forgetIfStoppedCancelled(context: ServiceContext, job: JobRecord): Promise<void> {
  try {
    await forgetIfCancelled(context, job);
  } catch (error) {
    context.logger.warn('checking a stopped job for a cancel failed', { jobId: job.id, error: describeError(error) });
  }
}

/** After a settling update found the job no longer `processing`: a cancelled (or deleted) job forgets this run's memories. */
async function forgetIfCancelled(context: ServiceContext, job: JobRecord): Promise<void> {
  const current = await context.store.jobs.get({ agentId: job.agentId, jobId: job.id });
  if (!current || current.status === 'cancelled') await forgetCancelled(context, job);
}

/** A job with turns not learned: their input credits come back, a learning record reports them, the job fails. */
async function settleFailed(context: ServiceContext, job: JobRecord, failed: { turnIndex: number; reason: LearningReason }[]): Promise<void> {
  const { store } = context;
  const now = context.nowIso();
  const reason = failed[0]!.reason;
  // The input side of turns charged and not learned comes back, once per job.
  const refundedCredits = await context.credits.refundTurns(job, failed.map((turn) => turn.turnIndex));
  const report: LearningReport = {
    ranges: turnRanges(failed.map((turn) => turn.turnIndex)),
    reason,
    message: LEARNING_REASONS[reason].message,
    refundedCredits,
  };
  await store.notLearned.insert({
    record: {
      ...report,
      organizationId: job.organizationId,
      agentId: job.agentId,
      threadId: job.threadId,
      jobId: job.id,
      requestId: job.requestId,
      createdAt: now,
    },
  });
  const settled = await updateJobWithEvents(context, {
    jobId: job.id,
    patch: { status: 'failed', error: `${failed.length} of ${job.turnsTotal} turns were not learned (${reason}).`, learning: report, updatedAt: now },
    ifStatus: ['processing'],
  });
  if (!settled) await forgetIfCancelled(context, job);
}
