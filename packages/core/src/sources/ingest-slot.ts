import type { Caller } from '../auth/caller.js';
import { ServiceError } from '../errors/index.js';
import { newJob, type NewTurn } from '../observations/new-job.js';
import type { DocumentIngestRecord, JobRecord, ThreadRecord } from '../ports/store/index.js';
import { ORGANIZATION_BUSY_RETRY_AFTER, type SourcesSetup } from './document-options.js';

/** The agent's single ingestion slot, for files: who may start reading one now, and storing it. */
export function createIngestSlot({ context, kick, maxLearning }: SourcesSetup) {
  /**
   * Refuses a file while the agent runs an `observe` (429, `Retry-After: 1`) or while the
   * organization already has `maxLearning` other agents reading files (429, `Retry-After: 90`).
   * Otherwise the file is queued when the agent has any unfinished job ahead of `seq`.
   */
  function slotFor(agentId: string, unfinished: JobRecord[], seq: number): { queued: boolean } {
    const ahead = unfinished.filter((job) => job.agentId === agentId && job.seq < seq);
    if (ahead.some((job) => job.kind === 'observe')) {
      throw new ServiceError('rate_limit_exceeded', 'The agent is learning observations; it learns one thing at a time. Retry after the Retry-After delay.', {
        retryAfter: 1,
        details: 'capacity',
      });
    }
    const learningAgents = new Set(unfinished.filter((job) => job.kind === 'document' && job.agentId !== agentId && job.seq < seq).map((job) => job.agentId));
    if (learningAgents.size >= maxLearning) {
      throw new ServiceError(
        'rate_limit_exceeded',
        `The organization already has ${learningAgents.size} agents learning files, the most at once; retry after the Retry-After delay.`,
        { retryAfter: ORGANIZATION_BUSY_RETRY_AFTER, details: 'ingestion-organization' },
      );
    }
    return { queued: ahead.length > 0 };
  }

  return {
    /** Cheap early refusal, before any conversion work (the insert checks again atomically). */
    async precheck(caller: Caller, agentId: string): Promise<void> {
      slotFor(agentId, await context.store.jobs.listUnfinished({ organizationId: caller.organizationId }), Number.MAX_SAFE_INTEGER);
    },

    /**
     * Stores the job, its turns and the ingest record in one transaction, under the slot rules.
     * The job row insert takes the agent's lock first, so the checks see every committed job.
     */
    async insert(
      caller: Caller,
      thread: ThreadRecord,
      turns: NewTurn[],
      record: Omit<DocumentIngestRecord, 'jobId' | 'createdAt'>,
      converting: boolean,
      scannedPages = 0,
    ): Promise<{ job: JobRecord; record: DocumentIngestRecord }> {
      const now = context.nowIso();
      const id = context.ids('obs_');
      const details = { sourceId: record.sourceId, filename: record.filename, converting, ...(converting ? { scannedPages } : {}) };
      const fresh = newJob({ id, now, caller, thread, kind: 'document', status: converting ? 'converting' : 'queued', details }, turns);
      const result = await context.store.transaction(async (store) => {
        const inserted = await store.jobs.insert({ ...fresh, onlyIfIdle: false });
        if (!inserted) throw new ServiceError('agent_not_found', `Agent ${thread.agentId} was not found.`);
        const slot = slotFor(thread.agentId, await store.jobs.listUnfinished({ organizationId: caller.organizationId }), inserted.seq);
        const job = slot.queued ? ((await store.jobs.update({ jobId: id, patch: { status: 'converting', queued: true } })) ?? inserted) : inserted;
        const stored: DocumentIngestRecord = { ...record, jobId: id, createdAt: now };
        await store.documents.insert({ record: stored });
        return { job, record: stored };
      });
      if (!converting) kick(thread.agentId);
      return result;
    },
  };
}

export type IngestSlot = ReturnType<typeof createIngestSlot>;
