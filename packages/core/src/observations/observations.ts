import { findAgent, findReadyAgent, findThread } from '../agents/lookup.js';
import type { Caller } from '../auth/caller.js';
import { billedWords } from '../credits/pricing.js';
import { ServiceError } from '../errors/index.js';
import { ID_PATTERNS } from '../ids/index.js';
import { activityEntry } from '../logs/activity.js';
import { createIdempotency, requestFingerprint } from '../idempotency/idempotency.js';
import type { JobRecord, StoreAreas, ThreadRecord } from '../ports/store/index.js';
import { learningQuery, observeBody, type ObservationStatusBody } from '../schemas/observations.js';
import type { ServiceContext } from '../service/context.js';
import { parseBody, parseQuery } from '../validation/parse.js';
import type { IngestionScheduler } from './ingestion.js';
import { newJob, type NewJobDetails, type NewTurn } from './new-job.js';

export type { NewTurn } from './new-job.js';

/** Seconds a caller waits when the agent's single ingestion slot is taken (spec "Limits / Observations"). */
export const AGENT_BUSY_RETRY_AFTER = 1;

/** Options of `observe`. */
export type ObserveOptions = {
  /** The `Idempotency-Key` header, if sent (1 to 255 characters). */
  idempotencyKey?: string | undefined;
};

/** The 202 body of `observe`. */
export type ObserveAcceptedBody = { agent_id: string; thread_id: string; observation_id: string; accepted: true };

