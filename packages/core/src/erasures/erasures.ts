import { describeError } from '../service/logger.js';
import type { Caller } from '../auth/caller.js';
import { findAgent, findThread } from '../agents/lookup.js';
import { ServiceError } from '../errors/index.js';
import { endUserId, ID_PATTERNS } from '../ids/index.js';
import type { MemoryService } from '../memory-service.js';
import type { AgentRecord, ErasureCounts, ErasureRecord, ErasureTarget, ThreadRecord } from '../ports/store/index.js';
import { eraseBody, type ErasureOutput } from '../schemas/erasures.js';
import type { ServiceContext } from '../service/context.js';
import type { EraseRequest, ErasureRequest } from '../service/requests.js';
import { parseBody } from '../validation/parse.js';
import { emitErasureFinished } from '../webhooks/events.js';
import { dropExports } from '../export/erased-exports.js';
import { countingRemovals, dropOriginals, eraseJobs, eraseThread, forgetReplays, NO_COUNTS, type Reclaimer } from './erase-work.js';

function present(record: ErasureRecord): ErasureOutput {
  return {
    erasure_id: record.id,
    agent_id: record.agentId,
    status: record.status,
    target: record.target,
    counts: record.counts,
    error: record.error,
    created_at: record.createdAt,
    updated_at: record.updatedAt,
    started_at: record.startedAt,
    completed_at: record.completedAt,
  };
}

/**
 * The erasures area (an extension, issue 30): `service.erasures.erase` removes everything derived
 * from one source, thread, observation or end user as a job (`era_`), `get` reads its status.
 * Jobs live in `store.erasures` and are resumed on start; each step is idempotent.
 */
