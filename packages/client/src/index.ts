export {
  createClient,
  type ClientOptions,
  type IdempotentRequestOptions,
  type MemoryAgentsClient,
  type ObserveFileOptions,
  type RequestOptions,
  type RetryOptions,
  type SourceFile,
  type WaitOptions,
} from './create-client.js';
export { readChatStream, throwOnStreamError } from './chat-stream.js';
export { ERROR_CODES, MemoryAgentsError, type ErrorCode, type MemoryAgentsErrorOptions } from './errors.js';
export type { UploadInput } from './uploads.js';
export type {
  Agent,
  AgentConfig,
  ApiErrorBody,
  Billing,
  ChatResponse,
  ChatStreamContextEvent,
  ChatStreamDeltaEvent,
  ChatStreamDoneEvent,
  ChatStreamErrorEvent,
  ChatStreamEvent,
  Citation,
  DocumentIngestResponse,
  Message,
  Observation,
  ObservationStatus,
  OperationId,
  Operations,
  QueryParameters,
  RequestBody,
  ResponseBody,
  Schemas,
  Session,
  Thread,
  Webhook,
  WebhookDelivery,
  WebhookEventType,
  WebhookWithSecret,
} from './types.js';
export type { components, operations, paths } from './generated/openapi.js';
