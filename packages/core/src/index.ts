// Public surface of @memory-agents/core. Named exports only; types with `export type`.

// Service
export { createMemoryService, type MemoryServiceOptions } from './create-memory-service.js';
export type { IdempotencyOptions, MemoryAdmin, MemoryService, ServiceReadiness, StoredOriginal } from './memory-service.js';
export type { RetrievalOptions, RetrievalSignal } from './retrieval/retrieve.js';
export type { Caller } from './auth/caller.js';
export type { AuthenticateRequest } from './service/authenticate.js';
export { IN_PROCESS_KEY_ID, MAX_END_USER_LENGTH, type ActAsOptions } from './service/authenticate.js';
export { KEY_LIFETIME_MS, type CreatedKey, type KeySummary, type OrganizationSummary } from './organizations/admin.js';
export { DEFAULT_LIMITS, resolveLimits, type Limits } from './limits/index.js';
export { stderrLogger, silentLogger, type Logger } from './service/logger.js';

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
export { RATE_LIMITED_OPERATIONS, type RateLimitedOperation, type RateLimitOverrides, type WindowLimit } from './ports/limit-overrides.js';
export { inProcessRateLimits } from './limits/in-process-rate-limits.js';

// Errors
export { ERROR_CODES, ServiceError, isServiceError, type ErrorCode, type RateLimitControl, type ServiceErrorOptions } from './errors/index.js';

// Ids
export { ID_PATTERNS, contentId, createIdGenerator, endUserId, type IdGenerator, type UlidPrefix } from './ids/index.js';

// Wire schemas (zod), shared with the HTTP layer and the OpenAPI document
export * as schemas from './schemas/index.js';
export type {
  BillingQuery,
  ChatInput,
  CreateAgentInput,
  CreateThreadInput,
  FinishLearningInput,
  LearningQuery,
  LogsQuery,
  ObserveAndEnrichInput,
  ObserveInput,
  RecallInput,
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
  ObservationStatusOutput,
  ObserveAndEnrichOutput,
  ObserveAndRespondOutput,
  ObserveOutput,
  RecallOutput,
  SessionOutput,
  SourcesListOutput,
  ThreadDeleteOutput,
  ThreadOutput,
  WithCitationData,
} from './schemas/outputs.js';
export type { RetrievalResult, RetrievedItem } from './retrieval/retrieve.js';
/** How many hits retrieval asks each channel (full text, vector) of the `MemoryIndex` for. */
export { CANDIDATES_PER_CHANNEL, RETRIEVAL_WEIGHTS } from './retrieval/retrieve.js';
export { parseBody, parseQuery } from './validation/parse.js';

// Ports
export type * from './ports/index.js';
export { EmbedderMismatchError, LanguageModelError, systemClock } from './ports/index.js';

// Answering and memory writing defaults, and the grounded-answer prompt every model receives
export { ANSWER_LENGTH_INSTRUCTIONS, agentSystemPrompt, buildAnswerMessages, parseCitations, type BuildAnswerMessagesOptions } from './chat/answer-prompt.js';
export { extractiveLanguageModel } from './chat/extractive-language-model.js';
export { defaultMemoryWriter } from './memory/default-memory-writer.js';

// Reference adapters
export { cachingStore, type CachingStoreOptions } from './store/caching-store.js';
export { StoreUnavailableError, availableStore, isDependencyUnavailable, isUnavailableError } from './store/available-store.js';
export { inMemoryStore } from './in-memory/in-memory-store.js';
export { inMemoryBlobs } from './in-memory/in-memory-blobs.js';
export { fileSystemBlobs, type FileSystemBlobsOptions } from './blobs/file-system-blobs.js';

// Default embedder, the shared text analyzer, the in-memory memory index and shared index plumbing
export { hashedNgramEmbedder, type HashedNgramEmbedderOptions } from './embedding/hashed-ngram-embedder.js';
export { analyze, tokenize, stem, isStopWord, STOP_WORDS } from './embedding/text-analysis.js';
export {
  assertEmbedderMatches,
  assertVectorDimensions,
  cloneMemoryRecord,
  compareMemoryHits,
  cosineSimilarity,
  dedupeRecordsById,
  hitRecord,
  indexedText,
  matchesDeleteFilter,
  memorySourceColumns,
  memorySourceFromColumns,
  type MemorySourceColumns,
} from './memory-index/memory-index-helpers.js';
export { inMemoryMemoryIndex } from './in-memory/in-memory-memory-index.js';

// Documents: the DocumentConverter port's built-in text reader, format detection, the converter
// budgets and the helpers a converter package shares (PDF, DOCX and HTML live in @memory-agents/documents)
export {
  TEXT_FORMATS,
  checkConvertedText,
  decodeText,
  detectFormat,
  figureBlockText,
  readZipEntries,
  textDocumentConverter,
  textFormatBlocks,
  checkpoint as conversionCheckpoint,
  resolveLimits as resolveConvertLimits,
  timeLimitError as conversionTimeLimitError,
} from './documents/index.js';
export {
  DEFAULT_CONVERT_TIMEOUT_MS,
  DEFAULT_FIGURE_SCALE,
  DEFAULT_MAX_FIGURES,
  DEFAULT_MAX_OCR_BYTES,
  DEFAULT_MAX_OCR_PAGES,
  DEFAULT_MAX_PAGES,
  DEFAULT_MAX_TEXT_CHARS,
  DEFAULT_MAX_UNCOMPRESSED_BYTES,
  DEFAULT_MIN_FIGURE_SIZE,
  DEFAULT_OCR_SCALE,
} from './documents/index.js';
export type { DetectedFormat, ResolvedLimits as ResolvedConvertLimits, ZipEntry } from './documents/index.js';
// (the DocumentConverter port's types come with `export type * from './ports/index.js'` above)
export { chunkDocument, documentText, resolveChunkOptions, BLOCK_SEPARATOR } from './chunking/index.js';
export { CHUNK_STRATEGIES } from './ports/store-documents.js';
export { DEFAULT_CHUNK_STRATEGY, DEFAULT_MAX_CHARS, DEFAULT_OVERLAP_CHARS, MAX_MAX_CHARS, MIN_MAX_CHARS } from './chunking/index.js';
export type { ChunkOptions, ChunkStrategy, Piece } from './chunking/index.js';

// Document ingest (observe-file, sources, finish-learning) and uploaded images
export { MAX_FILES_LEARNING_PER_ORGANIZATION, OCR_PAGES_IN_REQUEST, ORGANIZATION_BUSY_RETRY_AFTER } from './sources/sources.js';

// Idempotency-Key (observe, observe-and-respond, observe-and-enrich, observe-file)
export { IDEMPOTENCY_IN_FLIGHT_MS, IDEMPOTENCY_RETENTION_MS } from './idempotency/idempotency.js';
export type { ObserveAcceptedBody, ObserveOptions } from './observations/observations.js';
export type { DocumentOptions, FileUpload, ObserveFileRequest } from './sources/sources.js';
export { MAX_DOCUMENT_TURNS } from './sources/read-document.js';
export { FIGURE_DESCRIPTION_CONCURRENCY, FIGURE_DESCRIPTION_TIMEOUT_MS, type FigureDescriberOptions } from './sources/describe-figures.js';
export { readImageHeader, type ImageHeader, type ImageMediaType } from './images/image-header.js';