export function createErasures(context: ServiceContext, reclaimer: Reclaimer) {
  const notFound = (what: string) => new ServiceError('not_found', `${what} was not found.`);

  /** Whether the erasure's asker reaches the thread (an end user only their own threads). */
  const reaches = (record: Pick<ErasureRecord, 'endUserId'>, thread: ThreadRecord | null) =>
    thread !== null && (record.endUserId === null || thread.endUserId === record.endUserId);

  /** Resolves the target the caller may erase, or throws the 404 an unknown id gets (never a hint). */
  async function resolveTarget(caller: Caller, agent: AgentRecord, body: ReturnType<typeof eraseBody.parse>): Promise<ErasureTarget> {
    if (body.thread_id !== undefined) return { kind: 'thread', id: (await findThread(context, caller, agent, body.thread_id)).id };
    if (body.observation_id !== undefined) {
      const job = await context.store.jobs.get({ agentId: agent.id, jobId: body.observation_id });
      const thread = job ? await context.store.threads.get({ agentId: agent.id, threadId: job.threadId }) : null;
      if (!job || job.organizationId !== caller.organizationId || !reaches(caller, thread) || thread!.status !== 'ready') {
        throw notFound(`Observation ${body.observation_id}`);
      }
      return { kind: 'observation', id: job.id };
    }
    if (body.source_id !== undefined) {
      const records = await context.store.uploads.listBySource({ agentId: agent.id, sourceId: body.source_id });
      let reached = false;
      for (const record of records) {
        if (record.organizationId === caller.organizationId && reaches(caller, await context.store.threads.get({ agentId: agent.id, threadId: record.threadId }))) reached = true;
      }
      if (!reached) throw notFound(`Source ${body.source_id}`);
      return { kind: 'source', id: body.source_id };
    }
    // `person_id` names the person by their `eu_` id (what the activity log shows); `end_user_id` by the header value.
    const person = body.person_id ?? endUserId(caller.organizationId, body.end_user_id!.trim());
    // An end user may erase only themselves; any other value is the same 404 whether it exists or not.
    if (caller.endUserId !== null && caller.endUserId !== person) throw notFound('End user');
    return { kind: 'end_user', id: person };
  }

  /** Runs (or resumes) one erasure job to its end. */
  async function run(record: ErasureRecord): Promise<void> {
    const { agentId, organizationId } = record;
    const counts: ErasureCounts = { ...NO_COUNTS };
    const mentioned: string[] = [];
    const sources: string[] = [];
    await context.store.erasures.update({ erasureId: record.id, patch: { status: 'running', startedAt: record.startedAt ?? context.nowIso() }, updatedAt: context.nowIso() });
    try {
      const agent = await context.store.agents.get({ organizationId, agentId });
      if (agent) {
        const { kind, id } = record.target;
        counts.memories = await countingRemovals(context, agentId, async () => {
          if (kind === 'thread' || kind === 'end_user') {
            const threads =
              kind === 'thread'
                ? [await context.store.threads.get({ agentId, threadId: id })].filter((thread) => reaches(record, thread))
                : (await context.store.threads.list({ agentId, endUserId: id })).filter((thread) => reaches(record, thread));
            for (const thread of threads as ThreadRecord[]) {
              const uploads = await eraseThread(context, thread);
              counts.threads++;
              mentioned.push(thread.id, ...uploads.map((upload) => upload.jobId));
              sources.push(...uploads.map((upload) => upload.sourceId));
            }
          } else if (kind === 'observation') {
            const job = await context.store.jobs.get({ agentId, jobId: id });
            const upload = job ? await context.store.uploads.get({ agentId, jobId: id }) : null;
            counts.observations += await eraseJobs(context, agentId, job ? [id] : []);
            mentioned.push(id);
            if (upload) sources.push(upload.sourceId);
          } else {
            const uploads = [];
            for (const upload of await context.store.uploads.listBySource({ agentId, sourceId: id })) {
              if (reaches(record, await context.store.threads.get({ agentId, threadId: upload.threadId }))) uploads.push(upload);
            }
            for (const threadId of new Set(uploads.map((upload) => upload.threadId))) {
              await context.index.deleteBy({ agentId, threadId, sourceId: id });
              await context.store.memoryMarks.deleteBy({ agentId, threadId, sourceId: id });
            }
            counts.observations += await eraseJobs(context, agentId, uploads.map((upload) => upload.jobId));
            mentioned.push(id, ...uploads.map((upload) => upload.jobId));
            sources.push(id);
          }
        });
        counts.replays = await forgetReplays(context, organizationId, mentioned);
        counts.originals = await dropOriginals(context, organizationId, sources);
        // Exports made before now may hold what was erased (issue 41).
        await dropExports(context, organizationId, agentId);
      }
      await finish(record, { status: 'completed', counts, completedAt: context.nowIso() });
    } catch (error) {
      context.logger.error('erasure failed', { erasureId: record.id, error: describeError(error) });
      await finish(record, { status: 'failed', counts, error: 'The erasure stopped on a storage failure; send it again.', completedAt: context.nowIso() });
    }
    await reclaimer.schedule();
  }

  /**
   * Settles an erasure and records its `erasure.finished` webhook event in the same transaction
   * (ids only, never the erased text), so a subscriber learns of every erasure exactly once.
   */
  async function finish(record: ErasureRecord, patch: { status: 'completed' | 'failed'; counts: ErasureCounts; completedAt: string; error?: string }): Promise<void> {
    await context.store.transaction(async (tx) => {
      await tx.erasures.update({ erasureId: record.id, patch, updatedAt: context.nowIso() });
      await emitErasureFinished(context, {
        organizationId: record.organizationId,
        store: tx,
        data: { erasure_id: record.id, agent_id: record.agentId, end_user_id: record.endUserId, status: patch.status, finished_at: patch.completedAt, target: { kind: record.target.kind, id: record.target.id } },
      });
    });
  }

  /** Erasures a stopped process left queued or running: run again from the start. */
  async function resume(): Promise<void> {
    for (const record of await context.store.erasures.listByStatus({ statuses: ['queued', 'running'] })) {
      context.background.run('erasure', { erasureId: record.id }, () => run(record));
    }
  }

  const erasures = {
    /** `POST /v1/agents/{agent_id}/memories/erase` -> 202 Erasure (`queued`). */
    async erase({ caller, agentId, body }: EraseRequest): Promise<ErasureOutput> {
      const input = parseBody(eraseBody, body);
      const agent = await findAgent(context, caller, agentId);
      const target = await resolveTarget(caller, agent, input);
      const now = context.nowIso();
      const record: ErasureRecord = {
        id: context.ids('era_'),
        organizationId: caller.organizationId,
        agentId: agent.id,
        endUserId: caller.endUserId,
        target,
        status: 'queued',
        counts: { ...NO_COUNTS },
        error: null,
        createdAt: now,
        updatedAt: now,
        startedAt: null,
        completedAt: null,
      };
      await context.store.erasures.insert({ erasure: record });
      if (target.kind === 'thread') {
        // Hidden at once, as a thread delete is.
        await context.store.threads.update({ agentId: agent.id, threadId: target.id, patch: { status: 'deleting' }, updatedAt: now });
      }
      context.background.run('erasure', { erasureId: record.id }, () => run(record));
      return present(record);
    },

    /** `GET /v1/agents/{agent_id}/erasures/{erasure_id}`: the job's status and counts. */
    async get({ caller, agentId, erasureId }: ErasureRequest): Promise<ErasureOutput> {
      const agent = await findAgent(context, caller, agentId);
      const record = ID_PATTERNS.erasure.test(erasureId) ? await context.store.erasures.get({ agentId: agent.id, erasureId }) : null;
      if (!record || record.organizationId !== caller.organizationId || (caller.endUserId !== null && record.endUserId !== caller.endUserId)) {
        throw notFound(`Erasure ${erasureId}`);
      }
      return present(record);
    },
  } satisfies MemoryService['erasures'];

  return { erasures, resume };
}
