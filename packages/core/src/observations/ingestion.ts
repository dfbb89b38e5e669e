import { EmbedderMismatchError, type MemoryRecord, type MemorySourceRef } from '../ports/memory-index.js';
import { LanguageModelError } from '../ports/language-model.js';
import type { TurnOutcome, WriterTurn } from '../ports/memory-writer.js';
import type { JobRecord, LearningReport, TurnRecord } from '../ports/store.js';
import { CREDITS_EXHAUSTED_REASON } from '../credits/credits.js';
import type { ServiceContext } from '../service/context.js';
import { LEARNING_MESSAGES, turnRanges } from './learning-report.js';

/** How long a worker's claim on an agent's ingestion slot lasts without renewal. */
export const INGESTION_LEASE_MS = 30_000;
/** How often a running worker renews its lease. */
export const INGESTION_RENEW_MS = 10_000;
/** How often a process looks for jobs nobody is running (a crashed process's, or new ones). */
export const INGESTION_SWEEP_MS = 5_000;
/** Most turns handed to the memory writer (and committed to the index) at once. */
export const TURN_BATCH = 128;
/**
 * Most characters of turn text in one batch (a batch always holds at least one turn). Long turns
 * make small batches, so one index commit stays bounded and a crash loses little work; short
 * conversation turns make one batch per `observe` (an index commit has a fixed cost).
 */
export const TURN_BATCH_CHARS = 256_000;
/** Index commits tried before a batch's turns are reported `memory_commit_shortfall`. */
const COMMIT_ATTEMPTS = 3;

/** A turn whose outcome is final for this run: committed to the index, or failed with a reason. */
type TurnResult = { turnIndex: number; ok: true } | { turnIndex: number; ok: false; reason: string };

class JobStopped extends Error {}

/**
 * Runs observation jobs. One worker per agent at a time across every process: a worker holds the
 * agent's lease (`ingest:<agentId>`) while it processes that agent's jobs in arrival order, and
 * renews it; a job found `processing` without a live lease was interrupted by a dead process and
 * resumes at its first turn not yet finished, with `resumedAt` set.
 */
export class IngestionScheduler {
  readonly #context: ServiceContext;
  readonly #running = new Map<string, Promise<void>>();
  readonly #wanted = new Set<string>();
  #sweepTimer: NodeJS.Timeout | null = null;
  #stopped = true;
  #abort = new AbortController();

  constructor(context: ServiceContext) {
    this.#context = context;
  }

