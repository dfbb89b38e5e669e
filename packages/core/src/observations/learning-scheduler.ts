import { describeError } from '../service/logger.js';
import type { ServiceContext } from '../service/context.js';
import { processJob } from './learning-job.js';
import type { JobRun } from './job-run.js';

/** How long a worker's claim on an agent's ingestion slot lasts without renewal. */
export const INGESTION_LEASE_MS = 30_000;
/** How often a running worker renews its lease. */
export const INGESTION_RENEW_MS = 10_000;
/** How often a process looks for jobs nobody is running (a crashed process's, or new ones). */
export const INGESTION_SWEEP_MS = 5_000;

/**
 * Runs observation jobs. One worker per agent at a time across every process: a worker holds the
 * agent's lease (`ingest:<agentId>`) while it processes that agent's jobs in arrival order, and
 * renews it; a job found `processing` without a live lease was interrupted by a dead process and
 * resumes at its first turn not yet finished, with `resumedAt` set. On a store only this process
 * opens (`capabilities.shared` false) the process's own map of running workers is the lease.
 */
export class LearningScheduler {
  readonly #context: ServiceContext;
  readonly #running = new Map<string, Promise<void>>();
  readonly #wanted = new Set<string>();
  #sweepTimer: NodeJS.Timeout | null = null;
  #stopped = true;
  #abort = new AbortController();

  readonly #paused: () => boolean;

  /** `paused`: while true, jobs stay queued (the index is being re-embedded for another embedder). */
  constructor(context: ServiceContext, paused: () => boolean = () => false) {
    this.#context = context;
    this.#paused = paused;
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
      this.#context.logger.warn('ingestion lease recovery failed', { error: describeError(error) });
    }
  }

  async sweep(): Promise<void> {
    if (this.#stopped) return;
    try {
      for (const agentId of await this.#context.store.jobs.agentsWithUnfinishedJobs()) this.kick(agentId);
    } catch (error) {
      this.#context.logger.warn('ingestion sweep failed', { error: describeError(error) });
    }
  }

  /** Makes sure a worker runs the agent's jobs (here, unless another process holds the lease). */
  kick(agentId: string): void {
    // Learning waits for a re-embed to finish; its end sweeps every agent with unfinished jobs.
    if (this.#stopped || this.#paused()) return;
    if (this.#running.has(agentId)) {
      this.#wanted.add(agentId);
      return;
    }
    const run = this.#runAgent(agentId)
      .catch((error: unknown) => this.#context.logger.error('ingestion worker failed', { agentId, error: describeError(error) }))
      .finally(() => {
        this.#running.delete(agentId);
        if (this.#wanted.delete(agentId)) this.kick(agentId);
      });
    this.#running.set(agentId, run);
  }

  async #runAgent(agentId: string): Promise<void> {
    const { store, clock, instanceId } = this.#context;
    const lease = `ingest:${agentId}`;
    // A store only this process opens needs no lease in it: `#running` already keeps one worker
    // per agent here (two round trips to the database fewer per run of an agent's jobs).
    const leased = store.capabilities.shared;
    if (leased && !(await store.leases.acquire({ name: lease, holder: instanceId, ttlMs: INGESTION_LEASE_MS, now: clock.now() }))) return;
    let lost = false;
    const renewal = leased
      ? setInterval(() => {
          void store.leases
            .renew({ name: lease, holder: instanceId, ttlMs: INGESTION_LEASE_MS, now: clock.now() })
            .then((held) => {
              if (!held) lost = true;
            })
            .catch(() => undefined);
        }, INGESTION_RENEW_MS).unref()
      : undefined;
    const scheduler = this;
    const run: JobRun = {
      context: this.#context,
      get signal() {
        return scheduler.#abort.signal;
      },
      shouldStop: () => this.#stopped || lost,
    };
    // Only this process writes a store it alone can open: every new job kicks this scheduler, so
    // after a job the agent's next one is looked up only when a kick came in meanwhile (the sweep
    // stays the safety net). Other processes may add jobs to a shared store without a kick here.
    const lookAgain = () => this.#context.store.capabilities.shared || this.#wanted.has(agentId);
    let drained = false;
    try {
      for (let first = true; first || lookAgain(); first = false) {
        if (this.#stopped || lost || this.#paused()) return;
        this.#wanted.delete(agentId);
        const job = await store.jobs.nextForAgent({ agentId });
        if (!job) {
          drained = true;
          return;
        }
        // A deferred document still converting holds the agent's FIFO; its conversion kicks the agent when done.
        if (job.kind === 'document' && job.details.converting) return;
        await processJob(run, job);
      }
    } finally {
      clearInterval(renewal);
      if (leased && !lost) await store.leases.release({ name: lease, holder: instanceId }).catch(() => undefined);
      // Another process may have queued a job after the last look and been refused the lease this
      // worker still held: its kick is lost, so look once more rather than leave the job to the
      // next sweep (up to INGESTION_SWEEP_MS later). Only after a drained queue: a worker that
      // stopped on an error is retried by the sweep, not at once.
      if (drained && !lost && !this.#stopped) {
        const next = await store.jobs.nextForAgent({ agentId }).catch(() => null);
        if (next && !(next.kind === 'document' && next.details.converting)) this.#wanted.add(agentId);
      }
    }
  }
}
