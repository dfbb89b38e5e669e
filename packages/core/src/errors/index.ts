export { ERROR_CODES, HTTP_ERROR_CODES, type ErrorCode, type HttpErrorCode, type RateLimitControl } from './codes.js';
export { ServiceError, isServiceError, type ServiceErrorOptions } from './service-error.js';
