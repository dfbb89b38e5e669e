/**
 * The spec's complete error-code table (section "Errors / Codes"): code -> default status and a
 * default sentence. `ErrorCode` is `keyof` this map, so an unknown code does not compile.
 */
export const ERROR_CODES = {
  invalid_request: { status: 400, message: 'The request is malformed or a value is out of range.' },
  unauthorized: { status: 401, message: 'The API key is missing, malformed, unknown, revoked or expired.' },
  forbidden: { status: 403, message: 'The credential is valid but may not take this action.' },
  payment_required: { status: 402, message: 'The organization is out of credit; nothing was learned or answered.' },
  not_found: { status: 404, message: 'Not found.' },
  agent_not_found: { status: 404, message: 'Agent not found.' },
  thread_not_found: { status: 404, message: 'Thread not found.' },
  conflict: { status: 409, message: 'The request does not fit the current state.' },
  agent_not_ready: { status: 409, message: 'The agent is not ready.' },
  agent_quota_exceeded: { status: 409, message: 'The organization reached its agent quota.' },
  upload_in_progress: { status: 409, message: 'An upload is in progress.' },
  duplicate_upload_in_progress: { status: 409, message: 'The agent is already learning this file.' },
  document_already_ingested: { status: 409, message: 'The agent already read these bytes in another thread.' },
  document_uploaded_elsewhere: { status: 409, message: 'An upload of this file in another thread stopped partway or failed.' },
  payload_too_large: { status: 413, message: 'The images are too large or too many.' },
  document_too_large: { status: 413, message: 'The document is over the size limit.' },
  document_too_complex: { status: 413, message: 'The document passes a processing limit.' },
  document_too_many_turns: { status: 413, message: 'The document would become more than 2,000 pieces.' },
  document_too_many_pages: { status: 413, message: 'The document has more pages than text recognition accepts in one upload.' },
  document_too_large_for_ocr: { status: 413, message: 'The scanned document is larger than text recognition accepts.' },
  unsupported_document: { status: 400, message: 'This file type is not converted.' },
  empty_document: { status: 400, message: 'The document has no readable text.' },
  encrypted_document: { status: 400, message: 'The document has a password.' },
  malformed_document: { status: 400, message: 'The file could not be read.' },
  document_needs_ocr: { status: 400, message: 'The document is a scan and text recognition is not available for it.' },
  ingestion_failed: { status: 400, message: 'Conversion failed.' },
  document_service_unavailable: { status: 502, message: 'The document converter did not respond.' },
  ocr_failed: { status: 502, message: 'Text recognition failed.' },
  document_pages_unexpected: { status: 502, message: 'Text recognition returned pages not belonging to the document; nothing was stored.' },
  ocr_busy: { status: 503, message: 'Text recognition is busy.' },
  rate_limit_exceeded: { status: 429, message: 'Too many requests.' },
  service_unavailable: { status: 503, message: 'A dependency did not respond.' },
  answer_model_unavailable: { status: 503, message: 'The model that writes answers could not be reached.' },
  service_not_configured: { status: 503, message: 'This feature is not switched on for the organization.' },
  internal_error: { status: 500, message: 'An internal error occurred.' },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

/**
 * Codes outside the spec's table, for refusals of the HTTP layer itself on statuses the spec's
 * table does not use (so no pair the spec defines changes): a wrong method, a request not received
 * in time, headers over the server's limit. The spec's rule covers them: a client that does not
 * know a code treats it as its status's default meaning (spec "Versioning"). They are not
 * `ServiceError` codes (no operation of the service answers them). docs/api.md lists them under
 * "Codes outside the spec's table".
 */
export const HTTP_ERROR_CODES = {
  method_not_allowed: { status: 405, message: 'This method is not allowed on this path; the Allow header lists the ones that are.' },
  request_timeout: { status: 408, message: 'The request was not received in time.' },
  headers_too_large: { status: 431, message: 'The request headers are too large.' },
} as const satisfies Record<string, { status: number; message: string }>;

export type HttpErrorCode = keyof typeof HTTP_ERROR_CODES;

/** The values `details` takes on a 429 (spec "Errors / Format"). */
export type RateLimitControl = 'user' | 'organization' | 'capacity' | 'ingestion-organization' | 'ingestion-capacity';
