// The main entry is what an application embedding the service uses; everything a port
// implementation is built from lives in `@memory-agents/core/adapter` (src/adapter.ts). These lists
// are the main entry's whole surface: a name added to src/index.ts fails here until it is added
// below on purpose, so adapter plumbing cannot leak back into the embedder's entry unnoticed.
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import * as adapter from './adapter.js';
import * as main from './index.js';

/** The values of `@memory-agents/core`. */
const MAIN_VALUES = [
  'MEMORY_DATA_RULE', 'MEMORY_DATA_TAG', 'asksForInstructions', 'fenceMemoryData', 'instructionSignals', 'isInstructionLike', 'quoteMemoryText',
  'EXPORT_FORMAT', 'EXPORT_VERSION', 'splitLines',
  'ANSWERS_PER_ORGANIZATION', 'ANSWERS_PER_SUBJECT', 'ANSWER_PLACE_TTL_MS', 'ANSWER_RESERVATION_WORDS', 'ANSWER_RETRY_AFTER', 'CHUNK_STRATEGIES',
  'CREDITS_EXHAUSTED_REASON', 'DEFAULT_CHUNK_STRATEGY', 'DEFAULT_LIMITS', 'DEFAULT_MAX_CHARS', 'DEFAULT_OVERLAP_CHARS', 'DEFAULT_PRICES',
  'DEFAULT_RATE_LIMITS', 'ERROR_CODES', 'HTTP_ERROR_CODES', 'FIGURE_DESCRIPTION_CONCURRENCY', 'FIGURE_DESCRIPTION_TIMEOUT_MS', 'IDEMPOTENCY_IN_FLIGHT_MS', 'IDEMPOTENCY_RETENTION_MS',
  'ID_PATTERNS', 'IN_PROCESS_KEY_ID', 'KEY_LIFETIME_MS', 'MAX_DOCUMENT_TURNS', 'MAX_END_USER_LENGTH', 'MAX_FILES_LEARNING_PER_ORGANIZATION',
  'MAX_MAX_CHARS', 'MIN_MAX_CHARS', 'OCR_PAGES_IN_REQUEST', 'ORGANIZATION_BUSY_RETRY_AFTER', 'RATE_LIMITED_OPERATIONS', 'RETRIEVAL_WEIGHTS',
  'ServiceError', 'billedWords', 'countWords', 'createIdGenerator', 'createMemoryService', 'defaultMemoryWriter',
  'extractiveLanguageModel', 'fileSystemBlobs', 'hashedNgramEmbedder', 'inMemoryBlobs', 'inMemoryMemoryIndex', 'inMemoryStore',
  'isServiceError', 'priceOf', 'resolveLimits', 'resolvePrices', 'resolveRateLimits', 'schemas',
  'silentLogger', 'stderrLogger',
  'WEBHOOK_EVENT_TYPES', 'WEBHOOK_SIGNATURE_HEADER', 'signWebhook', 'verifyWebhookSignature',
];

