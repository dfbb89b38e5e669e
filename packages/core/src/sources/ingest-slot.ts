import type { Caller } from '../auth/caller.js';
import { ServiceError } from '../errors/index.js';
import { agentBusy, createJobInsert } from '../observations/insert-job.js';
import type { NewTurn } from '../observations/new-job.js';
import type { UploadRecord, JobRecord, ThreadRecord } from '../ports/store/index.js';
import { ORGANIZATION_BUSY_RETRY_AFTER, type SourcesSetup } from './document-options.js';

/** The agent's single ingestion slot, for files: who may start reading one now, and storing it. */
/** A document job to store with its ingest record. */
export type SlotInsert = {
  caller: Caller;
  thread: ThreadRecord;
  turns: NewTurn[];
  record: Omit<UploadRecord, 'jobId' | 'createdAt'>;
  /** The file is still being converted (deferred OCR): the job starts `converting`. */
  converting: boolean;
  /** Scanned pages a deferred conversion reads. @default 0 */
  scannedPages?: number;
};

export function createIngestSlot({ context, kick, maxLearning }: SourcesSetup) {
  const insertJob = createJobInsert(context, kick);

  /**
   * Refuses a file while the agent runs an `observe` (429, `Retry-After: 1`) or while the
   * organization already has `maxLearning` other agents reading files (429, `Retry-After: 90`).
   * Otherwise the file is queued when the agent has any unfinished job ahead of `seq`.
   */
  function slotFor(agentId: string, unfinished: JobRecord[], seq: number): { queued: boolean } {
    const ahead = unfinished.filter((job) => job.agentId === agentId && job.seq < seq);
    if (ahead.some((job) => job.kind === 'observe')) {
      throw agentBusy('The agent is learning observations; it learns one thing at a time. Retry after the Retry-After delay.');
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
    async insert({ caller, thread, turns, record, converting, scannedPages = 0 }: SlotInsert): Promise<{ job: JobRecord; record: UploadRecord }> {
      const details = { sourceId: record.sourceId, filename: record.filename, converting, ...(converting ? { scannedPages } : {}) };
      return insertJob({
        caller,
        thread,
        turns,
        kind: 'document',
        status: converting ? 'converting' : 'queued',
        details,
        onlyIfIdle: false,
        // The job row holds the agent's lock: the slot rules see every committed job.
        async admit(store, inserted) {
          const slot = slotFor(thread.agentId, await store.jobs.listUnfinished({ organizationId: caller.organizationId }), inserted.seq);
          return slot.queued ? ((await store.jobs.update({ jobId: inserted.id, patch: { status: 'converting', queued: true } })) ?? inserted) : inserted;
        },
        async onStored(store, job) {
          const stored: UploadRecord = { ...record, jobId: job.id, createdAt: job.createdAt };
          await store.uploads.insert({ record: stored });
          return { job, record: stored };
        },
        // A file still converting is not ready to learn: the conversion wakes the worker.
        kick: !converting,
      });
    },
  };
}

export type IngestSlot = ReturnType<typeof createIngestSlot>;
