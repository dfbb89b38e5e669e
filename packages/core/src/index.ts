// Public surface of @memory-agents/core for an application that embeds the service: the service
// and its options, the built-in defaults (in-memory store, index and blobs, the default writer,
// model and embedder), errors and codes, the wire input/output types, limits and prices.
// Building a port implementation (a store, an index, a model, a converter) is
// `@memory-agents/core/adapter`; conformance suites and mocks are `@memory-agents/core/testing`.
// Named exports only; types with `export type`. src/index.test.ts lists every name exported here.

// Service
export { createMemoryService, type MemoryServiceOptions } from './create-memory-service.js';
export { EXPORT_FORMAT, EXPORT_VERSION, splitLines, type ExportHeader, type ExportTrailer } from './export/format.js';
export type { ImportAgentResult, ImportProgress } from './export/agent-import.js';
export type { CreateExportRequest, ExportJobOutput, ExportJobRequest } from './export/export-jobs.js';
export type { MemoryAdmin, MemoryService, ServiceReadiness, StoredOriginal } from './memory-service.js';
export type { ReembedRunOptions, ReembedStatus } from './reembed/reembedder.js';
// The request object of every MemoryService method (and the uploaded file some of them carry)
export type * from './service/requests.js';
export type { RetrievalContributions, RetrievalOptions, RetrievalResult, RetrievalSignal, RetrievedItem } from './retrieval/retrieve.js';
export type { RerankOptions } from './retrieval/rerank.js';
/** The default weight of each fused retrieval signal ({@link RetrievalOptions} `weights` lays over it). */
export { RETRIEVAL_WEIGHTS } from './retrieval/retrieve.js';
export type { Caller } from './auth/caller.js';
export type { AuthenticateRequest } from './service/authenticate.js';
export { IN_PROCESS_KEY_ID, MAX_END_USER_LENGTH, type ActAsOptions } from './service/authenticate.js';
export { KEY_LIFETIME_MS, type CreatedKey, type KeySummary, type OrganizationSummary } from './organizations/admin.js';
export { DEFAULT_LIMITS, resolveLimits, type Limits } from './limits/index.js';
export { stderrLogger, silentLogger, type Logger } from './service/logger.js';
export type { TelemetryEvent, TelemetryObserver } from './service/telemetry.js';
export { ID_PATTERNS, createIdGenerator, type IdGenerator, type UlidPrefix } from './ids/index.js';

// The ports a MemoryServiceOptions field takes (their records, requests and helpers: /adapter)
export type { BlobStore, Clock, ConvertDocumentLimits, DocumentConverter, Embedder, LanguageModel, MemoryIndex, MemoryWriter, Ocr, Store } from './ports/index.js';

// Built-in defaults: in-memory store, index and blobs, file-system blobs, the default embedder,
// memory writer and (extractive, model-free) language model
export { inMemoryStore } from './in-memory/store/index.js';
export { inMemoryMemoryIndex } from './in-memory/in-memory-memory-index.js';
export { inMemoryBlobs } from './in-memory/in-memory-blobs.js';
export { fileSystemBlobs, type FileSystemBlobsOptions } from './blobs/file-system-blobs.js';
export { hashedNgramEmbedder, type HashedNgramEmbedderOptions } from './embedding/hashed-ngram-embedder.js';
export { defaultMemoryWriter } from './memory/default-memory-writer.js';
export { extractiveLanguageModel } from './chat/extractive-language-model.js';

// The trust boundary of recalled memory: quoted data in an unforgeable block, and instruction-like
// content detection (issue 33); for anything that builds its own prompt from memory
export { MEMORY_DATA_RULE, MEMORY_DATA_TAG, asksForInstructions, fenceMemoryData, instructionSignals, isInstructionLike, quoteMemoryText } from './boundary/index.js';
export type { InstructionSignal, MemoryFenceOptions } from './boundary/index.js';

// Credits and limits
export { ANSWER_RESERVATION_WORDS, DEFAULT_PRICES, billedWords, countWords, priceOf, resolvePrices, type Prices } from './credits/pricing.js';
export { CREDITS_EXHAUSTED_REASON } from './credits/credits.js';
export type { BillingSummary } from './organizations/billing-admin.js';
export {
  ANSWER_PLACE_TTL_MS,
  ANSWER_RETRY_AFTER,
  ANSWERS_PER_ORGANIZATION,
  ANSWERS_PER_SUBJECT,
  type RateLimitDecision,
  type RateLimitStatus,
} from './limits/rate-limiter.js';
export { DEFAULT_RATE_LIMITS, resolveRateLimits, type RateLimitTable } from './limits/rate-limits.js';
export { RATE_LIMITED_OPERATIONS, type RateLimitedOperation, type RateLimitOverrides, type WindowLimit } from './ports/index.js';

