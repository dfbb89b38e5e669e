import type { components, operations } from './generated/openapi.js';

/** Every named schema of the API (generated from its OpenAPI document). */
export type Schemas = components['schemas'];

/** The operations of the API by `operationId`, as openapi-typescript generated them. */
export type Operations = operations;
export type OperationId = keyof operations;

/** The JSON request body of an operation. */
export type RequestBody<Id extends OperationId> = operations[Id] extends { requestBody: { content: { 'application/json': infer Body } } }
  ? Body
  : operations[Id] extends { requestBody?: { content: { 'application/json': infer Body } } }
    ? Body
    : never;

/** The JSON body of an operation's success response (200, 201 or 202). */
export type ResponseBody<Id extends OperationId> = {
  [Status in keyof operations[Id]['responses']]: Status extends 200 | 201 | 202
    ? operations[Id]['responses'][Status] extends { content: { 'application/json': infer Body } }
      ? Body
      : never
    : never;
}[keyof operations[Id]['responses']];

/** The query parameters of an operation. */
export type QueryParameters<Id extends OperationId> = operations[Id]['parameters'] extends { query?: infer Query } ? NonNullable<Query> : never;

export type Session = Schemas['Session'];
export type Agent = Schemas['Agent'];
/** An erasure job (an extension: `POST .../memories/erase`). */
export type Erasure = Schemas['Erasure'];
export type AgentConfig = Schemas['AgentConfig'];
export type Thread = Schemas['Thread'];
export type Message = Schemas['Message'];
export type Observation = Schemas['Observation'];
export type ObservationStatus = Schemas['ObservationStatus'];
export type ObservationReceipt = Schemas['ObservationReceipt'];
export type ChatResponse = Schemas['ChatResponse'];
export type Citation = Schemas['Citation'];
export type DocumentIngestResponse = Schemas['DocumentIngestResponse'];
export type Billing = Schemas['Billing'];
export type Memory = Schemas['Memory'];
export type MemoryDetail = Schemas['MemoryDetail'];
export type MemorySearchHit = Schemas['MemorySearchHit'];
export type ApiErrorBody = Schemas['Error'];
export type Webhook = Schemas['Webhook'];
export type WebhookWithSecret = Schemas['WebhookWithSecret'];
export type WebhookDelivery = Schemas['WebhookDelivery'];
export type WebhookEventType = Schemas['WebhookEventType'];

/** One event of `chat/stream`: `context` once, `delta` zero or more times, then `done` or `error`. */
export type ChatStreamEvent = Schemas['ChatStreamEvent'];
export type ChatStreamContextEvent = Schemas['ChatStreamContextEvent'];
export type ChatStreamDeltaEvent = Schemas['ChatStreamDeltaEvent'];
export type ChatStreamDoneEvent = Schemas['ChatStreamDoneEvent'];
export type ChatStreamErrorEvent = Schemas['ChatStreamErrorEvent'];
