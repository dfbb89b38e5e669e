// Public surface of @memory-agents/core. Named exports only; types with `export type`.

// Service
export { createMemoryService, type MemoryService, type MemoryServiceOptions } from './create-memory-service.js';
export type { Caller } from './auth/caller.js';
export type { AuthenticateRequest } from './auth/authenticate.js';
export { MAX_END_USER_LENGTH } from './auth/authenticate.js';
export { KEY_LIFETIME_MS, type CreatedKey, type KeySummary, type OrganizationSummary } from './organizations/admin.js';
export { DEFAULT_LIMITS, resolveLimits, type Limits } from './limits/index.js';
export { stderrLogger, silentLogger, type Logger } from './service/logger.js';

// Errors
export { ERROR_CODES, ServiceError, isServiceError, type ErrorCode, type RateLimitControl, type ServiceErrorOptions } from './errors/index.js';

// Ids
export { ID_PATTERNS, contentId, createIdGenerator, endUserId, type IdGenerator, type UlidPrefix } from './ids/index.js';

// Wire schemas (zod), shared with the HTTP layer and the OpenAPI document
export * as schemas from './schemas/index.js';
export { parseBody, parseQuery } from './validation/parse.js';

// Ports
export type * from './ports/index.js';
export { EmbedderMismatchError, LanguageModelError, systemClock } from './ports/index.js';

// Reference adapters
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
  indexedText,
  matchesDeleteFilter,
} from './embedding/memory-index-helpers.js';
export { inMemoryMemoryIndex } from './in-memory/in-memory-memory-index.js';
