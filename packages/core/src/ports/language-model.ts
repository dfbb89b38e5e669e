/**
 * Writes answers (and, for an LLM memory writer, extracts facts).
 *
 * Contract:
 * - `generate` resolves with the whole text; `stream` yields text deltas whose concatenation equals
 *   what `generate` would have returned for the same request.
 * - Both MUST stop promptly and reject with an `AbortError` when `signal` aborts.
 * - Failures MUST reject with `LanguageModelError` carrying a `kind` the service maps to the spec's
 *   codes and learning reasons (`unavailable` -> `model_unavailable` / `answer_model_unavailable`,
 *   `timeout` -> `generation_timeout`, `unparseable` -> `generation_unparseable`, `failed` ->
 *   `generation_failed`).
 * - Usage (issue 33, observation receipts) is optional: a model that knows the tokens a call used
 *   reports them in `GenerateResult.usage`, and a stream in the value its iterator finishes with
 *   (`{ done: true, value: { usage } }`, which `for await` ignores). Absent means "not known", never 0.
 */
export type LanguageModel = {
  readonly specificationVersion: 'v1';
  /** Reported as `model` in chat responses. */
  readonly id: string;
  generate(request: GenerateRequest): Promise<GenerateResult>;
  stream(request: GenerateRequest): AsyncIterable<string, StreamResult | void>;
};

/** Tokens one model call used, as the provider counted them. */
export type TokenUsage = { inputTokens: number; outputTokens: number };

/** What a `stream` iterator MAY finish with (its `return` value). */
export type StreamResult = { usage?: TokenUsage };

export type ChatRole = 'system' | 'user' | 'assistant';

export type ModelMessage = {
  role: ChatRole;
  content: string;
  /** Image parts for vision-capable models (data URLs or https URLs). */
  images?: { mediaType: string; data: Uint8Array }[];
};

/** One numbered memory item handed to the model when answering. */
export type AnswerContextItem = {
  /** 1-based number the model cites as `[n]`. */
  number: number;
  text: string;
  speaker: string | null;
  occurredAt: string | null;
  label: string;
  /**
   * Set on a memory that is no longer current (issue 32): the number of the item that replaced it.
   * An answer says what changed ("moved from Paris to Berlin") and cites both.
   */
  replacedBy?: number;
};

export type AnswerLength = 'brief' | 'standard' | 'detailed';

export type GenerateRequest = {
  /** The complete prompt; network models use only this. */
  messages: ModelMessage[];
  /**
   * The structured task behind `messages`. Offline models that cannot read a prompt (the
   * extractive default) answer from it; network models may ignore it.
   */
  task?: { kind: 'answer'; question: string; items: AnswerContextItem[]; answerLength: AnswerLength };
  responseFormat?: 'text' | 'json';
  maxOutputTokens?: number;
  signal?: AbortSignal;
};

export type GenerateResult = {
  text: string;
  /** 1-based numbers of the context items the answer relies on (parsed from `[n]` markers or chosen). */
  citedItems?: number[];
  /** Tokens the call used, when the model knows them. @default absent (not known) */
  usage?: TokenUsage;
};

export type LanguageModelErrorKind = 'unavailable' | 'timeout' | 'unparseable' | 'failed';

export class LanguageModelError extends Error {
  readonly kind: LanguageModelErrorKind;
  constructor(kind: LanguageModelErrorKind, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'LanguageModelError';
    this.kind = kind;
  }
}