// Webhooks (an opt-in extension): the service option, event types, and verifying a delivery's signature
export type { WebhookOptions } from './webhooks/options.js';
export type { RedactionOptions } from './policy/redaction.js';
export type { MemoryLifecycleOptions } from './memories/lifecycle.js';
export { WEBHOOK_EVENT_TYPES, type WebhookEventType } from './ports/store/webhooks.js';
export { WEBHOOK_SIGNATURE_HEADER, signWebhook, verifyWebhookSignature, type VerifyWebhookSignatureOptions } from './webhooks/signature.js';
export type {
  CreateWebhookInput,
  UpdateWebhookInput,
  WebhookDeletedOutput,
  WebhookDeliveryListOutput,
  WebhookListOutput,
  WebhookOutput,
  WebhookWithSecretOutput,
} from './schemas/webhooks.js';

// Errors
export { ERROR_CODES, HTTP_ERROR_CODES, ServiceError, isServiceError, type ErrorCode, type HttpErrorCode, type RateLimitControl, type ServiceErrorOptions } from './errors/index.js';

// Wire schemas (zod), shared with the HTTP layer and the OpenAPI document, and the types they parse to
export * as schemas from './schemas/index.js';
export type {
  BillingQuery,
  ChatInput,
  CreateAgentInput,
  CreateThreadInput,
  FinishLearningInput,
  LearningQuery,
  LogsQuery,
  MemoryGetQuery,
  MemoryListQuery,
  MemoryPatchInput,
  MemoryForgetInput,
  MemorySearchInput,
  ObservationsQuery,
  ObserveAndEnrichInput,
  ObserveInput,
  RecallInput,
  ThreadTurnsQuery,
  UpdateAgentInput,
} from './schemas/inputs.js';
export type {
  AgentDeleteOutput,
  AgentListOutput,
  AgentOutput,
  BillingOutput,
  ChatOutput,
  ChatStreamEventOutput,
  Citation,
  CitationTarget,
  DocumentIngestOutput,
  ImageUploadOutput,
  LearningRecordOutput,
  LogsOutput,
  MemoryDetailOutput,
  MemoryListOutput,
  MemoryOutput,
  MemorySearchOutput,
  MemorySignalsOutput,
  MemorySourceOutput,
  ObservationListOutput,
  ObservationReceiptOutput,
  ObservationStatusOutput,
  ObserveAndEnrichOutput,
  ObserveAndRespondOutput,
  ObserveOutput,
  RecallOutput,
  SessionOutput,
  SourcesListOutput,
  ThreadTurnsOutput,
  ThreadDeleteOutput,
  ThreadOutput,
  WithCitationData,
} from './schemas/outputs.js';
export type { EraseInput, ErasureOutput } from './schemas/erasures.js';
export type { MaintenanceChangeOutput, MaintenancePlanInput, MaintenanceRunListOutput, MaintenanceRunOutput } from './schemas/maintenance.js';
export type { MaintenanceListRequest, MaintenancePlanRequest, MaintenanceRunRequest } from './maintenance/maintenance.js';
export type { MaintenanceScheduleOptions, SchedulePass } from './maintenance/schedule.js';

// Idempotency-Key (observe, observe-and-respond, observe-and-enrich, observe-file)
export { IDEMPOTENCY_IN_FLIGHT_MS, IDEMPOTENCY_RETENTION_MS } from './idempotency/idempotency.js';

// Document ingest (observe-file, sources, finish-learning): the options and their defaults
export { MAX_FILES_LEARNING_PER_ORGANIZATION, OCR_PAGES_IN_REQUEST, ORGANIZATION_BUSY_RETRY_AFTER } from './sources/sources.js';
export type { DocumentOptions } from './sources/sources.js';
export { MAX_DOCUMENT_TURNS } from './sources/read-document.js';
export { FIGURE_DESCRIPTION_CONCURRENCY, FIGURE_DESCRIPTION_TIMEOUT_MS, type FigureDescriberOptions } from './sources/describe-figures.js';
export { CHUNK_STRATEGIES, type ChunkStrategy } from './ports/index.js';
export { DEFAULT_CHUNK_STRATEGY, DEFAULT_MAX_CHARS, DEFAULT_OVERLAP_CHARS, MAX_MAX_CHARS, MIN_MAX_CHARS } from './chunking/index.js';
