import { schemas, type ErrorCode } from '@memory-agents/core';
import { route } from '../route.js';

const THREAD = '/v1/agents/{agent_id}/threads/{thread_id}';

/** What reading a file can answer (spec "Errors / Codes"), on upload and when finishing one. */
const CONVERSION_CODES: readonly ErrorCode[] = [
  'unsupported_document', 'empty_document', 'encrypted_document', 'malformed_document', 'document_needs_ocr', 'ingestion_failed',
  'document_too_complex', 'document_too_many_turns', 'document_too_many_pages', 'document_too_large_for_ocr',
  'document_service_unavailable', 'ocr_failed', 'document_pages_unexpected', 'ocr_busy',
];

/** Content-Disposition with the original filename (ASCII fallback plus RFC 5987 UTF-8 form). */
function disposition(filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]|["\\]/g, '_');
  return `inline; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(filename)}`;
}

export const documentRoutes = [
  route({
    method: 'POST',
    path: `${THREAD}/observe-file`,
    operationId: 'observeFile',
    tag: 'Documents',
    rateLimit: 'observe_file',
    summary: 'Upload a document to learn (multipart/form-data; 202 once its turns are stored)',
    status: 202,
    upload: {
      maxFileBytes: (caller) => caller.limits.maxUploadBytes,
      tooLargeCode: 'document_too_large',
      fields: ['allow_duplicate', 'max_chars', 'overlap_chars', 'strategy'],
      form: schemas.observeFileForm,
    },
    response: schemas.documentIngestResponse,
    headers: ['X-SP-End-User', 'Idempotency-Key'],
    codes: [
      'agent_not_found', 'agent_not_ready', 'thread_not_found', 'payment_required', 'conflict', 'duplicate_upload_in_progress',
      'document_already_ingested', 'document_uploaded_elsewhere', 'document_too_large',
      ...CONVERSION_CODES,
    ],
    handler: async ({ service, caller, params, headers, upload, signal }) => ({
      body: await service.observeFile({
        caller,
        agentId: params.agent_id,
        threadId: params.thread_id,
        file: upload?.file ?? null,
        fields: upload?.fields ?? {},
        idempotencyKey: headers['idempotency-key'],
        abortSignal: signal,
      }),
    }),
  }),
  route({
    method: 'GET',
    path: `${THREAD}/sources`,
    operationId: 'listThreadSources',
    tag: 'Documents',
    summary: 'Documents uploaded in this thread, with their state and whether finish-learning can resume them',
    status: 200,
    response: schemas.sourcesResponse,
    headers: ['X-SP-End-User'],
    codes: ['agent_not_found', 'thread_not_found'],
    handler: async ({ service, caller, params }) => ({
      body: await service.sources.list({ caller, agentId: params.agent_id, threadId: params.thread_id }),
    }),
  }),
  route({
    method: 'POST',
    path: `${THREAD}/sources/{source_id}/finish-learning`,
    operationId: 'finishLearning',
    tag: 'Documents',
    summary: 'Resume a stopped or failed upload from its stored copy (or read it again here)',
    status: 202,
    body: schemas.finishLearningBody,
    response: schemas.documentIngestResponse,
    headers: ['X-SP-End-User'],
    codes: [
      'agent_not_found', 'agent_not_ready', 'thread_not_found', 'not_found', 'payment_required', 'conflict', 'duplicate_upload_in_progress',
      ...CONVERSION_CODES,
    ],
    handler: async ({ service, caller, params, body }) => ({
      body: await service.sources.finishLearning({ caller, agentId: params.agent_id, threadId: params.thread_id, sourceId: params.source_id, body: body as schemas.FinishLearningInput }),
    }),
  }),
  route({
    method: 'GET',
    path: '/v1/agents/{agent_id}/sources/{source_id}',
    operationId: 'getSource',
    tag: 'Documents',
    summary: 'The stored original of a document (what document citations link to)',
    status: 200,
    response: schemas.sourceBytes,
    binary: true,
    codes: ['agent_not_found', 'not_found'],
    handler: async ({ service, caller, params }) => {
      const source = await service.sources.get({ caller, agentId: params.agent_id, sourceId: params.source_id });
      return { binary: source.data, headers: { 'Content-Type': source.mediaType, 'Content-Disposition': disposition(source.filename) } };
    },
  }),
];
