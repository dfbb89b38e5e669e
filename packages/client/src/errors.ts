const MARKER = Symbol.for('memory-agents.client.error');

/**
 * The error codes of the API (spec "Errors / Codes"). The server may add codes: `code` is typed
 * `ErrorCode | (string & {})`, and an unknown code means the default of its HTTP status.
 */
export const ERROR_CODES = [
  'invalid_request',
  'unauthorized',
  'forbidden',
  'payment_required',
  'not_found',
  'agent_not_found',
  'thread_not_found',
  'conflict',
  'agent_not_ready',
  'agent_quota_exceeded',
  'upload_in_progress',
  'duplicate_upload_in_progress',
  'document_already_ingested',
  'document_uploaded_elsewhere',
  'payload_too_large',
  'document_too_large',
  'document_too_complex',
  'document_too_many_turns',
  'document_too_many_pages',
  'document_too_large_for_ocr',
  'unsupported_document',
  'empty_document',
  'encrypted_document',
  'malformed_document',
  'document_needs_ocr',
  'ingestion_failed',
  'document_service_unavailable',
  'ocr_failed',
  'document_pages_unexpected',
  'ocr_busy',
  'rate_limit_exceeded',
  'service_unavailable',
  'answer_model_unavailable',
  'service_not_configured',
  'internal_error',
] as const;

/** A code of the spec's table. */
export type ErrorCode = (typeof ERROR_CODES)[number];

/** Code used when a response is not an error body of the API (a proxy's HTML page, an empty body). */
const STATUS_CODES: Record<number, ErrorCode> = {
  400: 'invalid_request',
  401: 'unauthorized',
  402: 'payment_required',
  403: 'forbidden',
  404: 'not_found',
  409: 'conflict',
  413: 'payload_too_large',
  422: 'invalid_request',
  429: 'rate_limit_exceeded',
  503: 'service_unavailable',
};

/** The fields of `MemoryAgentsError`. */
export type MemoryAgentsErrorOptions = {
  status: number;
  code: ErrorCode | (string & {});
  requestId: string | null;
  message: string;
  /** On a 429: which control refused (`user`, `organization`, `capacity`, …). */
  details?: string;
  /** Seconds from `Retry-After`, when the response had one. */
  retryAfter?: number;
};

/**
 * An error answered by the API (any non-2xx response), or an `error` event that ended a chat
 * stream. Decide on `code`, not on `message` (whose wording can change).
 *
 * @example
 * try {
 *   await client.agents.get('agent_01H…');
 * } catch (error) {
 *   if (MemoryAgentsError.isInstance(error) && error.code === 'agent_not_found') …
 * }
 */
export class MemoryAgentsError extends Error {
  readonly [MARKER] = true;
  /** HTTP status of the response. */
  readonly status: number;
  /** The spec's stable error code. */
  readonly code: ErrorCode | (string & {});
  /** The server's request id (`request_id`, also `X-Request-Id`); null when the response had none. */
  readonly requestId: string | null;
  readonly details: string | undefined;
  readonly retryAfter: number | undefined;

  constructor(options: MemoryAgentsErrorOptions) {
    super(options.message);
    this.name = 'MemoryAgentsError';
    this.status = options.status;
    this.code = options.code;
    this.requestId = options.requestId;
    this.details = options.details;
    this.retryAfter = options.retryAfter;
  }

  /** True for a `MemoryAgentsError` from any copy of this package. */
  static isInstance(value: unknown): value is MemoryAgentsError {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[MARKER] === true;
  }
}

/** Seconds to wait from a `Retry-After` header (delta-seconds or an HTTP date); undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  if (/^\s*\d+\s*$/.test(value)) return Number(value);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - now) / 1000));
}

/** Reads an error response into a `MemoryAgentsError` (consumes the body). */
export async function errorFromResponse(response: Response): Promise<MemoryAgentsError> {
  const text = await response.text().catch(() => '');
  let body: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed === 'object' && parsed !== null) body = parsed as Record<string, unknown>;
  } catch {
    // Not an API error body (a proxy's page): the status decides the code.
  }
  const retryAfter = parseRetryAfter(response.headers.get('retry-after'));
  return new MemoryAgentsError({
    status: response.status,
    code: typeof body.code === 'string' ? body.code : (STATUS_CODES[response.status] ?? 'internal_error'),
    requestId: typeof body.request_id === 'string' ? body.request_id : response.headers.get('x-request-id'),
    message: typeof body.error === 'string' ? body.error : `HTTP ${response.status}${text ? `: ${text.slice(0, 200)}` : ''}`,
    ...(typeof body.details === 'string' ? { details: body.details } : {}),
    ...(retryAfter === undefined ? {} : { retryAfter }),
  });
}
