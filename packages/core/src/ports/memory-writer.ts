import type { ModelUsage } from './model-usage.js';
import type { MemoryHitRecord, MemorySourceRef, MemorySpan } from './memory-index.js';
import type { LearningReason } from './store/index.js';

/**
 * Turns the turns of an observation job into memory records.
 *
 * Contract:
 * - `write` receives a batch of consecutive turns of one job and MUST return exactly one outcome per
 *   turn, in order: the memories that turn produced (possibly none), or a failure with a reason.
 * - Memories MUST cite the turn(s) they came from through `source`.
 * - It MUST NOT write to the index itself; the service embeds and commits what it returns.
 * - It MAY ask for similar existing memories through `searchSimilar` to reconcile: a new fact that
 *   replaces an old one is returned as a supersession (`supersedes`); the old memory is kept as
 *   history (its `validTo` and `supersededBy` are set), never deleted.
 * - When `signal` aborts (the service is stopping), it MUST reject promptly with an `AbortError`;
 *   the turns then stay resumable instead of failing.
 * - A writer with `capabilities.reconciles` MUST fail every turn after a failed one in the same
 *   request with `earlier_turn_failed` (a later turn's memories were reconciled against memories
 *   the failed turn should have written, so a resend must replay them in order).
 */
export type MemoryWriter = {
  readonly specificationVersion: 'v1';
  readonly id: string;
  /** @default { reconciles: false } */
  readonly capabilities?: MemoryWriterCapabilities;
  write(request: MemoryWriteRequest): Promise<MemoryWriteResult>;
};

export type MemoryWriterCapabilities = {
  /**
   * The writer reconciles new facts with memories already stored (update / delete), so turns must
   * be learned in order: when a turn of a job fails, the service fails the job's later turns with
   * `earlier_turn_failed` rather than learning them against an incomplete memory.
   */
  readonly reconciles: boolean;
};

export type WriterTurn = {
  /** 0-based index of the turn in its job. */
  turnIndex: number;
  speaker: string;
  text: string;
  /** ISO date-time of the observation the turn came with. */
  timestamp: string;
  tags: string[];
  source: MemorySourceRef;
};

export type MemoryDraft = {
  text: string;
  keywords: string;
  speaker: string | null;
  occurredAt: string | null;
  source: MemorySourceRef;
  /**
   * Character span [start, end) in the source turn's text (UTF-16 units) when the memory is a
   * verbatim slice of it; absent or null when the writer paraphrased.
   * @default null
   */
  span?: MemorySpan | null;
  /** Instruction-like content (issue 33): stored flagged. @default false */
  suspicious?: boolean;
  /**
   * When the fact became true, where the text says so and it differs from when it was said ("I
   * moved to Berlin on March 3rd": that day) (issue 32).
   * @default occurredAt, else the time the memory was learned
   */
  validFrom?: string | null;
  /**
   * When what it says ends, where the text bounds it ("my trial ends on 3 March") (issue 42): the
   * memory is gone from every read path from then on.
   * @default null (never expires)
   */
  expiresAt?: string | null;
  /**
   * The category the writer proposes from `MemoryWriteRequest.policy.categories` (issue 44); null
   * for none. The service keeps it only when the list holds it (a name outside the list is never
   * stored). @default undefined: the service gives one by its own rules (keywords, meaning)
   */
  category?: string | null;
};

export type TurnOutcome =
  | { turnIndex: number; ok: true; memories: MemoryDraft[] }
  | { turnIndex: number; ok: false; reason: LearningReason; message: string };

export type MemoryWriteRequest = {
  agentId: string;
  turns: WriterTurn[];
  /** Similar memories already in the agent's index, for reconciliation (as search hits carry them: no vectors). */
  searchSimilar(text: string, limit: number): Promise<MemoryHitRecord[]>;
  signal?: AbortSignal;
  /**
   * What the agent's extraction policy asks of the writer (issue 44); absent when it asks nothing.
   * A writer MAY ignore it (the default writer does): the service enforces categories and rules on
   * what comes back.
   */
  policy?: WriterPolicy;
};

/** The parts of an agent's extraction policy a writer can act on (issue 44). */
export type WriterPolicy = {
  /** The closed list of categories a memory may get (propose one through `MemoryDraft.category`). */
  categories: readonly { name: string; description?: string; keywords?: readonly string[] }[];
  /** The operator's guidance on what to remember: data to weigh, never instructions to obey. */
  instructions: string | null;
  /** `speaker`: keep each speaker's language; else a BCP 47 tag to write memories in. */
  language: string;
};

export type MemoryWriteResult = {
  outcomes: TurnOutcome[];
  /**
   * Memories that stop being current because of this result's facts (issue 32). The service applies
   * them after the batch's memories are committed (never before, so a failed commit loses nothing):
   * the old memory gets `validTo` (the successor's `validFrom`, else the timestamp of the batch's
   * last turn) and
   * `supersededBy` (the successor's id), and stays searchable with `asOf` and listable as history.
   */
  supersedes?: Supersession[];
  /**
   * Model tokens the write used (issue 33, observation receipts), one entry per model id (the
   * language model's `id`), summed over all its calls, failed turns' calls included when the model
   * reported them. A writer that calls no model (the default writer) leaves it out. @default []
   */
  usage?: ModelUsage[];
};


/** One memory of a write result: the `piece`-th memory (0-based) of the outcome of turn `turnIndex`. */
export type DraftRef = { turnIndex: number; piece: number };

/** An old fact replaced by a new one (or simply no longer true). */
export type Supersession = {
  /**
   * The memory that stops being current: an existing memory (`id`, one `searchSimilar` returned),
   * or a memory of this same result (an earlier turn of the batch said the old value).
   */
  old: { id: string } | DraftRef;
  /** The memory of this result that replaces it; absent when the fact just stopped ("I no longer ..."). */
  by?: DraftRef;
};

export type { ModelUsage } from './model-usage.js';
