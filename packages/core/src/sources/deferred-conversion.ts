import { describeError } from '../service/logger.js';
import { redactTurns } from '../policy/extraction-policy.js';
import { ServiceError, isServiceError } from '../errors/index.js';
import { toTurnRecord } from '../observations/new-job.js';
import type { UploadRecord, DocumentJobRecord } from '../ports/store/index.js';
import { DEFERRED_MS_PER_SCANNED_PAGE, type SourcesSetup } from './document-options.js';
import type { Originals } from './originals.js';
import { readDocument, type ReadDocument } from './read-document.js';
import { updateJobWithEvents } from '../webhooks/events.js';

/** Deferred conversion: uploads needing more OCR than a request allows are read in the background. */
export function createDeferredConversions({ context, kick, convertLimits, describe }: SourcesSetup, originals: Originals) {
  async function fail(job: DocumentJobRecord, error: unknown): Promise<void> {
    const serviceError = isServiceError(error) ? error : new ServiceError('ingestion_failed', 'The document could not be converted.');
    if (!isServiceError(error)) context.logger.error('deferred conversion failed', { jobId: job.id, error: describeError(error) });
    const message = `${serviceError.code}: ${serviceError.message}`;
    await updateJobWithEvents(context, {
      jobId: job.id,
      patch: {
        status: 'failed',
        queued: false,
        error: message,
        learning: { ranges: [], reason: 'job_failed', message, refundedCredits: null },
        details: { ...job.details, converting: false },
        updatedAt: context.nowIso(),
      },
    });
  }

  /** Converts a deferred upload, appends its turns and lets the agent's worker take it. */
  async function convert(job: DocumentJobRecord, record: UploadRecord, bytes: Uint8Array | null): Promise<void> {
    try {
      const data = bytes ?? (await originals.load(record));
      if (!data) throw new ServiceError('ingestion_failed', 'The stored original of this upload is gone; upload the file again.');
      let read: ReadDocument;
      try {
        const scannedPages = job.details.scannedPages ?? 0;
        const limits = { ...convertLimits, timeoutMs: convertLimits.timeoutMs + DEFERRED_MS_PER_SCANNED_PAGE * scannedPages };
        read = await readDocument(context, { organizationId: record.organizationId, sourceId: record.sourceId, bytes: data, filename: record.filename, chunking: record.chunking, limits, ...describe });
      } catch (error) {
        await fail(job, error);
        return;
      }
      const current = await context.store.jobs.get({ agentId: job.agentId, jobId: job.id });
      if (!current || current.kind !== 'document' || current.status !== 'converting') return;
      const turns = await redactTurns(context, { organizationId: job.organizationId, agentId: job.agentId }, read.turns);
      await context.store.jobs.appendTurns({ jobId: job.id, turns: turns.map((turn, index) => toTurnRecord(job.id, index, turn)) });
      await context.store.uploads.update({
        jobId: job.id,
        patch: { turnsTotal: read.turns.length, figures: read.figures, figuresDropped: read.figuresDropped, wordsTotal: read.wordsTotal, docFormat: read.format, mediaType: read.mediaType },
      });
      const unfinished = await context.store.jobs.listUnfinished({ organizationId: job.organizationId });
      const ahead = unfinished.some((other) => other.agentId === job.agentId && other.seq < job.seq);
      await context.store.jobs.update({
        jobId: job.id,
        patch: { status: ahead ? 'converting' : 'queued', queued: ahead, details: { ...current.details, converting: false }, updatedAt: context.nowIso() },
      });
    } finally {
      kick(job.agentId);
    }
  }

  function start(job: DocumentJobRecord, record: UploadRecord, bytes: Uint8Array | null): void {
    context.background.run('deferred document conversion', { jobId: job.id }, () => convert(job, record, bytes));
  }

  return {
    /** Converts in the background; the bytes stay in memory for it (a restart reads the stored copy). */
    start,

    /** Restarts the background conversions a stopped process left (deferred uploads). */
    async resume(): Promise<void> {
      for (const agentId of await context.store.jobs.agentsWithUnfinishedJobs()) {
        const job = await context.store.jobs.nextForAgent({ agentId });
        if (!job || job.kind !== 'document' || !job.details.converting) continue;
        const record = await context.store.uploads.get({ agentId, jobId: job.id });
        if (record) start(job, record, null);
        else await fail(job, new ServiceError('ingestion_failed', 'The upload record is gone; upload the file again.'));
      }
    },
  };
}

export type DeferredConversions = ReturnType<typeof createDeferredConversions>;
