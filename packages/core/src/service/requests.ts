import type { Caller } from '../auth/caller.js';
import type { RateLimitedOperation } from '../ports/limit-overrides.js';
import type { EraseInput } from '../schemas/erasures.js';
import type { CreateWebhookInput, UpdateWebhookInput } from '../schemas/webhooks.js';
import type {
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
} from '../schemas/inputs.js';

/** One uploaded file as the HTTP layer (or an embedding program) hands it over. */
export type FileUpload = {
  /** The filename the client sent (also each turn's speaker). */
  filename: string;
  /** The part's declared media type, if any; only a hint. */
  mediaType: string | null;
  data: Uint8Array;
};

/**
 * The one request object each `MemoryService` method takes (like the AI SDK's `generateText`
 * options): named fields instead of positional arguments, built from these blocks.
 */

/** Who calls: `service.authenticate(request)` for an HTTP request, `service.as(organizationId)` in process. */
export type CallerRequest = { caller: Caller };
/** A call about one agent (`/v1/agents/{agent_id}/...`). */
export type AgentRequest = CallerRequest & { agentId: string };
/** A call about one thread of an agent (`.../threads/{thread_id}/...`). */
export type ThreadRequest = AgentRequest & { threadId: string };
/** The `Idempotency-Key` of a keyed call (1 to 255 characters); the same key replays the first answer. */
export type IdempotentRequest = { idempotencyKey?: string | undefined };
/** Aborts the work (the HTTP request went away): the answer stops, its place is given back. */
export type AbortableRequest = { abortSignal?: AbortSignal | undefined };

export type CreateAgentRequest = CallerRequest & { body: CreateAgentInput };
export type UpdateAgentRequest = AgentRequest & { body: UpdateAgentInput };
/** The body is optional: an empty thread. */
export type CreateThreadRequest = AgentRequest & { body?: CreateThreadInput | undefined };
export type LearningRequest = ThreadRequest & { query?: LearningQuery | undefined };
export type ThreadTurnsRequest = ThreadRequest & { query?: ThreadTurnsQuery | undefined };
export type ObserveRequest = ThreadRequest & IdempotentRequest & { body: ObserveInput };
export type ObservationStatusRequest = ThreadRequest & { observationId: string };
export type ObservationListRequest = ThreadRequest & { query?: ObservationsQuery | undefined };
export type ChatRequest = ThreadRequest & AbortableRequest & { body: ChatInput };
export type ObserveAndRespondRequest = ChatRequest & IdempotentRequest;
export type ObserveAndEnrichRequest = ThreadRequest & IdempotentRequest & { body: ObserveAndEnrichInput };
export type RecallRequest = AgentRequest & { body: RecallInput };
/** `maxContextChars` defaults to chat's (DEFAULT_MAX_CONTEXT_CHARS). */
export type RetrieveRequest = AgentRequest & {
  query: string;
  maxContextChars?: number | undefined;
  /** ISO date-time: what was true then instead of the current facts (issue 32). */
  asOf?: string | undefined;
};
/** `observe-file`: the form's `file` part (null when the form had none) and its text fields. */
export type ObserveFileRequest = ThreadRequest &
  IdempotentRequest &
  AbortableRequest & {
    file: FileUpload | null;
    /** The form's text fields (`allow_duplicate`, `max_chars`, `overlap_chars`, `strategy`). */
    fields: Record<string, string>;
  };
export type SourceRequest = AgentRequest & { sourceId: string };
export type FinishLearningRequest = ThreadRequest & { sourceId: string; body?: FinishLearningInput | undefined };
export type ImageUploadRequest = CallerRequest & { file: FileUpload | null };
export type BillingRequest = CallerRequest & { query?: BillingQuery | undefined };
export type LogsRequest = AgentRequest & { query?: LogsQuery | undefined };
/** `POST .../memories/erase`. */
export type EraseRequest = AgentRequest & { body: EraseInput };
/** `GET .../erasures/{erasure_id}`. */
export type ErasureRequest = AgentRequest & { erasureId: string };
export type RateLimitRequest = CallerRequest & { operation: RateLimitedOperation };
/** A call about one memory (`/v1/agents/{agent_id}/memories/{memory_id}`). */
export type MemoryRequest = AgentRequest & { memoryId: string; query?: MemoryGetQuery | undefined };
/** `PATCH .../memories/{memory_id}` (extension, issue 42). */
export type PatchMemoryRequest = AgentRequest & { memoryId: string; body: MemoryPatchInput };
/** `POST .../memories/{memory_id}/forget` (extension, issue 42). */
export type ForgetMemoryRequest = AgentRequest & { memoryId: string; body: MemoryForgetInput };
export type ListMemoriesRequest = AgentRequest & { query?: MemoryListQuery | undefined };
export type SearchMemoriesRequest = AgentRequest & { body: MemorySearchInput };

/** `POST /v1/webhooks`. */
export type CreateWebhookRequest = CallerRequest & { body: CreateWebhookInput };
/** One webhook endpoint of the caller's organization. */
export type WebhookRequest = CallerRequest & { webhookId: string };
/** `PATCH /v1/webhooks/{webhook_id}`. */
export type UpdateWebhookRequest = WebhookRequest & { body: UpdateWebhookInput };
/** `GET /v1/webhooks/{webhook_id}/deliveries`. */
export type WebhookDeliveriesRequest = WebhookRequest & { query?: Record<string, string> };
