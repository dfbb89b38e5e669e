import { ERROR_CODES, type ErrorCode, type RateLimitControl } from './codes.js';

const MARKER = Symbol.for('memory-agents.error');

export type ServiceErrorOptions = {
  /** Overrides the table's status; only `invalid_request` may be 400 or 422. */
  status?: 400 | 422;
  details?: RateLimitControl;
  /** Seconds, sent as `Retry-After`. */
  retryAfter?: number;
  cause?: unknown;
};

/**
 * The one error class of the service. `code` is the spec's stable code; `status` comes from the
 * code table; `message` is the sentence shown to a person (never driver text or a stack).
 */
export class ServiceError extends Error {
  readonly [MARKER] = true;
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: RateLimitControl | undefined;
  readonly retryAfter: number | undefined;

  constructor(code: ErrorCode, message?: string, options: ServiceErrorOptions = {}) {
    super(message ?? ERROR_CODES[code].message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ServiceError';
    this.code = code;
    this.status = options.status !== undefined && code === 'invalid_request' ? options.status : ERROR_CODES[code].status;
    this.details = options.details;
    this.retryAfter = options.retryAfter;
  }

  /** The spec's error body without `request_id` (the HTTP layer adds it). */
  toJSON(): { error: string; code: ErrorCode; details?: RateLimitControl } {
    return this.details === undefined
      ? { error: this.message, code: this.code }
      : { error: this.message, code: this.code, details: this.details };
  }
}

/** True for a `ServiceError` from any copy of this package. */
export function isServiceError(value: unknown): value is ServiceError {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[MARKER] === true;
}
