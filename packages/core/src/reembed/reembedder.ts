import { ServiceError } from '../errors/index.js';
import { describeError } from '../service/logger.js';
import { sameFingerprint } from '../memory-index/memory-index-helpers.js';
import type { EmbedderFingerprint, ReembedProgress } from '../ports/memory-index.js';
import type { ServiceContext } from '../service/context.js';

/** Records embedded and written per step: one embed call, one index write (bounded memory). */
export const REEMBED_BATCH = 256;
/** Wait before trying again after a failure (embedder or index away), or while another process runs it. */
export const REEMBED_RETRY_MS = 5_000;
/** The lease a re-embedding process holds on a shared store, so one process runs it. */
export const REEMBED_LEASE = 'reembed';
const LEASE_MS = 30_000;
const RENEW_MS = 10_000;

/**
 * 503 `service_unavailable` while the memory index holds another embedder's vectors than the
 * service's (a re-embed runs): a new memory's vector could not be compared with the rest. `retry`
 * ends the sentence: what to do again once it finishes.
 */
export async function requireIndexEmbedder(context: Pick<ServiceContext, 'index' | 'embedder'>, retry: string): Promise<void> {
  const recorded = await context.index.embedder();
  if (recorded !== null && !sameFingerprint(recorded, { id: context.embedder.id, dimensions: context.embedder.dimensions })) {
    throw new ServiceError('service_unavailable', `The memory index is being re-embedded for a new embedding model; ${retry} when that finishes.`);
  }
}

/** A re-embed in progress as the service reports it (`MemoryService.reembedding.status`). */
export type ReembedStatus = ReembedProgress & {
  /** True while this process runs it (false: stopped, or another process holds it). */
  running: boolean;
};

export type ReembedRunOptions = {
  /** Called after each batch written (and once at the start) with the progress. */
  onProgress?: (status: ReembedStatus) => void;
  signal?: AbortSignal;
};

class Stopped extends Error {}

/**
 * Re-embedding (issue 39): when the service's embedder is not the one the memory index was built
 * with, every record (every agent, history too) is embedded again in batches of
 * {@link REEMBED_BATCH} and the index switches to the new generation when all are done (the
 * `MemoryIndex` re-embedding contract). Until then:
 * - learning waits: `learningPaused` is true and the scheduler leaves jobs queued (no new memory
 *   is written under an embedder the index does not have yet, none fails `embedder_mismatch`);
 * - chat and search use the full-text channel only (query-embedder.ts: the query vector would not
 *   be comparable with the current generation).
 * Resumable: the index keeps the vectors written so far, so a process killed mid-way continues
 * at the next start with the records still pending (at most one batch is embedded twice). On a
 * shared store one process runs it (lease `reembed`); the others wait for the switch.
 * Starting with the embedder the index already has abandons a re-embed towards another one.
 */
export class Reembedder {
  readonly #context: ServiceContext;
  readonly #onSwitched: () => void;
  #stopped = true;
  #abort = new AbortController();
  #loop: Promise<void> | null = null;
  /** The index's fingerprint is not the service's embedder: learning waits. */
  #mismatch = false;
  #progress: ReembedProgress | null = null;
  #active = false;

  constructor(context: ServiceContext, onSwitched: () => void) {
    this.#context = context;
    this.#onSwitched = onSwitched;
  }

  get learningPaused(): boolean {
    return this.#mismatch;
  }

  get #target(): EmbedderFingerprint {
    return { id: this.#context.embedder.id, dimensions: this.#context.embedder.dimensions };
  }

