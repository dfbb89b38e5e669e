import { createHash } from 'node:crypto';
import { findAgent, findReadyAgent, findThread } from '../agents/lookup.js';
import type { Caller } from '../auth/caller.js';
import { resolveChunkOptions, type ChunkStrategy } from '../chunking/index.js';
import { countWords } from '../credits/pricing.js';
import { inspectDocument } from '../documents/convert-document.js';
import { resolveLimits as resolveConvertLimits, type ConvertDocumentLimits } from '../documents/limits.js';
import { ServiceError, isServiceError } from '../errors/index.js';
import { createIdempotency } from '../idempotency/idempotency.js';
import { ID_PATTERNS, contentId } from '../ids/index.js';
import { activityEntry } from '../logs/activity.js';
import { newJob, toTurnRecord, type NewTurn } from '../observations/new-job.js';
import type { AgentRecord, JobRecord, ThreadRecord } from '../ports/store.js';
import type { ChunkingSettings, DocumentIngestRecord } from '../ports/store-documents.js';
import { finishLearningBody, observeFileFields, type DocumentIngestBody } from '../schemas/documents.js';
import type { ServiceContext } from '../service/context.js';
import { parseBody } from '../validation/parse.js';
import type { FigureDescriberOptions } from './describe-figures.js';
import { readDocument, sourceBlobKey, type ReadDocument } from './read-document.js';
import { uploadStates, type UploadState } from './upload-state.js';

/** One uploaded file as the HTTP layer (or an embedding program) hands it over. */
export type FileUpload = {
  /** The filename the client sent (also each turn's speaker). */
  filename: string;
  /** The part's declared media type, if any; only a hint. */
  mediaType: string | null;
  data: Uint8Array;
};

/** What `observe-file` receives besides the path. */
export type ObserveFileRequest = {
  /** The `file` part, or null when the form had none. */
  file: FileUpload | null;
  /** The form's text fields (`allow_duplicate`, `max_chars`, `overlap_chars`, `strategy`). */
  fields: Record<string, string>;
  /** The `Idempotency-Key` header, if sent. */
  idempotencyKey?: string | undefined;
  signal?: AbortSignal;
};

/** Options of the document service (`createMemoryService({ documents })`). */
export type DocumentOptions = {
  /**
   * Scanned pages read by OCR inside the request; a document needing more is accepted with
   * `deferred: true` and converted in the background.
   * @default OCR_PAGES_IN_REQUEST (4)
   */
  ocrPagesInRequest?: number;
  /**
   * Agents of one organization that may be learning files at once; one more -> 429 with
   * `Retry-After: 90` (details `ingestion-organization`).
   * @default MAX_FILES_LEARNING_PER_ORGANIZATION (3)
   */
  maxFilesLearningPerOrganization?: number;
  /** Converter budgets (pages, OCR pages, figures, time). @default the converter's defaults */
  convertLimits?: ConvertDocumentLimits;
  /**
   * A vision-capable model that describes each kept figure (bounded, failing soft to caption +
   * OCR text). The server sets it for a configured network model only. @default none
   */
  describeFigures?: FigureDescriberOptions;
};

/** Default {@link DocumentOptions.ocrPagesInRequest}: about 20 s of tesseract on two cores. */
export const OCR_PAGES_IN_REQUEST = 4;
/** Default {@link DocumentOptions.maxFilesLearningPerOrganization} (spec "Limits / Documents"). */
export const MAX_FILES_LEARNING_PER_ORGANIZATION = 3;
/** Seconds a caller waits when the organization's document work is full (spec "Limits / Documents"). */
export const ORGANIZATION_BUSY_RETRY_AFTER = 90;
/**
 * Extra wall-clock budget of a background (deferred) conversion per scanned page, over the
 * converter's own `timeoutMs`: tesseract reads a dense page in 5-15 s on two cores, so a long scan
 * would otherwise pass the in-request budget meant for one upload.
 */
export const DEFERRED_MS_PER_SCANNED_PAGE = 60_000;
type Slot = { queued: boolean };

