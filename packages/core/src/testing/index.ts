// @memory-agents/core/testing: conformance suites for the ports, and mocks for the model ports.
export { describeStoreConformance, type StoreConformanceOptions } from './conformance/store/index.js';
export {
  describeBlobStoreConformance,
  type BlobStoreConformanceOptions,
  type BlobStoreConformanceTarget,
} from './conformance/blob-store/index.js';
export {
  characterErrorRate,
  describeOcrConformance,
  levenshtein,
  normalizeForScoring,
  renderPdfPages,
  renderTextImage,
  type NormalizeOptions,
  type OcrConformanceOptions,
  type OcrConformanceTarget,
  type RenderPdfPagesOptions,
  type RenderTextImageOptions,
} from './conformance/ocr/index.js';
export {
  describeLanguageModelConformance,
  type LanguageModelConformanceOptions,
  type LanguageModelConformanceTarget,
} from './conformance/language-model/index.js';
export { mockLanguageModel, type MockLanguageModel, type MockLanguageModelCall, type MockLanguageModelOptions } from './mocks/mock-language-model.js';
export { mockEmbedder, type MockEmbedder, type MockEmbedderOptions } from './mocks/mock-embedder.js';
export { describeMemoryIndexConformance, type MemoryIndexConformanceOptions } from './conformance/memory-index/index.js';
/** The seeded generator (mulberry32) the memory-index suite builds its fixtures with: `seededRandom(seed)()` is in [0, 1); benchmarks build their corpora with it. */
export { random as seededRandom } from './conformance/memory-index/fixtures.js';
export { describeEmbedderConformance, type EmbedderConformanceOptions } from './conformance/embedder/index.js';
export {
  describeMemoryWriterConformance,
  type MemoryWriterConformanceOptions,
  type MemoryWriterConformanceTarget,
} from './conformance/memory-writer/index.js';
export {
  buildDocx,
  buildPdf,
  buildZip,
  circularPagesPdf,
  describeDocumentConverterConformance,
  docxImage,
  docxParagraph,
  documentSamples,
  scannedSamplePdf,
  type DocumentConverterConformanceOptions,
  type DocumentConverterConformanceTarget,
  type PdfPageSpec,
} from './conformance/document-converter/index.js';
export { postgresUrl, testPrerequisite } from './prerequisites.js';
export {
  POISONED_MEMORY_ATTACKS,
  POISONED_MEMORY_BENIGN,
  POISONED_MEMORY_CANARIES,
  POISONED_MEMORY_RELATED_QUESTIONS,
  POISONED_MEMORY_SECRET,
  POISONED_MEMORY_UNRELATED_QUESTIONS,
  describePoisonedMemoryConformance,
  memoryBoundaryProblems,
  obeyedIn,
  recordingLanguageModel,
  servicePoisonedMemoryTarget,
  type AnsweringPath,
  type PoisonedMemoryAttack,
  type PoisonedMemoryConformanceOptions,
  type PoisonedMemoryTarget,
  type PromptMessage,
  type ServicePoisonedMemoryTargetOptions,
} from './conformance/poisoned-memory/index.js';
/**
 * Short conversations where a fact changes (issues 32 and 39): sharing words with the old statement,
 * and in everyday words; the evaluation harness (`npm run eval -- changed-facts`) and adapter tests run them.
 */
export { CHANGED_FACTS, type ChangedFact } from '../__fixtures__/changed-facts-data.js';
export { PARAPHRASED_CHANGES } from '../__fixtures__/paraphrased-changes.js';
