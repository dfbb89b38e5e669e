import type { Caller } from '../auth/caller.js';
import { ServiceError } from '../errors/index.js';
import type { JobRecord, JobStatus, StoreAreas, ThreadRecord } from '../ports/store/index.js';
import type { ServiceContext } from '../service/context.js';
import { newJob, type NewJobDetails, type NewTurn } from './new-job.js';
import { redactTurns } from '../policy/extraction-policy.js';

/** Seconds a caller waits when the agent's single ingestion slot is taken (spec "Limits / Observations"). */
export const AGENT_BUSY_RETRY_AFTER = 1;

/** The 429 of a job refused because the agent is learning something else (`Retry-After: 1`). */
export function agentBusy(message = 'The agent is already learning something; it learns one thing at a time. Retry after the Retry-After delay.'): ServiceError {
  return new ServiceError('rate_limit_exceeded', message, { retryAfter: AGENT_BUSY_RETRY_AFTER, details: 'capacity' });
}

/** One job to store: its turns, kind and start, and what commits with it. */
export type InsertJobRequest<T> = NewJobDetails & {
  caller: Caller;
  thread: ThreadRecord;
  turns: NewTurn[];
  /** @default 'queued' */
  status?: JobStatus;
  /**
   * The agent's single ingestion slot must be free (`observe`): else 429 with `Retry-After: 1`.
   * Answering calls pass false and queue behind whatever the agent is learning.
   */
  onlyIfIdle: boolean;
  /**
   * Runs first in the transaction, once the job row holds the agent's lock: refuses the job
   * (throw: nothing is stored) or resolves the job as it should stay (a document queued behind
   * another job).
   */
  admit?: (store: StoreAreas, job: JobRecord) => Promise<JobRecord>;
  /**
   * Writes what commits with the job, in the same transaction (its messages, activity entry, the
   * recorded Idempotency-Key response, a document's ingest record); its result is the insert's.
   */
  onStored: (store: StoreAreas, job: JobRecord) => Promise<T>;
  /** Wake the learning worker after the commit; false for a job that is not ready (a converting document). @default true */
  kick?: boolean;
};

/**
 * The one way a job is put in, for every kind (observe, respond, document): the job, its turns and
 * whatever `onStored` writes commit in one transaction or not at all; the worker is woken after
 * the commit, so it finds the job.
 */
export function createJobInsert(context: ServiceContext, kick: (agentId: string) => void) {
  return async function insertJob<T>(request: InsertJobRequest<T>): Promise<T> {
    const { caller, thread, status, onlyIfIdle, admit, onStored } = request;
    const kind: NewJobDetails = request.kind === 'document' ? { kind: 'document', details: request.details } : { kind: request.kind };
    // The agent's extraction policy first: what it redacts is never stored (issue 44).
    const turns = await redactTurns(context, { organizationId: thread.organizationId, agentId: thread.agentId }, request.turns);
    const fresh = newJob({ id: context.ids('obs_'), now: context.nowIso(), caller, thread, ...kind, ...(status ? { status } : {}) }, turns);
    const stored = await context.store.transaction(async (store) => {
      const inserted = await store.jobs.insert({ ...fresh, onlyIfIdle });
      if (!inserted) {
        if (onlyIfIdle) throw agentBusy();
        throw new ServiceError('agent_not_found', `Agent ${thread.agentId} was not found.`);
      }
      const job = admit ? await admit(store, inserted) : inserted;
      return { job, result: await onStored(store, job) };
    });
    if (request.kick ?? true) kick(stored.job.agentId);
    return stored.result;
  };
}

export type InsertJob = ReturnType<typeof createJobInsert>;
