import type { Caller } from '../auth/caller.js';
import { ServiceError } from '../errors/index.js';
import { activityEntry } from '../logs/activity.js';
import type { AgentRecord, ChunkingSettings, UploadRecord, JobRecord, ThreadRecord } from '../ports/store/index.js';
import type { DocumentIngestOutput } from '../schemas/outputs.js';
import type { ServiceContext } from '../service/context.js';
import type { DeferredConversions } from './deferred-conversion.js';
import type { SourcesSetup } from './document-options.js';
import type { IngestSlot } from './ingest-slot.js';
import type { Originals } from './originals.js';
import { readDocument } from './read-document.js';
import { uploadStates, type UploadState } from './upload-state.js';

/** A file to read into a new upload (observe-file, or finish-learning `here: true`). */
export type IngestInput = {
  bytes: Uint8Array;
  filename: string;
  declaredMediaType: string | null;
  chunking: ChunkingSettings;
  sourceId: string;
  /** The bytes are the stored original already (finish-learning `here: true`). */
  alreadyStored: boolean;
};

/**
 * Reads a file into a new upload: refuses what cannot be read (scans without OCR, too many scanned
 * pages), converts it in the request or defers it, checks the balance, stores the original, then
 * the job, its turns and the ingest record.
 */
export function createFileIngest(setup: SourcesSetup, slot: IngestSlot, originals: Originals, deferred: DeferredConversions) {
  const { context, convertLimits, ocrPagesInRequest, describe } = setup;

  return async function ingestFile({ caller, thread, input, abortSignal: signal }: { caller: Caller; thread: ThreadRecord; input: IngestInput; abortSignal?: AbortSignal | undefined }): Promise<DocumentIngestOutput> {
    await slot.precheck(caller, thread.agentId);
    const inspection = await context.converter.inspect({ bytes: input.bytes, filename: input.filename, limits: convertLimits, ...(signal ? { signal } : {}) });
    const scanned = inspection.pagesNeedingOcr.length;
    if (scanned > 0) {
      if (!context.ocr) throw new ServiceError('document_needs_ocr', 'The document is a scan and text recognition is not configured; send a text version.');
      if (scanned > convertLimits.maxOcrPages) {
        throw new ServiceError('document_too_many_pages', `The document has ${scanned} scanned pages; text recognition reads at most ${convertLimits.maxOcrPages} in one upload. Split it.`);
      }
      if (input.bytes.length > convertLimits.maxOcrBytes) {
        throw new ServiceError('document_too_large_for_ocr', `Scanned documents are read up to ${convertLimits.maxOcrBytes} bytes; this one has ${input.bytes.length}. Split it, or send a text version.`);
      }
    }
    const isDeferred = scanned > ocrPagesInRequest;
    const read = isDeferred
      ? null
      : await readDocument(context, { organizationId: caller.organizationId, sourceId: input.sourceId, bytes: input.bytes, filename: input.filename, chunking: input.chunking, limits: convertLimits, ...(signal ? { signal } : {}), ...describe });
    // 402 before anything is stored when billing is on and the balance cannot cover the words, as
    // for `observe` (a deferred scan, whose words are not known yet, needs a balance above zero).
    await context.credits.requireFunds(caller.organizationId, read?.wordsTotal ?? 0);
    const stored = input.alreadyStored || (await originals.store(caller.organizationId, input.sourceId, input.bytes, inspection.mediaType));
    const { job, record } = await slot.insert({
      caller,
      thread,
      turns: read?.turns ?? [],
      record: {
        organizationId: caller.organizationId,
        agentId: thread.agentId,
        threadId: thread.id,
        sourceId: input.sourceId,
        stored,
        filename: input.filename,
        docFormat: read?.format ?? inspection.format,
        mediaType: read?.mediaType ?? inspection.mediaType,
        bytes: input.bytes.length,
        chunking: input.chunking,
        turnsTotal: read?.turns.length ?? 0,
        figures: read?.figures ?? 0,
        figuresDropped: read?.figuresDropped ?? 0,
        wordsTotal: read?.wordsTotal ?? 0,
        deferred: isDeferred,
        resumes: null,
      },
      converting: isDeferred,
      scannedPages: scanned,
    });
    if (isDeferred && job.kind === 'document') deferred.start(job, record, input.bytes);
    await context.store.logs.append({ entries: [activityEntry(context, caller, { agentId: thread.agentId, threadId: thread.id, route: 'observe_file' })] });
    return ingestBody(record, job, { duplicate: false });
  };
}

/** The spec's "Document ingest response" for an upload and its (latest) job. */
export function ingestBody(
  record: UploadRecord,
  job: JobRecord,
  extra: { duplicate: boolean; state?: UploadState['state']; turnsTotal?: number; wordsTotal?: number },
): DocumentIngestOutput {
  return {
    agent_id: record.agentId,
    thread_id: job.threadId,
    observation_id: job.id,
    accepted: true,
    turns_total: extra.turnsTotal ?? record.turnsTotal,
    filename: record.filename,
    doc_format: record.docFormat,
    source_id: record.stored ? record.sourceId : '',
    deferred: record.deferred && record.turnsTotal === 0,
    figures: record.figures,
    figures_dropped: record.figuresDropped,
    words_total: extra.wordsTotal ?? record.wordsTotal,
    duplicate: extra.duplicate,
    ...(extra.state ? { document_state: extra.state } : {}),
    queued: job.queued,
  };
}

/**
 * The spec's "observe-file" duplicate rules: resolves a `duplicate: true` body, throws the 409 that
 * applies, or resolves null to read the file.
 */
export async function checkDuplicates(
  context: ServiceContext,
  { agent, thread, sourceId, allowDuplicate }: { agent: AgentRecord; thread: ThreadRecord; sourceId: string; allowDuplicate: boolean },
): Promise<DocumentIngestOutput | null> {
  const uploads = await uploadStates(context, await context.store.uploads.listBySource({ agentId: agent.id, sourceId }));
  if (uploads.length === 0) return null;
  const here = uploads.filter((upload) => upload.root.threadId === thread.id).at(-1);
  if (here) return ingestBody(here.root, here.latest, { duplicate: true, state: here.state });
  const elsewhere = uploads.filter((upload) => upload.root.threadId !== thread.id);
  if (elsewhere.some((upload) => upload.state === 'ingesting')) {
    throw new ServiceError('duplicate_upload_in_progress', 'The agent is already learning this file in another thread; what it learns is searchable from every thread.');
  }
  if (allowDuplicate) return null;
  if (elsewhere.some((upload) => upload.state === 'completed')) {
    throw new ServiceError('document_already_ingested', 'The agent already read these bytes in another thread; its memories are searchable already. Send allow_duplicate=true to read it again.');
  }
  throw new ServiceError('document_uploaded_elsewhere', 'An upload of this file in another thread stopped partway or failed; finish it with finish-learning, or send allow_duplicate=true (charged in full).');
}
