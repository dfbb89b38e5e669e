import type { ErrorCode } from '../errors/codes.js';

/** What reading a file can answer (spec "Errors / Codes"), on upload and when finishing one. */
export const CONVERSION_CODES = [
  'unsupported_document', 'empty_document', 'encrypted_document', 'malformed_document', 'document_needs_ocr', 'ingestion_failed',
  'document_too_complex', 'document_too_many_turns', 'document_too_many_pages', 'document_too_large_for_ocr',
  'document_service_unavailable', 'ocr_failed', 'document_pages_unexpected', 'ocr_busy',
] as const satisfies readonly ErrorCode[];

/** What an answering call can answer besides the common codes (images: 404 unknown id, 413 over the turn limits). */
export const ANSWER_CODES = [
  'agent_not_found', 'agent_not_ready', 'thread_not_found', 'not_found', 'payload_too_large', 'payment_required', 'answer_model_unavailable',
] as const satisfies readonly ErrorCode[];