  /** Starts the sweep that picks up unfinished jobs (including a previous process's). */
  async start(): Promise<void> {
    this.#stopped = false;
    if (this.#abort.signal.aborted) this.#abort = new AbortController();
    if (!this.#context.store.capabilities.shared) await this.#reclaimDeadLeases();
    await this.sweep();
    this.#sweepTimer = setInterval(() => void this.sweep(), INGESTION_SWEEP_MS);
    this.#sweepTimer.unref();
  }

  /** Stops taking work and waits for running workers; a turn in flight finishes or stays resumable. */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#sweepTimer) clearInterval(this.#sweepTimer);
    this.#abort.abort();
    await Promise.allSettled([...this.#running.values()]);
  }

  /** Resolves when no worker of this process is running. */
  async idle(): Promise<void> {
    while (this.#running.size > 0) await Promise.allSettled([...this.#running.values()]);
  }

  /**
   * With a store only one process can open (PGlite, in-memory), an ingestion lease held by another
   * holder when this process starts belongs to a process that died (SIGKILL, power loss). Freeing
   * it lets the interrupted jobs resume now instead of after the lease lapses (spec "States /
   * Observation job": `interrupted` resumes by itself).
   */
  async #reclaimDeadLeases(): Promise<void> {
    const { store, instanceId } = this.#context;
    try {
      for (const agentId of await store.jobs.agentsWithUnfinishedJobs()) {
        const lease = await store.leases.get({ name: `ingest:${agentId}` });
        if (lease && lease.holder !== instanceId) await store.leases.release({ name: lease.name, holder: lease.holder });
      }
    } catch (error) {
      this.#context.logger.warn('ingestion lease recovery failed', { error: String(error) });
    }
  }

  async sweep(): Promise<void> {
    if (this.#stopped) return;
    try {
      for (const agentId of await this.#context.store.jobs.agentsWithUnfinishedJobs()) this.kick(agentId);
    } catch (error) {
      this.#context.logger.warn('ingestion sweep failed', { error: String(error) });
    }
  }

  /** Makes sure a worker runs the agent's jobs (here, unless another process holds the lease). */
  kick(agentId: string): void {
    if (this.#stopped) return;
    if (this.#running.has(agentId)) {
      this.#wanted.add(agentId);
      return;
    }
    const run = this.#runAgent(agentId)
      .catch((error: unknown) => this.#context.logger.error('ingestion worker failed', { agentId, error: String(error) }))
      .finally(() => {
        this.#running.delete(agentId);
        if (this.#wanted.delete(agentId)) this.kick(agentId);
      });
    this.#running.set(agentId, run);
  }

  async #runAgent(agentId: string): Promise<void> {
    const { store, clock, instanceId } = this.#context;
    const lease = `ingest:${agentId}`;
    if (!(await store.leases.acquire({ name: lease, holder: instanceId, ttlMs: INGESTION_LEASE_MS, now: clock.now() }))) return;
    let lost = false;
    const renewal = setInterval(() => {
      void store.leases
        .renew({ name: lease, holder: instanceId, ttlMs: INGESTION_LEASE_MS, now: clock.now() })
        .then((held) => {
          if (!held) lost = true;
        })
        .catch(() => undefined);
    }, INGESTION_RENEW_MS);
    renewal.unref();
    try {
      for (;;) {
        if (this.#stopped || lost) return;
        this.#wanted.delete(agentId);
        const job = await store.jobs.nextForAgent({ agentId });
        if (!job) return;
        // A deferred document still converting holds the agent's FIFO; its conversion kicks the agent when done.
        if (job.details.converting === true) return;
        await this.#processJob(job, () => this.#stopped || lost);
      }
    } finally {
      clearInterval(renewal);
      if (!lost) await store.leases.release({ name: lease, holder: instanceId }).catch(() => undefined);
    }
  }

  async #processJob(found: JobRecord, shouldStop: () => boolean): Promise<void> {
    const { store } = this.#context;
    let job = found;
    // Found mid-flight with the lease free: its worker died. Mark it, then resume where it stopped.
    if (job.status === 'processing' || job.status === 'interrupted') {
      if (job.status === 'processing') await store.jobs.update({ jobId: job.id, patch: { status: 'interrupted', updatedAt: this.#context.nowIso() } });
      job = (await store.jobs.update({ jobId: job.id, patch: { status: 'processing', resumedAt: this.#context.nowIso(), updatedAt: this.#context.nowIso() } })) ?? job;
    } else {
      job = (await store.jobs.update({ jobId: job.id, patch: { status: 'processing', queued: false, updatedAt: this.#context.nowIso() } })) ?? job;
    }
    try {
      await this.#processTurns(job, shouldStop);
    } catch (error) {
      if (error instanceof JobStopped) return;
      this.#context.logger.error('observation job failed', { jobId: job.id, error: String(error) });
      await this.#failRemaining(job, 'job_failed');
    }
    if (shouldStop()) return;
    await this.#settle(job);
  }

  async #processTurns(job: JobRecord, shouldStop: () => boolean): Promise<void> {
    const { store } = this.#context;
    let fromIndex = 0;
    // The job as just set `processing`: the first batch needs no second read of it.
    let current: JobRecord | null = job;
    for (;;) {
      if (shouldStop()) throw new JobStopped();
      current ??= await store.jobs.get({ agentId: job.agentId, jobId: job.id });
      if (!current || current.status === 'cancelled') {
        await this.#forgetCancelled(job);
        throw new JobStopped();
      }
      // Turns are only appended while a job is `converting`, never while it is processed: past its
      // last turn there is nothing left to list (settling checks for a cancel once more).
      if (fromIndex >= current.turnsTotal) return;
      current = null;
      const page = await store.jobs.listTurns({ jobId: job.id, fromIndex, limit: TURN_BATCH });
      if (page.length === 0) return;
      // Committed and failed turns are final: a resumed job never reads them again.
      const batch: TurnRecord[] = [];
      let chars = 0;
      fromIndex = page.at(-1)!.turnIndex + 1;
      for (const turn of page) {
        if (turn.state !== 'pending' && turn.state !== 'read') continue;
        if (batch.length > 0 && chars + turn.text.length > TURN_BATCH_CHARS) {
          fromIndex = turn.turnIndex;
          break;
        }
        batch.push(turn);
        chars += turn.text.length;
      }
      if (batch.length === 0) continue;
      // A turn is read and charged once, in one transaction (credits/credits.ts): resumed turns in
      // `read` are not read again; turns the balance cannot cover are not read and fail.
      const { refused } = await this.#context.credits.readTurns(job, batch.filter((turn) => turn.state === 'pending'));
      const refusedIndexes = new Set(refused.map((turn) => turn.turnIndex));
      const readable = batch.filter((turn) => !refusedIndexes.has(turn.turnIndex));
      const results: TurnResult[] = [
        ...refused.map((turn): TurnResult => ({ turnIndex: turn.turnIndex, ok: false, reason: CREDITS_EXHAUSTED_REASON })),
        ...(readable.length > 0 ? await this.#learnBatch(job, readable) : []),
      ];
      await this.#recordResults(job, results);
      if (results.some((result) => !result.ok && result.reason === 'embedder_mismatch')) {
        await this.#failRemaining(job, 'embedder_mismatch');
        return;
      }
      // A reconciling writer (port "MemoryWriter") learns turns in order: after a failed turn the
      // rest of the job is not learned against a memory missing it, and a resend replays in order.
      if (this.#context.writer.capabilities?.reconciles && results.some((result) => !result.ok && result.reason !== CREDITS_EXHAUSTED_REASON)) {
        await this.#failRemaining(job, 'earlier_turn_failed');
        return;
      }
    }
  }

  /** Writes, embeds and commits the memories of one batch; never throws for a turn's failure. */
  async #learnBatch(job: JobRecord, turns: TurnRecord[]): Promise<TurnResult[]> {
    const { writer, embedder, index } = this.#context;
    const writerTurns: WriterTurn[] = turns.map((turn) => ({
      turnIndex: turn.turnIndex,
      speaker: turn.speaker,
      text: turn.text,
      timestamp: turn.timestamp,
      tags: turn.tags,
      source: sourceOf(job, turn),
    }));
    // An index built by another embedder fails the turns before any model call (spec reason
    // `embedder_mismatch`); the writer's similarity lookups could not search it anyway.
    const recorded = await index.embedder();
    if (recorded && (recorded.id !== embedder.id || recorded.dimensions !== embedder.dimensions)) {
      return turns.map((turn) => ({ turnIndex: turn.turnIndex, ok: false, reason: 'embedder_mismatch' }));
    }
    let outcomes: TurnOutcome[];
    let deleteIds: readonly string[] = [];
    try {
      const written = await writer.write({
        agentId: job.agentId,
        turns: writerTurns,
        // Stopping the service aborts a writer mid-call; its turns stay resumable.
        signal: this.#abort.signal,
        searchSimilar: async (text, limit) => {
          const [vector] = (await embedder.embed({ texts: [text] })).vectors;
          const { lexical, semantic } = await index.search({ agentId: job.agentId, text, vector: vector ?? null, limit });
          return [...semantic, ...lexical].map((hit) => hit.record).slice(0, limit);
        },
      });
      outcomes = written.outcomes;
      deleteIds = written.deleteIds ?? [];
    } catch (error) {
      if (this.#abort.signal.aborted) throw new JobStopped();
      this.#context.logger.warn('memory writer failed', { jobId: job.id, error: String(error) });
      const reason = writerFailureReason(error);
      return turns.map((turn) => ({ turnIndex: turn.turnIndex, ok: false, reason }));
    }
    const byTurn = new Map(outcomes.map((outcome) => [outcome.turnIndex, outcome]));
    const results: TurnResult[] = [];
    const records: MemoryRecord[] = [];
    const committing: number[] = [];
    for (const turn of turns) {
      const outcome = byTurn.get(turn.turnIndex);
      if (!outcome) {
        results.push({ turnIndex: turn.turnIndex, ok: false, reason: 'generation_failed' });
        continue;
      }
      if (!outcome.ok) {
        results.push({ turnIndex: turn.turnIndex, ok: false, reason: outcome.reason });
        continue;
      }
      committing.push(turn.turnIndex);
      outcome.memories.forEach((memory, piece) => {
        records.push({
          // Deterministic per job, turn and piece: a resumed turn replaces, never duplicates.
          id: `mem_${job.id.slice(4)}_${turn.turnIndex}_${piece}`,
          organizationId: job.organizationId,
          agentId: job.agentId,
          text: memory.text,
          keywords: memory.keywords,
          vector: new Float32Array(0),
          speaker: memory.speaker,
          occurredAt: memory.occurredAt,
          source: memory.source,
          createdAt: this.#context.nowIso(),
        });
      });
    }
    if (committing.length === 0) return results;
    // Memory ids are per job, turn and piece: a turn that was still `pending` when this batch was
    // listed was never read before, so none of its memories can be in the index yet (a resumed
    // turn, in `read`, may have been committed before its process died).
    const newIds = turns.every((turn) => turn.state === 'pending');
    const committed = await this.#commit(job, records, newIds);
    if (committed === true && deleteIds.length > 0) await this.#deleteSuperseded(job, deleteIds, records);
    for (const turnIndex of committing) results.push(committed === true ? { turnIndex, ok: true } : { turnIndex, ok: false, reason: committed });
    return results.sort((a, b) => a.turnIndex - b.turnIndex);
  }

  /** Embeds and upserts; resolves true, or the learning reason the batch's turns fail with. */
  async #commit(job: JobRecord, records: MemoryRecord[], newIds: boolean): Promise<true | string> {
    const { embedder, index } = this.#context;
    if (records.length === 0) return true;
    for (let attempt = 1; ; attempt++) {
      try {
        const { vectors } = await embedder.embed({ texts: records.map((record) => `${record.text}`) });
        records.forEach((record, i) => {
          record.vector = vectors[i]!;
        });
        // A retry may follow an attempt that wrote some rows before failing: only a first attempt
        // can promise new ids.
        await index.upsert({ records, embedder: { id: embedder.id, dimensions: embedder.dimensions }, newIds: newIds && attempt === 1 });
        return true;
      } catch (error) {
        if (error instanceof EmbedderMismatchError) return 'embedder_mismatch';
        this.#context.logger.warn('memory commit failed', { jobId: job.id, attempt, error: String(error) });
        if (attempt >= COMMIT_ATTEMPTS) return 'memory_commit_shortfall';
      }
    }
  }

  /**
   * Deletes the memories the writer said the batch supersedes, after the batch committed: a failed
   * commit never loses the old memory. A memory rewritten under the same id in this batch (a
   * resumed turn) is kept. If the delete keeps failing, the new memories stay learned and the old
   * ones stay too (logged): retrieval prefers the more recent.
   */
  async #deleteSuperseded(job: JobRecord, deleteIds: readonly string[], written: MemoryRecord[]): Promise<void> {
    const rewritten = new Set(written.map((record) => record.id));
    const ids = [...new Set(deleteIds)].filter((id) => !rewritten.has(id));
    if (ids.length === 0) return;
    for (let attempt = 1; attempt <= COMMIT_ATTEMPTS; attempt++) {
      try {
        await this.#context.index.deleteBy({ agentId: job.agentId, ids });
        return;
      } catch (error) {
        this.#context.logger.warn('deleting superseded memories failed', { jobId: job.id, attempt, error: String(error) });
      }
    }
  }

  async #recordResults(job: JobRecord, results: TurnResult[]): Promise<void> {
    const { store } = this.#context;
    const committed = results.filter((result) => result.ok).map((result) => result.turnIndex);
    if (committed.length > 0) await store.jobs.setTurnStates({ jobId: job.id, turnIndexes: committed, state: 'committed' });
    const failures = new Map<string, number[]>();
    for (const result of results) {
      if (result.ok) continue;
      failures.set(result.reason, [...(failures.get(result.reason) ?? []), result.turnIndex]);
    }
    for (const [reason, turnIndexes] of failures) await store.jobs.setTurnStates({ jobId: job.id, turnIndexes, state: 'failed', failureReason: reason });
  }

  /**
   * A job is cancelled (or gone) when its thread or agent is deleted. The deletion removes the
   * memories learned so far, but a batch committed while it ran lands after that: remove what this
   * job wrote, so a deleted conversation is forgotten (docs/decisions.md "Thread delete").
   */
  async #forgetCancelled(job: JobRecord): Promise<void> {
    try {
      await this.#context.index.deleteBy({ agentId: job.agentId, observationId: job.id });
    } catch (error) {
      this.#context.logger.warn('forgetting a cancelled job failed', { jobId: job.id, error: String(error) });
    }
  }

  /** Fails every turn of the job not yet committed or failed. */
  async #failRemaining(job: JobRecord, reason: string): Promise<void> {
    const { store } = this.#context;
    const remaining: number[] = [];
    for (let fromIndex = 0; ; ) {
      const page = await store.jobs.listTurns({ jobId: job.id, fromIndex, limit: 1000 });
      if (page.length === 0) break;
      remaining.push(...page.filter((turn) => turn.state === 'pending' || turn.state === 'read').map((turn) => turn.turnIndex));
      fromIndex = page.at(-1)!.turnIndex + 1;
    }
    if (remaining.length > 0) await store.jobs.setTurnStates({ jobId: job.id, turnIndexes: remaining, state: 'failed', failureReason: reason });
  }

  /** Final status: committed when every turn committed; failed (with a learning report) otherwise. */
  async #settle(job: JobRecord): Promise<void> {
    const { store } = this.#context;
    const current = await store.jobs.get({ agentId: job.agentId, jobId: job.id });
    if (!current || current.status === 'cancelled') {
      await this.#forgetCancelled(job);
      return;
    }
    const failed: { turnIndex: number; reason: string }[] = [];
    // Counting first: a job that learned every turn (the usual case) is not listed again.
    const counts = await store.jobs.turnCounts({ jobId: job.id });
    for (let fromIndex = 0; counts.failed > 0; ) {
      const page = await store.jobs.listTurns({ jobId: job.id, fromIndex, limit: 1000 });
      if (page.length === 0) break;
      for (const turn of page) if (turn.state === 'failed') failed.push({ turnIndex: turn.turnIndex, reason: turn.failureReason ?? 'generation_failed' });
      fromIndex = page.at(-1)!.turnIndex + 1;
    }
    const now = this.#context.nowIso();
    if (failed.length === 0) {
      await store.jobs.update({ jobId: job.id, patch: { status: 'committed', updatedAt: now } });
      return;
    }
    const reason = failed[0]!.reason;
    // The input side of turns charged and not learned comes back, once per job.
    const refundedCredits = await this.#context.credits.refundTurns(job, failed.map((turn) => turn.turnIndex));
    const report: LearningReport = {
      ranges: turnRanges(failed.map((turn) => turn.turnIndex)),
      reason,
      message: LEARNING_MESSAGES[reason] ?? LEARNING_MESSAGES.generation_failed!,
      refundedCredits,
    };
    await store.learning.insert({
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
    await store.jobs.update({
      jobId: job.id,
      patch: { status: 'failed', error: `${failed.length} of ${job.turnsTotal} turns were not learned (${reason}).`, learning: report, updatedAt: now },
    });
  }
}

/**
 * The learning reason of a writer that threw for a whole batch: a `LanguageModelError` names its
 * kind (port "LanguageModel": unavailable -> model_unavailable, timeout -> generation_timeout,
 * unparseable -> generation_unparseable); anything else is generation_failed.
 */
function writerFailureReason(error: unknown): string {
  if (error instanceof LanguageModelError || (error instanceof Error && error.name === 'LanguageModelError')) {
    const kind = (error as LanguageModelError).kind;
    if (kind === 'unavailable') return 'model_unavailable';
    if (kind === 'timeout') return 'generation_timeout';
    if (kind === 'unparseable') return 'generation_unparseable';
  }
  return 'generation_failed';
}

function sourceOf(job: JobRecord, turn: TurnRecord): MemorySourceRef {
  const details = turn.details as { sourceId?: string; page?: number | null; filename?: string };
  if (job.kind === 'document' && typeof details.sourceId === 'string') {
    return {
      kind: 'document',
      threadId: job.threadId,
      observationId: job.id,
      turnIndex: turn.turnIndex,
      sourceId: details.sourceId,
      page: details.page ?? null,
      filename: details.filename ?? turn.speaker,
    };
  }
  return { kind: 'turn', threadId: job.threadId, observationId: job.id, turnIndex: turn.turnIndex };
}
