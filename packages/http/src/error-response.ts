import { ServiceError, isServiceError, type Logger } from '@memory-agents/core';
import type { JsonResult, WithStatus } from './route.js';

/**
 * The one mapper from anything thrown to the spec's error body `{ error, code, request_id }`
 * (plus `details` on a 429). Unknown throws become `internal_error` 500; the original goes to
 * the log only, never to the client.
 */
export function errorResponse(error: unknown, requestId: string, logger: Logger, statusOverride?: number): WithStatus<JsonResult> {
  const serviceError = isServiceError(error) ? error : new ServiceError('internal_error', `An internal error occurred; report request id ${requestId}.`);
  if (!isServiceError(error)) {
    logger.error('unhandled error', {
      requestId,
      error: error instanceof Error ? error.message : String(error),
      stack: error instanceof Error ? error.stack : undefined,
    });
  } else if (serviceError.status >= 500) {
    logger.warn('service error', { requestId, code: serviceError.code, cause: serviceError.cause === undefined ? undefined : String(serviceError.cause) });
  }
  const headers: Record<string, string> = {};
  if (serviceError.retryAfter !== undefined) headers['Retry-After'] = String(serviceError.retryAfter);
  return { status: statusOverride ?? serviceError.status, body: { ...serviceError.toJSON(), request_id: requestId }, headers };
}