/** The types of `@memory-agents/core` (the ports a `MemoryServiceOptions` field takes, wire inputs and outputs, options). */
const MAIN_TYPES = [
  'InstructionSignal', 'MemoryFenceOptions',
  'CreateExportRequest', 'ExportHeader', 'ExportJobOutput', 'ExportJobRequest', 'ExportTrailer', 'ImportAgentResult', 'ImportProgress',
  'ActAsOptions', 'AgentDeleteOutput', 'AgentListOutput', 'AgentOutput', 'AuthenticateRequest', 'BillingOutput',
  'BillingQuery', 'BillingSummary', 'BlobStore', 'Caller', 'ChatInput', 'ChatOutput',
  'ChatStreamEventOutput', 'ChunkStrategy', 'Citation', 'CitationTarget', 'Clock', 'ConvertDocumentLimits',
  'CreateAgentInput', 'CreateThreadInput', 'CreatedKey', 'DocumentConverter', 'DocumentIngestOutput', 'DocumentOptions',
  'Embedder', 'EraseInput', 'EraseRequest', 'ErasureOutput', 'ErasureRequest', 'ErrorCode', 'FigureDescriberOptions', 'FileSystemBlobsOptions', 'FileUpload', 'FinishLearningInput', 'HttpErrorCode',
  'HashedNgramEmbedderOptions', 'IdGenerator', 'ImageUploadOutput', 'KeySummary', 'LanguageModel',
  'LearningQuery', 'LearningRecordOutput', 'Limits', 'Logger', 'LogsOutput', 'LogsQuery',
  'MemoryDetailOutput', 'MemoryListOutput', 'MemoryGetQuery', 'MemoryListQuery', 'MemoryPatchInput', 'MemoryForgetInput', 'MemoryOutput', 'MemorySearchInput', 'MemorySearchOutput', 'MemorySignalsOutput', 'MemorySourceOutput',
  'ListMemoriesRequest', 'MemoryRequest', 'PatchMemoryRequest', 'SearchMemoriesRequest', 'RetrievalContributions', 'RerankOptions',
  'MemoryAdmin', 'MemoryIndex', 'MemoryService', 'MemoryServiceOptions', 'MemoryWriter', 'ObservationListOutput', 'ObservationReceiptOutput', 'ObservationStatusOutput', 'ObservationsQuery',
  'ObserveAndEnrichInput', 'ObserveAndEnrichOutput', 'ObserveAndRespondOutput', 'ObserveFileRequest', 'ObserveInput', 
  'ObserveOutput', 'Ocr', 'OrganizationSummary', 'Prices', 'RateLimitControl', 'RateLimitDecision',
  'RateLimitOverrides', 'RateLimitStatus', 'RateLimitTable', 'RateLimitedOperation', 'RecallInput', 'RecallOutput',
  'ReembedRunOptions', 'ReembedStatus',
  'MaintenanceChangeOutput', 'MaintenancePlanInput', 'MaintenanceRunListOutput', 'MaintenanceRunOutput', 'MaintenanceListRequest', 'MaintenancePlanRequest', 'MaintenanceRunRequest', 'MaintenanceScheduleOptions', 'SchedulePass',
  'RedactionOptions', 'MemoryLifecycleOptions', 'RetrievalOptions', 'RetrievalResult', 'RetrievalSignal', 'RetrievedItem', 'ServiceErrorOptions', 'ServiceReadiness', 'SessionOutput',
  'SourcesListOutput', 'Store', 'StoredOriginal', 'ThreadDeleteOutput', 'ThreadOutput', 'ThreadTurnsOutput', 'ThreadTurnsQuery', 'ThreadTurnsRequest', 'UlidPrefix',
  'TelemetryEvent', 'TelemetryObserver', 'UpdateAgentInput', 'WindowLimit', 'WithCitationData',
  'AbortableRequest', 'AgentRequest', 'BillingRequest', 'CallerRequest', 'ChatRequest', 'CreateAgentRequest',
  'CreateThreadRequest', 'FinishLearningRequest', 'ForgetMemoryRequest', 'IdempotentRequest', 'ImageUploadRequest', 'LearningRequest', 'LogsRequest',
  'ObservationListRequest', 'ObservationStatusRequest', 'ObserveAndEnrichRequest', 'ObserveAndRespondRequest', 'ObserveRequest', 'RateLimitRequest', 'RecallRequest',
  'RetrieveRequest', 'SourceRequest', 'ThreadRequest', 'UpdateAgentRequest',
  'CreateWebhookInput', 'UpdateWebhookInput', 'VerifyWebhookSignatureOptions', 'WebhookDeletedOutput', 'WebhookDeliveryListOutput', 'WebhookEventType',
  'WebhookListOutput', 'WebhookOptions', 'WebhookOutput', 'WebhookWithSecretOutput',
  'CreateWebhookRequest', 'UpdateWebhookRequest', 'WebhookDeliveriesRequest', 'WebhookRequest',
];

/** Adapter plumbing that must stay out of the main entry (a sample of each kind /adapter holds). */
const ADAPTER_ONLY = [
  // port records and requests
  'AgentRecord', 'JobRecord', 'StoreAreas', 'MemoryRecord', 'MemorySearchRequest', 'GenerateRequest', 'OcrRequest', 'DocumentBlock',
  // helpers
  'analyze', 'tokenize', 'STOP_WORDS', 'assertEmbedderMatches', 'compareMemoryHits', 'memorySourceColumns', 'cachingStore',
  'chunkDocument', 'documentText', 'detectFormat', 'readZipEntries', 'resolveConvertLimits', 'buildAnswerMessages', 'parseBody',
  'LanguageModelError', 'EmbedderMismatchError', 'systemClock', 'CANDIDATES_PER_CHANNEL',
  'MemoryListRequest', 'MemoryPatch', 'listPage', 'memoryRecordDefaults', 'encodeListCursor',
];

const ENTRIES = ['./index.ts', './adapter.ts'];
let program: ts.Program | undefined;

/** Every name (values and types) an entry exports, as the TypeScript checker sees it (one program for both entries). */
function exportedNames(file: (typeof ENTRIES)[number]): string[] {
  const path = (entry: string) => fileURLToPath(new URL(entry, import.meta.url));
  program ??= ts.createProgram(ENTRIES.map(path), {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    strict: true,
    skipLibCheck: true,
    noEmit: true,
  });
  const checker = program.getTypeChecker();
  const symbol = checker.getSymbolAtLocation(program.getSourceFile(path(file))!);
  return checker.getExportsOfModule(symbol!).map((item) => item.name).sort();
}

describe('@memory-agents/core public surface', () => {
  it('exports exactly the listed values', () => {
    expect(Object.keys(main).sort()).toEqual([...MAIN_VALUES].sort());
  });

  it('exports exactly the listed names, types included', () => {
    expect(exportedNames('./index.ts')).toEqual([...MAIN_VALUES, ...MAIN_TYPES].sort());
  });

  it('keeps adapter plumbing in /adapter only', () => {
    const names = new Set(exportedNames('./index.ts'));
    expect(ADAPTER_ONLY.filter((name) => names.has(name))).toEqual([]);
    const adapterNames = new Set(exportedNames('./adapter.ts'));
    expect(ADAPTER_ONLY.filter((name) => !adapterNames.has(name))).toEqual([]);
  });

  it('/adapter re-exports the port values, so an adapter imports them from one place', () => {
    expect(adapter.LanguageModelError).toBeTypeOf('function');
    expect(adapter.EmbedderMismatchError).toBeTypeOf('function');
    expect(adapter.CHUNK_STRATEGIES).toBe(main.CHUNK_STRATEGIES);
    expect(adapter.RATE_LIMITED_OPERATIONS).toBe(main.RATE_LIMITED_OPERATIONS);
  });
});
