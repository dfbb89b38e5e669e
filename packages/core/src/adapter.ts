// @memory-agents/core/adapter: what a port implementation is built from. The ports with their
// records and requests, the memory-index helpers every index shares, the text analyzer, chunking,
// the document-converter helpers and budgets, and the grounded-answer prompt every model receives.
// An application embedding the service needs `@memory-agents/core` only; conformance suites and
// mocks are `@memory-agents/core/testing`.

// Ports: every port type, record and request, and the values they declare
export type * from './ports/index.js';
export { CHUNK_STRATEGIES, EmbedderMismatchError, FINAL_JOB_STATUSES, LanguageModelError, LEARNING_REASONS, RATE_LIMITED_OPERATIONS, readJobDetails, readTurnDetails, systemClock, WEBHOOK_EVENT_TYPES } from './ports/index.js';

// Store adapters: the read-through cache the service lays over a persistent unshared store, the
// in-process rate limiter, and the content-derived ids a store keys by
export { cachingStore, type CachingStoreOptions } from './store/caching-store.js';
export { inProcessRateLimits } from './limits/in-process-rate-limits.js';
export { contentId, endUserId } from './ids/index.js';
export { parseBody, parseQuery } from './validation/parse.js';

// Memory indexes: the shared plumbing, the text analyzer every full-text channel uses, and how many
// hits retrieval asks each channel (full text, vector) for
export {
  applyMemoryPatch,
  assertEmbedderMatches,
  assertReembedWrite,
  assertVectorDimensions,
  canonicalIso,
  cloneMemoryRecord,
  compareMemoryHits,
  copiedRecord,
  compareNewestFirst,
  cosineSimilarity,
  decodeListCursor,
  dedupeRecordsById,
  encodeListCursor,
  hitRecord,
  indexedText,
  isAfterPosition,
  isUnexpiredAt,
  isValidAt,
  listPage,
  matchesDeleteFilter,
  matchesListFilter,
  matchesSearchFilter,
  memoryRecordDefaults,
  memorySourceColumns,
  memorySourceFromColumns,
  mergePatches,
  pageOf,
  sameFingerprint,
  UNKNOWN_WRITER,
  type MemoryListPosition,
  type MemoryRecordV2Fields,
  type MemorySourceColumns,
} from './memory-index/memory-index-helpers.js';
export { analyze, analyzeQuery, detectLanguage, tokenize, stem, isStopWord, STOP_WORDS, TEXT_LANGUAGES, type TextLanguage } from './embedding/text-analysis.js';
// ... and the duplicate key an index with `findDuplicates` stores per record (issue 33)
export { duplicateKey, normaliseForDuplicates, DUPLICATE_MIN_WORDS } from './memory/duplicates.js';
export { CANDIDATES_PER_CHANNEL } from './retrieval/retrieve.js';

// Model usage (issue 33, receipts): a memory writer sums its calls' tokens per model id with it
export { sumModelUsage } from './observations/model-usage.js';

// Language models: the grounded-answer prompt every model receives and its citation parser
export { ANSWER_LENGTH_INSTRUCTIONS, agentSystemPrompt, buildAnswerMessages, parseCitations, type BuildAnswerMessagesOptions } from './chat/answer-prompt.js';
// ... and the trust boundary every prompt holding memory or a learned turn uses (issue 33)
export { MEMORY_DATA_RULE, MEMORY_DATA_TAG, fenceMemoryData, instructionSignals, isInstructionLike, quoteMemoryText } from './boundary/index.js';
export type { InstructionSignal, MemoryFenceOptions } from './boundary/index.js';

// Document converters: the built-in text reader, format detection, the converter budgets and the
// helpers a converter package shares (PDF, DOCX and HTML live in @memory-agents/documents)
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
} from './conversion/index.js';
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
} from './conversion/index.js';
export type { DetectedFormat, ResolvedLimits as ResolvedConvertLimits, ZipEntry } from './conversion/index.js';
export { readImageHeader, type ImageHeader, type ImageMediaType } from './images/image-header.js';

// Chunking: documents into pieces, and the block text both the chunker and the converters use
export { chunkDocument, documentText, resolveChunkOptions, BLOCK_SEPARATOR } from './chunking/index.js';
export type { ChunkOptions, Piece } from './chunking/index.js';

// Database failures: what an adapter throws when its backend is away, and how the service tells (503, not 500).
export { StoreUnavailableError, availableStore, isDependencyUnavailable, isUnavailableError } from './store/available-store.js';
