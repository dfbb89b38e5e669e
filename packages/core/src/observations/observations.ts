import { findAgent, findReadyAgent, findThread } from '../agents/lookup.js';
import type { MemoryService } from '../memory-service.js';
import type { ObservationListOutput, ObservationReceiptOutput, ObservationStatusOutput, ObserveOutput } from '../schemas/outputs.js';
import { buildReceipt } from './receipt.js';
import type { ObservationListRequest, ObservationStatusRequest, ObserveRequest } from '../service/requests.js';
import { billedWords } from '../credits/pricing.js';
import { ServiceError } from '../errors/index.js';
import { ID_PATTERNS } from '../ids/index.js';
import { activityEntry } from '../logs/activity.js';
import { createIdempotency, requestFingerprint } from '../idempotency/idempotency.js';
import type { JobRecord } from '../ports/store/index.js';
import { observationsQuery, observeBody } from '../schemas/observations.js';
import type { ServiceContext } from '../service/context.js';
import { parseBody, parseQuery } from '../validation/parse.js';
import type { InsertJob } from './insert-job.js';
import type { NewTurn } from './new-job.js';

export type { NewTurn } from './new-job.js';

export { AGENT_BUSY_RETRY_AFTER } from './insert-job.js';

/** The 202 body of `observe`. */

/** The observations area: `service.observe` and `service.observationStatus`. */
export function createObservations(context: ServiceContext, insertJob: InsertJob) {
  const idempotency = createIdempotency(context);

  async function findJob({ caller, agentId, threadId, observationId }: ObservationStatusRequest): Promise<JobRecord> {
    const agent = await findAgent(context, caller, agentId);
    const thread = await findThread(context, caller, agent, threadId);
    const job = ID_PATTERNS.observation.test(observationId) ? await context.store.jobs.get({ agentId: agent.id, jobId: observationId }) : null;
    if (!job || job.threadId !== thread.id) throw new ServiceError('not_found', `Observation ${observationId} was not found in this thread.`);
    return job;
  }

  return {
    /**
     * `POST .../observe` -> 202 once the job and all its turns are stored. The job, its activity
     * entry and (with an `Idempotency-Key`) the recorded 202 commit in one transaction; the same
     * key and body replay that 202 (even while the agent is busy learning it), another body with
     * the key is 409.
     */
    async observe({ caller, agentId, threadId, body, idempotencyKey }: ObserveRequest): Promise<ObserveOutput> {
      const input = parseBody(observeBody, body);
      const agent = await findReadyAgent(context, caller, agentId);
      const thread = await findThread(context, caller, agent, threadId);
      const fingerprint = requestFingerprint(['observe', agent.id, thread.id, input]);
      return idempotency.run<ObserveOutput>({ caller, idempotencyKey, fingerprint, what: 'observation request', status: 202 }, async (bind) => {
        const now = context.nowIso();
        const turns: NewTurn[] = input.observations.map((observation) => ({
          speaker: observation.speaker ?? 'user',
          text: observation.content.map((block) => block.text).join('\n\n'),
          timestamp: observation.timestamp === undefined ? now : new Date(observation.timestamp).toISOString(),
          tags: observation.tags ?? [],
          ...(observation.expires_at === undefined ? {} : { expiresAt: new Date(observation.expires_at).toISOString() }),
        }));
        // 402 before anything is stored when billing is on and the balance cannot cover the input words.
        await context.credits.requireFunds(caller.organizationId, turns.reduce((words, turn) => words + billedWords(turn.text), 0));
        // The job, its log entry and (with a key) the recorded 202 commit in one transaction.
        return insertJob({
          caller,
          thread,
          turns,
          kind: 'observe',
          onlyIfIdle: true,
          onStored: async (store, job) => {
            const accepted: ObserveOutput = { agent_id: agent.id, thread_id: thread.id, observation_id: job.id, accepted: true };
            await store.logs.append({ entries: [activityEntry(context, caller, { agentId: agent.id, threadId: thread.id, route: 'observe' })] });
            if (bind) await bind(store, accepted);
            return accepted;
          },
        });
      });
    },

    /** `GET .../observe/{observation_id}/status`: exactly the spec's properties. */
    async observationStatus(request: ObservationStatusRequest): Promise<ObservationStatusOutput> {
      return presentStatus(await findJob(request));
    },

    /** `GET .../observe/{observation_id}/receipt` (an extension): 409 `conflict` until the job is final. */
    async observationReceipt(request: ObservationStatusRequest): Promise<ObservationReceiptOutput> {
      return buildReceipt(context, await findJob(request));
    },

    /** `GET .../threads/{thread_id}/observations`: the cursor is the `seq` of the page's last job. */
    async listObservations({ caller, agentId, threadId, query = {} }: ObservationListRequest): Promise<ObservationListOutput> {
      const { limit, cursor } = parseQuery(observationsQuery, query);
      let beforeSeq: number | undefined;
      if (cursor !== undefined && cursor !== '') {
        if (!/^[1-9][0-9]{0,15}$/.test(cursor)) throw new ServiceError('invalid_request', 'cursor is not a value returned as next_cursor.', { status: 400 });
        beforeSeq = Number(cursor);
      }
      const agent = await findAgent(context, caller, agentId);
      const thread = await findThread(context, caller, agent, threadId);
      const jobs = await context.store.jobs.listForThread({ threadId: thread.id, limit: limit + 1, ...(beforeSeq === undefined ? {} : { beforeSeq }) });
      const page = jobs.slice(0, limit);
      const last = page.at(-1);
      return { observations: await Promise.all(page.map(presentStatus)), next_cursor: jobs.length > limit && last ? String(last.seq) : '' };
    },
  } satisfies Pick<MemoryService, 'observe' | 'observationStatus' | 'observationReceipt' | 'listObservations'>;

  async function presentStatus(job: JobRecord): Promise<ObservationStatusOutput> {
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
  }
}

export type Observations = ReturnType<typeof createObservations>;
