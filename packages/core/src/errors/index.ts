export { ERROR_CODES, type ErrorCode, type RateLimitControl } from './codes.js';
export { ServiceError, isServiceError, type ServiceErrorOptions } from './service-error.js';
