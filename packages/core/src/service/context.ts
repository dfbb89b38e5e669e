import type { Credits } from '../credits/credits.js';
import type { IdGenerator } from '../ids/index.js';
import type { RateLimiter } from '../limits/rate-limiter.js';
import type { Limits } from '../limits/index.js';
import type { Clock } from '../ports/clock.js';
import type { BlobStore } from '../ports/blob-store.js';
import type { Embedder } from '../ports/embedder.js';
import type { LanguageModel } from '../ports/language-model.js';
import type { MemoryIndex } from '../ports/memory-index.js';
import type { MemoryWriter } from '../ports/memory-writer.js';
import type { Ocr } from '../ports/ocr.js';
import type { DocumentConverter } from '../ports/document-converter.js';
import type { Store } from '../ports/store/index.js';
import type { BackgroundTasks } from './background.js';
import type { TelemetryObserver } from './telemetry.js';
import type { Logger } from './logger.js';
import type { RetrievalOptions } from '../retrieval/retrieve.js';
import type { WebhookEmitter } from '../webhooks/emitter.js';

/** What every operation of the service reaches; built once by `createMemoryService`. */
export type ServiceContext = {
  readonly store: Store;
  readonly index: MemoryIndex;
  readonly blobs: BlobStore;
  readonly embedder: Embedder;
  readonly model: LanguageModel;
  readonly writer: MemoryWriter;
  /** Retrieval signals switched on or off, and the fused signals' weights (checked). */
  readonly retrieval: RetrievalOptions;
  /** The operator's own kinds of personal data (service option `redaction`), checked. */
  readonly redactionPatterns: ReadonlyMap<string, RegExp>;
  /** Memory lifecycle (issue 42): how long a forgotten memory can be restored before it is erased. */
  readonly lifecycle: { readonly restoreWindowMs: number };
  readonly ocr: Ocr | null;
  /** Reads uploaded files into blocks (`observe-file`). */
  readonly converter: DocumentConverter;
  /** Identifies this process as a lease holder. */
  readonly instanceId: string;
  readonly clock: Clock;
  readonly ids: IdGenerator;
  readonly defaultLimits: Limits;
  readonly logger: Logger;
  readonly background: BackgroundTasks;
  /** Prices, 402 checks, charges and refunds (credits/). */
  readonly credits: Credits;
  /** Request-rate windows and answer places (limits/rate-limiter.ts). */
  readonly limiter: RateLimiter;
  /** Counts and durations for metrics (`createMemoryService({ telemetry })`). */
  readonly telemetry: TelemetryObserver;
  /** Records webhook events (issue 34); null when the operator did not switch webhooks on. */
  readonly webhooks: WebhookEmitter | null;
  /** The current time as an ISO string. */
  nowIso(): string;
};