export function createSources(context: ServiceContext, kick: (agentId: string) => void, options: DocumentOptions = {}) {
  const ocrPagesInRequest = options.ocrPagesInRequest ?? OCR_PAGES_IN_REQUEST;
  const maxLearning = options.maxFilesLearningPerOrganization ?? MAX_FILES_LEARNING_PER_ORGANIZATION;
  const convertLimits = resolveConvertLimits(options.convertLimits);
  const idempotency = createIdempotency(context);
  const describe = options.describeFigures ? { describeFigures: options.describeFigures } : {};

  // -------------------------------------------------------------------------------------------
  // The agent's single ingestion slot, for files

  /**
   * Refuses a file while the agent runs an `observe` (429, `Retry-After: 1`) or while the
   * organization already has `maxLearning` other agents reading files (429, `Retry-After: 90`).
   * Otherwise the file is queued when the agent has any unfinished job ahead of `seq`.
   */
  function slotFor(agentId: string, unfinished: JobRecord[], seq: number): Slot {
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

  /** Cheap early refusal, before any conversion work (the insert checks again atomically). */
  async function precheckSlot(caller: Caller, agentId: string): Promise<void> {
    slotFor(agentId, await context.store.jobs.listUnfinished({ organizationId: caller.organizationId }), Number.MAX_SAFE_INTEGER);
  }

  /**
   * Stores the job, its turns and the ingest record in one transaction, under the slot rules.
   * The job row insert takes the agent's lock first, so the checks see every committed job.
   */
  async function insertIngest(
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
  }

  // -------------------------------------------------------------------------------------------
  // Storage of originals

  async function storeOriginal(organizationId: string, sourceId: string, data: Uint8Array, mediaType: string): Promise<boolean> {
    try {
      await context.blobs.put({ key: sourceBlobKey(organizationId, sourceId), data, mediaType });
      return true;
    } catch (error) {
      // Spec "Document ingest response": ingestion still succeeds, with `source_id` "".
      context.logger.warn('original document not stored', { sourceId, error: String(error) });
      return false;
    }
  }

  async function loadOriginal(record: DocumentIngestRecord): Promise<Uint8Array | null> {
    if (!record.stored) return null;
    try {
      return (await context.blobs.get({ key: sourceBlobKey(record.organizationId, record.sourceId) }))?.data ?? null;
    } catch (error) {
      context.logger.warn('original document not readable', { sourceId: record.sourceId, error: String(error) });
      return null;
    }
  }

  // -------------------------------------------------------------------------------------------
  // Deferred conversion (OCR beyond the in-request budget)

  async function failConversion(job: JobRecord, error: unknown): Promise<void> {
    const serviceError = isServiceError(error) ? error : new ServiceError('ingestion_failed', 'The document could not be converted.');
    if (!isServiceError(error)) context.logger.error('deferred conversion failed', { jobId: job.id, error: String(error) });
    const message = `${serviceError.code}: ${serviceError.message}`;
    await context.store.jobs.update({
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
  async function convertDeferred(job: JobRecord, record: DocumentIngestRecord, bytes: Uint8Array | null): Promise<void> {
    try {
      const data = bytes ?? (await loadOriginal(record));
      if (!data) throw new ServiceError('ingestion_failed', 'The stored original of this upload is gone; upload the file again.');
      let read: ReadDocument;
      try {
        const scannedPages = typeof job.details.scannedPages === 'number' ? job.details.scannedPages : 0;
        const limits = { ...convertLimits, timeoutMs: convertLimits.timeoutMs + DEFERRED_MS_PER_SCANNED_PAGE * scannedPages };
        read = await readDocument(context, { organizationId: record.organizationId, sourceId: record.sourceId, bytes: data, filename: record.filename, chunking: record.chunking, limits, ...describe });
      } catch (error) {
        await failConversion(job, error);
        return;
      }
      const current = await context.store.jobs.get({ agentId: job.agentId, jobId: job.id });
      if (!current || current.status !== 'converting') return;
      await context.store.jobs.appendTurns({ jobId: job.id, turns: read.turns.map((turn, index) => toTurnRecord(job.id, index, turn)) });
      await context.store.documents.update({
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

  function startDeferred(job: JobRecord, record: DocumentIngestRecord, bytes: Uint8Array | null): void {
    context.background.run('deferred document conversion', { jobId: job.id }, () => convertDeferred(job, record, bytes));
  }

  // -------------------------------------------------------------------------------------------
  // Reading a file into a new upload (observe-file, finish-learning `here: true`)

  async function ingestBytes(
    caller: Caller,
    thread: ThreadRecord,
    input: { bytes: Uint8Array; filename: string; declaredMediaType: string | null; chunking: ChunkingSettings; sourceId: string; alreadyStored: boolean },
    signal: AbortSignal | undefined,
  ): Promise<DocumentIngestBody> {
    await precheckSlot(caller, thread.agentId);
    const inspection = await inspectDocument(input.bytes, input.filename, { limits: convertLimits, ...(signal ? { signal } : {}) });
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
    const deferred = scanned > ocrPagesInRequest;
    const read = deferred
      ? null
      : await readDocument(context, { organizationId: caller.organizationId, sourceId: input.sourceId, bytes: input.bytes, filename: input.filename, chunking: input.chunking, limits: convertLimits, ...(signal ? { signal } : {}), ...describe });
    // 402 before anything is stored when billing is on and the balance cannot cover the words
    // (a deferred scan, whose words are not known yet, needs a balance above zero).
    await context.credits.requireFunds(caller.organizationId, read?.wordsTotal ?? 0);
    // 402 before anything is stored, as for `observe` (a deferred upload's words are known later; it needs a positive balance).
    await context.credits.requireFunds(caller.organizationId, read?.wordsTotal ?? 0);
    const stored = input.alreadyStored || (await storeOriginal(caller.organizationId, input.sourceId, input.bytes, inspection.mediaType));
    const { job, record } = await insertIngest(
      caller,
      thread,
      read?.turns ?? [],
      {
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
        deferred,
        resumes: null,
      },
      deferred,
      scanned,
    );
    // The bytes stay in memory for the background conversion; a restart reads the stored copy.
    if (deferred) startDeferred(job, record, input.bytes);
    await context.store.logs.append({ entries: [activityEntry(context, caller, { agentId: thread.agentId, threadId: thread.id, route: 'observe_file' })] });
    return ingestBody(record, job, { duplicate: false });
  }

  function ingestBody(record: DocumentIngestRecord, job: JobRecord, extra: { duplicate: boolean; state?: UploadState['state']; turnsTotal?: number; wordsTotal?: number }): DocumentIngestBody {
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

  // -------------------------------------------------------------------------------------------
  // Duplicates (spec "observe-file": duplicate rules)

  /** Resolves a `duplicate: true` body, throws the 409 that applies, or resolves null to read the file. */
  async function checkDuplicates(agent: AgentRecord, thread: ThreadRecord, sourceId: string, allowDuplicate: boolean): Promise<DocumentIngestBody | null> {
    const uploads = await uploadStates(context, await context.store.documents.listBySource({ agentId: agent.id, sourceId }));
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

  // -------------------------------------------------------------------------------------------

  async function resumeConversions(): Promise<void> {
    for (const agentId of await context.store.jobs.agentsWithUnfinishedJobs()) {
      const job = await context.store.jobs.nextForAgent({ agentId });
      if (!job || job.kind !== 'document' || job.details.converting !== true) continue;
      const record = await context.store.documents.get({ agentId, jobId: job.id });
      if (record) startDeferred(job, record, null);
      else await failConversion(job, new ServiceError('ingestion_failed', 'The upload record is gone; upload the file again.'));
    }
  }

  return {
    /** Restarts the background conversions a stopped process left (deferred uploads). */
    resumeConversions,

    /** `POST .../observe-file` -> 202 Document ingest response. */
    async observeFile(caller: Caller, agentId: string, threadId: string, request: ObserveFileRequest): Promise<DocumentIngestBody> {
      const agent = await findReadyAgent(context, caller, agentId);
      const thread = await findThread(context, caller, agent, threadId);
      const fields = parseBody(observeFileFields, request.fields, 'form');
      const resolved = resolveChunkOptions({
        ...(fields.strategy === undefined ? {} : { strategy: fields.strategy }),
        ...(fields.max_chars === undefined ? {} : { maxChars: Number(fields.max_chars) }),
        ...(fields.overlap_chars === undefined ? {} : { overlapChars: Number(fields.overlap_chars) }),
      });
      const chunking: ChunkingSettings = { strategy: resolved.strategy, maxChars: resolved.maxChars, overlapChars: resolved.overlapChars };
      const allowDuplicate = fields.allow_duplicate === 'true';
      const file = request.file;
      if (!file) throw new ServiceError('invalid_request', 'The form has no `file` part; send the document as the `file` field.', { status: 422 });
      const filename = cleanFilename(file.filename);
      if (file.data.length > caller.limits.maxUploadBytes) {
        throw new ServiceError('document_too_large', `The document is ${file.data.length} bytes; the limit is ${caller.limits.maxUploadBytes}. Split it.`);
      }
      if (file.data.length === 0) throw new ServiceError('empty_document', 'The file is empty.');
      const sourceId = contentId('src_', caller.organizationId, file.data);
      const fingerprint = createHash('sha256')
        .update(JSON.stringify([agent.id, thread.id, sourceId, filename, chunking.strategy, chunking.maxChars, chunking.overlapChars, allowDuplicate]))
        .digest('hex');
      return idempotency.run(caller, request.idempotencyKey, fingerprint, { what: 'upload', status: 202 }, async () => {
        const duplicate = await checkDuplicates(agent, thread, sourceId, allowDuplicate);
        if (duplicate) return duplicate;
        return ingestBytes(caller, thread, { bytes: file.data, filename, declaredMediaType: file.mediaType, chunking, sourceId, alreadyStored: false }, request.signal);
      });
    },

    /** `GET .../threads/{thread_id}/sources`: the uploads read in this thread, newest first. */
    async listSources(caller: Caller, agentId: string, threadId: string) {
      const agent = await findAgent(context, caller, agentId);
      const thread = await findThread(context, caller, agent, threadId);
      const roots = (await context.store.documents.listByThread({ agentId: agent.id, threadId: thread.id })).filter((record) => record.resumes === null);
      const sources = [];
      for (const root of roots) {
        const [upload] = await uploadStates(context, (await context.store.documents.listBySource({ agentId: agent.id, sourceId: root.sourceId })).filter((r) => r.jobId === root.jobId || r.resumes === root.jobId));
        if (!upload) continue;
        sources.push({
          source_id: root.stored ? root.sourceId : '',
          filename: root.filename,
          doc_format: root.docFormat,
          media_type: root.mediaType,
          bytes: root.bytes,
          document_state: upload.state,
          thread_id: root.threadId,
          observation_id: upload.latest.id,
          turns_total: root.turnsTotal,
          turns_learned: upload.learned.size,
          can_finish: root.stored && (upload.state === 'partial' || upload.state === 'failed'),
          created_at: root.createdAt,
        });
      }
      return { sources };
    },

    /** `POST .../sources/{source_id}/finish-learning` -> 202 Document ingest response. */
    async finishLearning(caller: Caller, agentId: string, threadId: string, sourceId: string, body: unknown): Promise<DocumentIngestBody> {
      const input = parseBody(finishLearningBody, body ?? {});
      const agent = await findReadyAgent(context, caller, agentId);
      const thread = await findThread(context, caller, agent, threadId);
      if (!ID_PATTERNS.source.test(sourceId)) throw new ServiceError('not_found', `Source ${sourceId} was not found.`);
      const records = await context.store.documents.listBySource({ agentId: agent.id, sourceId });
      const uploads = (await uploadStates(context, records)).filter((upload) => upload.root.organizationId === caller.organizationId);
      if (uploads.length === 0) throw new ServiceError('not_found', `Source ${sourceId} was not found on this agent.`);
      const requested: Partial<ChunkingSettings> = {
        ...(input.strategy === undefined ? {} : { strategy: input.strategy }),
        ...(input.max_chars === undefined ? {} : { maxChars: input.max_chars }),
        ...(input.overlap_chars === undefined ? {} : { overlapChars: input.overlap_chars }),
      };

      if (input.here === true) {
        const original = uploads.find((upload) => upload.root.stored)?.root;
        const bytes = original ? await loadOriginal(original) : null;
        if (!original || !bytes) throw new ServiceError('conflict', 'The original of this source was not stored; upload the file again.');
        const resolved = resolveChunkOptions({ ...original.chunking, ...requested } as { strategy: ChunkStrategy; maxChars: number; overlapChars: number });
        return ingestBytes(
          caller,
          thread,
          { bytes, filename: original.filename, declaredMediaType: original.mediaType, chunking: resolved, sourceId, alreadyStored: true },
          undefined,
        );
      }

      if (uploads.some((upload) => upload.state === 'ingesting')) {
        throw new ServiceError('duplicate_upload_in_progress', 'The agent is still learning this file; poll its observation status.');
      }
      const unfinished = uploads.filter((upload) => upload.state === 'partial' || upload.state === 'failed');
      const target = unfinished.find((upload) => upload.root.threadId === thread.id) ?? unfinished.at(-1);
      if (!target) throw new ServiceError('conflict', 'Every piece of this file was learned already; there is nothing to finish.');
      const root = target.root;
      const differs = (Object.keys(requested) as (keyof ChunkingSettings)[]).some((key) => requested[key] !== root.chunking[key]);
      if (differs) {
        throw new ServiceError(
          'conflict',
          `This upload was read with strategy ${root.chunking.strategy}, max_chars ${root.chunking.maxChars}, overlap_chars ${root.chunking.overlapChars}; it resumes only with those settings (or send here: true to read it again).`,
        );
      }
      let home: ThreadRecord;
      try {
        home = await findThread(context, caller, agent, root.threadId);
      } catch {
        throw new ServiceError('conflict', 'This file was uploaded in a thread you cannot open; send {"here": true} to read the whole file again in this thread.');
      }
      const turns = await piecesNotLearned(root, target.learned);
      if (turns === null) throw new ServiceError('conflict', 'The original of this source was not stored; upload the file again.');
      const resumedWords = turns.reduce((sum, turn) => sum + (turn.words ?? 0), 0);
      await precheckSlot(caller, agent.id);
      await context.credits.requireFunds(caller.organizationId, resumedWords);
      const { job, record } = await insertIngest(
        caller,
        home,
        turns.map(({ words: _words, ...turn }) => turn),
        { ...root, threadId: home.id, resumes: root.jobId, wordsTotal: resumedWords, deferred: false },
        false,
      );
      await context.store.logs.append({ entries: [activityEntry(context, caller, { agentId: agent.id, threadId: home.id, route: 'observe_file' })] });
      return ingestBody({ ...record, turnsTotal: turns.length }, job, { duplicate: false, state: 'ingesting', turnsTotal: turns.length, wordsTotal: resumedWords });
    },

    /** `GET /v1/agents/{agent_id}/sources/{source_id}`: the stored original, to the same organization. */
    async getSource(caller: Caller, agentId: string, sourceId: string): Promise<{ data: Uint8Array; mediaType: string; filename: string }> {
      const agent = await findAgent(context, caller, agentId);
      const notFound = () => new ServiceError('not_found', `Source ${sourceId} was not found.`);
      if (!ID_PATTERNS.source.test(sourceId)) throw notFound();
      const record = (await context.store.documents.listBySource({ agentId: agent.id, sourceId })).find((r) => r.stored && r.organizationId === caller.organizationId);
      if (!record) throw notFound();
      const blob = await context.blobs.get({ key: sourceBlobKey(caller.organizationId, sourceId) });
      if (!blob) throw notFound();
      return { data: blob.data, mediaType: record.mediaType, filename: record.filename };
    },

    /** Media type of a source the agent read, for citations (`application/octet-stream` when unknown). */
    async mediaTypeOf(agentId: string, sourceId: string): Promise<string> {
      const [record] = await context.store.documents.listBySource({ agentId, sourceId });
      return record?.mediaType ?? 'application/octet-stream';
    },
  };

  /** The root's pieces no job of the upload committed, as turns (from the root's stored turns). */
  async function piecesNotLearned(root: DocumentIngestRecord, learned: Set<number>): Promise<(NewTurn & { words?: number })[] | null> {
    const all: NewTurn[] = [];
    for (let fromIndex = 0; ; ) {
      const page = await context.store.jobs.listTurns({ jobId: root.jobId, fromIndex, limit: 1000 });
      if (page.length === 0) break;
      for (const turn of page) all.push({ speaker: turn.speaker, text: turn.text, timestamp: turn.timestamp, tags: turn.tags, details: turn.details });
      fromIndex = page.at(-1)!.turnIndex + 1;
    }
    if (all.length === 0) {
      // The root never got its turns (its deferred conversion failed): read the stored original.
      const bytes = await loadOriginal(root);
      if (!bytes) return null;
      const read = await readDocument(context, { organizationId: root.organizationId, sourceId: root.sourceId, bytes, filename: root.filename, chunking: root.chunking, limits: convertLimits, ...describe });
      await context.store.documents.update({ jobId: root.jobId, patch: { turnsTotal: read.turns.length, figures: read.figures, figuresDropped: read.figuresDropped } });
      all.push(...read.turns);
      root.turnsTotal = read.turns.length;
    }
    return all
      .filter((turn, index) => !learned.has(typeof turn.details?.piece === 'number' ? (turn.details.piece as number) : index))
      .map((turn) => ({ ...turn, words: countWords(turn.text) }));
  }
}

/** The filename as a speaker: its last path segment, control characters removed, at most 255 chars. */
function cleanFilename(raw: string): string {
  // eslint-disable-next-line no-control-regex
  const name = (raw.split(/[\\/]/).at(-1) ?? '').replace(/[\u0000-\u001f\u007f]/g, '').trim().slice(0, 255);
  return name === '' ? 'document' : name;
}

export type Sources = ReturnType<typeof createSources>;
