import { createHash } from 'node:crypto';
import { findAgent, findReadyAgent, findThread } from '../agents/lookup.js';
import { readableThreadIds } from '../agents/memory-scope.js';
import { resolveChunkOptions } from '../chunking/index.js';
import { resolveLimits as resolveConvertLimits } from '../conversion/limits.js';
import { ServiceError } from '../errors/index.js';
import { createIdempotency } from '../idempotency/idempotency.js';
import { ID_PATTERNS, contentId } from '../ids/index.js';
import type { ChunkingSettings } from '../ports/store/index.js';
import type { MemoryService, StoredOriginal } from '../memory-service.js';
import type { DocumentIngestOutput, SourcesListOutput } from '../schemas/outputs.js';
import type { ObserveFileRequest, SourceRequest, ThreadRequest } from '../service/requests.js';
import { observeFileFields } from '../schemas/documents.js';
import type { ServiceContext } from '../service/context.js';
import { parseBody } from '../validation/parse.js';
import { createDeferredConversions } from './deferred-conversion.js';
import { MAX_FILES_LEARNING_PER_ORGANIZATION, OCR_PAGES_IN_REQUEST, type DocumentOptions, type SourcesSetup } from './document-options.js';
import { createFinishLearning } from './finish-learning.js';
import { checkDuplicates, createFileIngest } from './ingest-file.js';
import { createIngestSlot } from './ingest-slot.js';
import { createOriginals } from './originals.js';
import { sourceBlobKey } from './read-document.js';
import { uploadStates } from './upload-state.js';

export {
  DEFERRED_MS_PER_SCANNED_PAGE,
  MAX_FILES_LEARNING_PER_ORGANIZATION,
  OCR_PAGES_IN_REQUEST,
  ORGANIZATION_BUSY_RETRY_AFTER,
  type DocumentOptions,
} from './document-options.js';

/**
 * The document service: uploads (`observe-file`), their listing, `finish-learning`, stored
 * originals, and the background conversions of scans. Composed of named parts: the agent's
 * ingestion slot (`ingest-slot.ts`), stored originals (`originals.ts`), deferred conversion
 * (`deferred-conversion.ts`), reading a file into an upload (`ingest-file.ts`) and resuming one
 * (`finish-learning.ts`).
 */
export function createSources(context: ServiceContext, kick: (agentId: string) => void, options: DocumentOptions = {}) {
  const setup: SourcesSetup = {
    context,
    kick,
    ocrPagesInRequest: options.ocrPagesInRequest ?? OCR_PAGES_IN_REQUEST,
    maxLearning: options.maxFilesLearningPerOrganization ?? MAX_FILES_LEARNING_PER_ORGANIZATION,
    convertLimits: resolveConvertLimits(options.convertLimits),
    describe: options.describeFigures ? { describeFigures: options.describeFigures } : {},
  };
  const idempotency = createIdempotency(context);
  const slot = createIngestSlot(setup);
  const originals = createOriginals(context);
  const deferred = createDeferredConversions(setup, originals);
  const ingestFile = createFileIngest(setup, slot, originals, deferred);
  const finishLearning = createFinishLearning(setup, slot, originals, ingestFile);

  /** `POST .../observe-file` -> 202 Document ingest response. */
  async function observeFile(request: ObserveFileRequest): Promise<DocumentIngestOutput> {
    const { caller, agentId, threadId } = request;
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
    return idempotency.run({ caller, idempotencyKey: request.idempotencyKey, fingerprint, what: 'upload', status: 202 }, async () => {
      const duplicate = await checkDuplicates(context, { agent, thread, sourceId, allowDuplicate });
      if (duplicate) return duplicate;
      return ingestFile({ caller, thread, input: { bytes: file.data, filename, declaredMediaType: file.mediaType, chunking, sourceId, alreadyStored: false }, abortSignal: request.abortSignal });
    });
  }

  const service = {
    /** `GET .../threads/{thread_id}/sources`: the uploads read in this thread, newest first. */
    async list({ caller, agentId, threadId }: ThreadRequest): Promise<SourcesListOutput> {
      const agent = await findAgent(context, caller, agentId);
      const thread = await findThread(context, caller, agent, threadId);
      const roots = (await context.store.uploads.listByThread({ agentId: agent.id, threadId: thread.id })).filter((record) => record.resumes === null);
      const sources = [];
      for (const root of roots) {
        const [upload] = await uploadStates(context, (await context.store.uploads.listBySource({ agentId: agent.id, sourceId: root.sourceId })).filter((r) => r.jobId === root.jobId || r.resumes === root.jobId));
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
    finishLearning,

    /** `GET /v1/agents/{agent_id}/sources/{source_id}`: the stored original, to the same organization (and scope). */
    async get({ caller, agentId, sourceId }: SourceRequest): Promise<StoredOriginal> {
      const agent = await findAgent(context, caller, agentId);
      const notFound = () => new ServiceError('not_found', `Source ${sourceId} was not found.`);
      if (!ID_PATTERNS.source.test(sourceId)) throw notFound();
      // What citations link to follows what answers read: with `memory_scope: "end_user"`, a person
      // gets the originals uploaded in their own threads and in threads of no person (issue 42).
      const readable = await readableThreadIds(context, caller, agent, 'answer');
      const record = (await context.store.uploads.listBySource({ agentId: agent.id, sourceId })).find(
        (r) => r.stored && r.organizationId === caller.organizationId && (readable === undefined || readable.includes(r.threadId)),
      );
      if (!record) throw notFound();
      const blob = await context.blobs.get({ key: sourceBlobKey(caller.organizationId, sourceId) });
      if (!blob) throw notFound();
      return { data: blob.data, mediaType: record.mediaType, filename: record.filename };
    },
  } satisfies MemoryService['sources'];

  return {
    sources: service,
    /** `POST .../observe-file` -> 202 Document ingest response (`service.observeFile`). */
    observeFile,
    /** Restarts the background conversions a stopped process left (deferred uploads). */
    resumeConversions: deferred.resume,
  };
}

/** The filename as a speaker: its last path segment, control characters removed, at most 255 chars. */
function cleanFilename(raw: string): string {
  // eslint-disable-next-line no-control-regex
  const name = (raw.split(/[\\/]/).at(-1) ?? '').replace(/[\u0000-\u001f\u007f]/g, '').trim().slice(0, 255);
  return name === '' ? 'document' : name;
}

export type Sources = ReturnType<typeof createSources>;
