import type { ResolvedLimits } from '../conversion/limits.js';
import type { ConvertDocumentLimits } from '../ports/document-converter.js';
import type { ServiceContext } from '../service/context.js';
import type { FigureDescriberOptions } from './describe-figures.js';

/** Options of the document service (`createMemoryService({ documents })`). */
export type DocumentOptions = {
  /**
   * Scanned pages read by OCR inside the request; a document needing more is accepted with
   * `deferred: true` and converted in the background.
   * @default OCR_PAGES_IN_REQUEST (4)
   */
  ocrPagesInRequest?: number;
  /**
   * Agents of one organization that may be learning files at once; one more -> 429 with
   * `Retry-After: 90` (details `ingestion-organization`).
   * @default MAX_FILES_LEARNING_PER_ORGANIZATION (3)
   */
  maxFilesLearningPerOrganization?: number;
  /** Converter budgets (pages, OCR pages, figures, time). @default the converter's defaults */
  convertLimits?: ConvertDocumentLimits;
  /**
   * A vision-capable model that describes each kept figure (bounded, failing soft to caption +
   * OCR text). The server sets it for a configured network model only. @default none
   */
  describeFigures?: FigureDescriberOptions;
};

/** Default {@link DocumentOptions.ocrPagesInRequest}: about 20 s of tesseract on two cores. */
export const OCR_PAGES_IN_REQUEST = 4;
/** Default {@link DocumentOptions.maxFilesLearningPerOrganization} (spec "Limits / Documents"). */
export const MAX_FILES_LEARNING_PER_ORGANIZATION = 3;
/** Seconds a caller waits when the organization's document work is full (spec "Limits / Documents"). */
export const ORGANIZATION_BUSY_RETRY_AFTER = 90;
/**
 * Extra wall-clock budget of a background (deferred) conversion per scanned page, over the
 * converter's own `timeoutMs`: tesseract reads a dense page in 5-15 s on two cores, so a long scan
 * would otherwise pass the in-request budget meant for one upload.
 */
export const DEFERRED_MS_PER_SCANNED_PAGE = 60_000;

/** What the parts of the document service share: the service context and the resolved options. */
export type SourcesSetup = {
  context: ServiceContext;
  /** Lets the agent's worker take a job that just became ready to learn. */
  kick: (agentId: string) => void;
  ocrPagesInRequest: number;
  /** {@link DocumentOptions.maxFilesLearningPerOrganization}, resolved. */
  maxLearning: number;
  convertLimits: ResolvedLimits;
  /** Spread into `readDocument`: the figure describer, when one is configured. */
  describe: { describeFigures?: FigureDescriberOptions };
};