export function createObservations(context: ServiceContext, scheduler: IngestionScheduler) {
  const idempotency = createIdempotency(context);

  /**
   * Stores a job and all its turns before answering. With `onlyIfIdle` the agent's single
   * ingestion slot must be free (else 429, `Retry-After: 1`); answering calls queue behind it.
   */
  async function enqueue(
    caller: Caller,
    thread: ThreadRecord,
    turns: NewTurn[],
    options: NewJobDetails & {
      onlyIfIdle: boolean;
      status?: JobRecord['status'];
      queued?: boolean;
      /**
       * Runs in the transaction that stores the job (recording an Idempotency-Key's response, the
       * activity log): it commits with the job or not at all.
       */
      within?: (store: StoreAreas, job: JobRecord) => Promise<void>;
    },
  ): Promise<JobRecord> {
    const job = options.within
      ? await context.store.transaction(async (store) => {
          const inserted = await insertJob(store, caller, thread, turns, options);
          if (inserted) await options.within!(store, inserted);
          return inserted;
        })
      : await insertJob(context.store, caller, thread, turns, options);
    if (!job) {
      throw new ServiceError('rate_limit_exceeded', 'The agent is already learning something; it learns one thing at a time. Retry after the Retry-After delay.', {
        retryAfter: AGENT_BUSY_RETRY_AFTER,
        details: 'capacity',
      });
    }
    // After the commit, so the worker finds the job.
    scheduler.kick(job.agentId);
    return job;
  }

  function insertJob(
    store: StoreAreas,
    caller: Caller,
    thread: ThreadRecord,
    turns: NewTurn[],
    options: { onlyIfIdle: boolean; status?: JobRecord['status']; queued?: boolean } & NewJobDetails,
  ): Promise<JobRecord | null> {
    const { onlyIfIdle, ...job } = options;
    return store.jobs.insert({ ...newJob({ ...job, id: context.ids('obs_'), now: context.nowIso(), caller, thread }, turns), onlyIfIdle });
  }

  async function findJob(caller: Caller, agentId: string, threadId: string, observationId: string): Promise<JobRecord> {
    const agent = await findAgent(context, caller, agentId);
    const thread = await findThread(context, caller, agent, threadId);
    const job = ID_PATTERNS.observation.test(observationId) ? await context.store.jobs.get({ agentId: agent.id, jobId: observationId }) : null;
    if (!job || job.threadId !== thread.id) throw new ServiceError('not_found', `Observation ${observationId} was not found in this thread.`);
    return job;
  }

  return {
    enqueue,
    findJob,

    /**
     * `POST .../observe` -> 202 once the job and all its turns are stored. With an
     * `Idempotency-Key`, the job, its activity entry and the recorded 202 commit in one
     * transaction; the same key and body replay that 202 (even while the agent is busy learning
     * it), another body with the key is 409.
     */
    async observe(caller: Caller, agentId: string, threadId: string, body: unknown, options: ObserveOptions = {}): Promise<ObserveAcceptedBody> {
      const input = parseBody(observeBody, body);
      const agent = await findReadyAgent(context, caller, agentId);
      const thread = await findThread(context, caller, agent, threadId);
      const fingerprint = requestFingerprint(['observe', agent.id, thread.id, input]);
      return idempotency.run<ObserveAcceptedBody>(caller, options.idempotencyKey, fingerprint, { what: 'observation request', status: 202 }, async (bind) => {
        const now = context.nowIso();
        const turns: NewTurn[] = input.observations.map((observation) => ({
          speaker: observation.speaker ?? 'user',
          text: observation.content.map((block) => block.text).join('\n\n'),
          timestamp: observation.timestamp === undefined ? now : new Date(observation.timestamp).toISOString(),
          tags: observation.tags ?? [],
        }));
        // 402 before anything is stored when billing is on and the balance cannot cover the input words.
        await context.credits.requireFunds(caller.organizationId, turns.reduce((words, turn) => words + billedWords(turn.text), 0));
        let accepted: ObserveAcceptedBody | null = null;
        const record = async (store: StoreAreas, job: JobRecord) => {
          accepted = { agent_id: agent.id, thread_id: thread.id, observation_id: job.id, accepted: true };
          await store.logs.append({ entries: [activityEntry(context, caller, { agentId: agent.id, threadId: thread.id, route: 'observe' })] });
          if (bind) await bind(store, accepted);
        };
        // With a key, the job, its log entry and the recorded 202 commit in one transaction.
        const job = await enqueue(caller, thread, turns, { kind: 'observe', onlyIfIdle: true, ...(bind ? { within: record } : {}) });
        if (!bind) await record(context.store, job);
        return accepted!;
      });
    },

    /** `GET .../observe/{observation_id}/status`: exactly the spec's properties. */
    async status(caller: Caller, agentId: string, threadId: string, observationId: string): Promise<ObservationStatusBody> {
      const job = await findJob(caller, agentId, threadId, observationId);
      const settled = (job.status === 'failed' || job.status === 'cancelled') && job.learning !== null;
      return {
        agent_id: job.agentId,
        thread_id: job.threadId,
        observation_id: job.id,
        status: job.status,
        turns_total: job.turnsTotal,
        turns_processed: job.turnsProcessed,
        // An agent's jobs run in `seq` order: a job processing or committed has nothing ahead of it.
        queue_depth: job.status === 'processing' || job.status === 'committed' ? 0 : await context.store.jobs.countAhead({ threadId: job.threadId, seq: job.seq }),
        error: job.status === 'failed' ? job.error : null,
        queued: job.queued,
        resumed_at: job.resumedAt,
        learning: settled
          ? {
              status: 'not_learned',
              not_learned_turns: job.learning!.ranges,
              reason: job.learning!.reason,
              message: job.learning!.message,
              refunded_credits: job.learning!.refundedCredits,
              action: 'resend',
            }
          : null,
      };
    },

    /** `GET .../threads/{thread_id}/learning`: every record of turns not learned, newest first. */
    async learningRecord(caller: Caller, agentId: string, threadId: string, query: unknown) {
      const { limit, cursor } = parseQuery(learningQuery, query);
      const agent = await findAgent(context, caller, agentId);
      const thread = await findThread(context, caller, agent, threadId);
      const records = await context.store.learning.list({ threadId: thread.id, limit: limit + 1, ...(cursor === undefined ? {} : { beforeId: Number(cursor) }) });
      const page = records.slice(0, limit);
      return {
        agent_id: agent.id,
        thread_id: thread.id,
        entries: page.map((record) => ({
          observation_id: record.jobId,
          not_learned_turns: record.ranges,
          reason: record.reason,
          message: record.message,
          refunded_credits: record.refundedCredits,
          action: 'resend' as const,
          created_at: record.createdAt,
        })),
        next_cursor: records.length > limit ? String(page.at(-1)!.id) : null,
      };
    },
  };
}

export type Observations = ReturnType<typeof createObservations>;