  /** Checks the index against the embedder and, when they differ, starts the re-embed in the background. */
  async start(): Promise<void> {
    this.#stopped = false;
    if (this.#abort.signal.aborted) this.#abort = new AbortController();
    let prepared: boolean;
    try {
      prepared = await this.#prepare();
    } catch (error) {
      // The index did not answer: the service starts anyway, and the check runs again in the background.
      this.#context.logger.warn('re-embedding check failed at start; it runs again in the background', { error: describeError(error) });
      prepared = false;
      this.#loop ??= this.#background(false).finally(() => {
        this.#loop = null;
      });
    }
    if (!prepared) return;
    this.#loop ??= this.#background(true).finally(() => {
      this.#loop = null;
    });
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#abort.abort();
    await this.#loop?.catch(() => undefined);
  }

  /** The re-embed in progress (this process's view while it runs or waits for it), or null. */
  async status(): Promise<ReembedStatus | null> {
    const progress = this.#progress ?? (await this.#context.index.reembedProgress());
    return progress ? { ...progress, running: this.#active } : null;
  }

  /**
   * Runs the re-embed to its end in this call (the CLI's `reembed run`), resolving the final
   * status (null: nothing was to do). Rejects when the embedder or index fails; it resumes on
   * the next call.
   */
  async run(options: ReembedRunOptions = {}): Promise<ReembedStatus | null> {
    // Already running in the background here: wait for it rather than run a second loop.
    if (this.#loop) {
      const last = await this.status();
      await this.#loop;
      return last ? { ...last, done: last.total, running: false } : null;
    }
    if (!(await this.#prepare())) return null;
    const signal = options.signal ?? new AbortController().signal;
    for (;;) {
      const before = await this.status();
      if (await this.#runOnce(signal, options.onProgress)) return before ? { ...before, done: before.total, running: false } : null;
      // Another process holds the lease: wait for it.
      await sleep(REEMBED_RETRY_MS, signal);
    }
  }

  /** Begins (or resumes, or abandons) a re-embed as the index and embedder require; true when one is to run. */
  async #prepare(): Promise<boolean> {
    const { index, logger } = this.#context;
    const target = this.#target;
    const current = await index.embedder();
    if (current === null) {
      this.#mismatch = false;
      return false;
    }
    if (sameFingerprint(current, target)) {
      this.#mismatch = false;
      const abandoned = await index.reembedProgress();
      if (abandoned) {
        await index.beginReembed({ target });
        logger.warn('re-embedding abandoned: the memory index keeps its embedder', { embedder: target.id, abandoned: abandoned.to.id });
      }
      this.#progress = null;
      return false;
    }
    this.#mismatch = true;
    await index.beginReembed({ target });
    this.#progress = await index.reembedProgress();
    const progress = this.#progress;
    logger.info('re-embedding the memory index: learning waits and search uses full text until it finishes', {
      from: current.id,
      to: target.id,
      done: progress?.done ?? 0,
      total: progress?.total ?? 0,
    });
    return true;
  }

  async #background(prepared: boolean): Promise<void> {
    while (!this.#stopped) {
      try {
        if (!prepared) {
          if (!(await this.#prepare())) return;
          prepared = true;
        }
        if (await this.#runOnce(this.#abort.signal)) return;
      } catch (error) {
        if (this.#stopped || error instanceof Stopped) return;
        this.#context.logger.warn('re-embedding paused after a failure; it resumes by itself', { error: describeError(error) });
      }
      try {
        await sleep(REEMBED_RETRY_MS, this.#abort.signal);
      } catch {
        return;
      }
    }
  }

  /**
   * One attempt, under the lease on a shared store: batch after batch until the switch. Resolves
   * true once the index has switched (here or by another process), false while another process
   * holds the lease.
   */
  async #runOnce(signal: AbortSignal, onProgress?: (status: ReembedStatus) => void): Promise<boolean> {
    const { store, index, clock, instanceId, embedder } = this.#context;
    const target = this.#target;
    const leased = store.capabilities.shared;
    if (leased && !(await store.leases.acquire({ name: REEMBED_LEASE, holder: instanceId, ttlMs: LEASE_MS, now: clock.now() }))) {
      if (sameFingerprint(await index.embedder(), target)) {
        this.#switched();
        return true;
      }
      this.#progress = await index.reembedProgress();
      // None in progress any more: the holder switched the index between the two reads.
      if (this.#progress === null && sameFingerprint(await index.embedder(), target)) {
        this.#switched();
        return true;
      }
      return false;
    }
    let lost = false;
    const renewal = leased
      ? setInterval(() => {
          void store.leases
            .renew({ name: REEMBED_LEASE, holder: instanceId, ttlMs: LEASE_MS, now: clock.now() })
            .then((held) => {
              if (!held) lost = true;
            })
            .catch(() => undefined);
        }, RENEW_MS).unref()
      : undefined;
    this.#active = true;
    try {
      // Another process may have finished it while this one waited for the lease.
      if (sameFingerprint(await index.embedder(), target)) {
        this.#switched();
        return true;
      }
      // Idempotent: resumes the vectors written so far (by this process before a kill, or another).
      await index.beginReembed({ target });
      this.#progress = await index.reembedProgress();
      if (this.#progress) onProgress?.({ ...this.#progress, running: true });
      let after: string | null = null;
      let emptyRounds = 0;
      for (;;) {
        if (signal.aborted || lost) throw new Stopped();
        const pending = await index.reembedPending({ limit: REEMBED_BATCH, after });
        if (pending.length === 0) {
          if (await index.finishReembed({ target })) {
            this.#switched();
            return true;
          }
          // Records written behind the cursor meanwhile (or the target changed): look again from the start.
          if (after === null && ++emptyRounds >= 3) throw new Error('the memory index refused to switch to the new embedder although no record is pending');
          if (after === null) await index.beginReembed({ target });
          after = null;
          this.#progress = await index.reembedProgress();
          continue;
        }
        emptyRounds = 0;
        const { vectors } = await embedder.embed({ texts: pending.map((record) => record.text), signal });
        if (vectors.length !== pending.length) throw new Error(`the embedder returned ${vectors.length} vectors for ${pending.length} texts`);
        await index.writeReembedded({ target, vectors: pending.map((record, i) => ({ id: record.id, vector: vectors[i]! })) });
        after = pending.at(-1)!.id;
        if (this.#progress) {
          this.#progress = { ...this.#progress, done: Math.min(this.#progress.total, this.#progress.done + pending.length) };
          onProgress?.({ ...this.#progress, running: true });
        }
      }
    } finally {
      this.#active = false;
      clearInterval(renewal);
      if (leased && !lost) await store.leases.release({ name: REEMBED_LEASE, holder: instanceId }).catch(() => undefined);
    }
  }

  #switched(): void {
    const finished = this.#progress;
    this.#mismatch = false;
    this.#progress = null;
    this.#context.logger.info('re-embedding finished: the memory index now uses the configured embedder', { embedder: this.#target.id, records: finished?.total ?? null });
    this.#onSwitched();
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new Stopped());
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    timer.unref?.();
    const onAbort = () => {
      clearTimeout(timer);
      reject(new Stopped());
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
