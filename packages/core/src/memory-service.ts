import type { ActAsOptions, AuthenticateRequest } from './service/authenticate.js';
import type { Caller } from './auth/caller.js';
import type { BillingSummary } from './organizations/billing-admin.js';
import type { RateLimitDecision } from './limits/rate-limiter.js';
import type { ObserveOptions } from './observations/observations.js';
import type { CreatedKey, KeySummary, OrganizationSummary } from './organizations/admin.js';
import type { LimitOverrides, RateLimitedOperation } from './ports/limit-overrides.js';
import type { PriceOverrides } from './ports/store-credits.js';
import type { RetrievalResult } from './retrieval/retrieve.js';
import type {
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
import type {
  AgentDeleteOutput,
  AgentListOutput,
  AgentOutput,
  BillingOutput,
  ChatOutput,
  ChatStreamEventOutput,
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
} from './schemas/outputs.js';
import type { FileUpload, ObserveFileRequest } from './sources/document-options.js';

/** The `Idempotency-Key` of a keyed call (1 to 255 characters); the same key replays the first answer. */
export type IdempotencyOptions = { idempotencyKey?: string | undefined };

/** A stored original as `service.sources.get` returns it. */
export type StoredOriginal = { data: Uint8Array; mediaType: string; filename: string };

/**
 * The administrator's operations: organizations, API keys, credits. The spec has no endpoint for
 * them ("An administrator mints and revokes keys in the application settings"); the CLI and
 * embedding programs call these. Unknown ids are 404 `not_found`.
 */
export interface MemoryAdmin {
  /** Creates an organization; with `credits`, billing is enabled and the balance starts there (`"0"`: enabled, no credit). */
  createOrganization(input: { name: string; limits?: LimitOverrides; credits?: string }): Promise<OrganizationSummary & { balance: string | null }>;
  /** The organization, or null when it does not exist. */
  getOrganization(input: { organizationId: string }): Promise<OrganizationSummary | null>;
  /** Every organization. */
  listOrganizations(): Promise<OrganizationSummary[]>;
  /** Replaces the organization's limit overrides (absent fields fall back to the defaults). */
  setLimits(input: { organizationId: string; limits: LimitOverrides }): Promise<OrganizationSummary>;
  /** Mints a key; the returned `key` is shown once. 409 `conflict` past the live-key ceiling. */
  createKey(input: { organizationId: string }): Promise<CreatedKey>;
  /** Revokes a key; effective on the very next request. */
  revokeKey(input: { keyId: string }): Promise<KeySummary>;
  /** The organization's keys, without their secrets. */
  listKeys(input: { organizationId: string }): Promise<KeySummary[]>;
  /** The organization's billing settings and balance. */
  getBilling(input: { organizationId: string }): Promise<BillingSummary>;
  /** Adds `amount` (> 0) credits as a grant entry; opens the account when missing. */
  addCredits(input: { organizationId: string; amount: string }): Promise<BillingSummary & { entryId: number }>;
  /** Switches billing on or off and sets the low-credit threshold and price overrides. */
  configureBilling(input: { organizationId: string; enabled?: boolean; lowCreditThreshold?: string; prices?: PriceOverrides }): Promise<BillingSummary>;
}

/**
 * The memory-agents service: every operation of the `/v1` API as a method, with the same rules and
 * error codes (`ServiceError` with `code` and `status`; docs/api.md). Each method takes the caller
 * (`service.authenticate` for a request, `service.as` in process) and the wire schema's input type;
 * a body of the wrong shape is 422 `invalid_request` (the service validates every input itself).
 * Results are the wire schema's output types, except that citations are data (`Citation`): the
 * HTTP layer writes their links. Made by `createMemoryService`.
 */
export interface MemoryService {
  /** Organizations, keys and credits (no HTTP endpoint). */
  readonly admin: MemoryAdmin;

  readonly agents: {
    /** `POST /v1/agents` (202): the agent starts `initializing` (with `restore_from`, it copies that agent's memories). */
    create(caller: Caller, body: CreateAgentInput): Promise<AgentOutput>;
    /** `GET /v1/agents`: the caller's agents, with the threads the caller may see. */
    list(caller: Caller): Promise<AgentListOutput>;
    /** `GET /v1/agents/{agent_id}`; 404 `agent_not_found`. */
    get(caller: Caller, agentId: string): Promise<AgentOutput>;
    /** `PATCH /v1/agents/{agent_id}`: `agent_config` is replaced whole. */
    update(caller: Caller, agentId: string, body: UpdateAgentInput): Promise<AgentOutput>;
    /** `DELETE /v1/agents/{agent_id}` (202): the agent and its memories are removed in the background. */
    delete(caller: Caller, agentId: string): Promise<AgentDeleteOutput>;
  };

  readonly threads: {
    /** `POST /v1/agents/{agent_id}/threads` (201); the body is optional (an empty thread). */
    create(caller: Caller, agentId: string, body?: CreateThreadInput): Promise<ThreadOutput>;
    /** `GET /v1/agents/{agent_id}/threads/{thread_id}`: the thread and its messages; 404 `thread_not_found`. */
    get(caller: Caller, agentId: string, threadId: string): Promise<ThreadOutput>;
    /** `DELETE .../threads/{thread_id}` (202): its jobs are cancelled and its memories removed. */
    delete(caller: Caller, agentId: string, threadId: string): Promise<ThreadDeleteOutput>;
    /** `GET .../threads/{thread_id}/learning`: every turn of the thread that was not learned, newest first. */
    learning(caller: Caller, agentId: string, threadId: string, query?: LearningQuery): Promise<LearningRecordOutput>;
  };

  /** `POST .../observe` (202): stores up to 100 observations as one job and learns them in the background. */
  observe(caller: Caller, agentId: string, threadId: string, body: ObserveInput, options?: ObserveOptions): Promise<ObserveOutput>;
  /** `GET .../observe/{observation_id}/status`: the job's progress; 404 `not_found` for an unknown id. */
  observationStatus(caller: Caller, agentId: string, threadId: string, observationId: string): Promise<ObservationStatusOutput>;
  /** `POST .../chat`: retrieves, answers, records the turn and cites, in one call; `signal` aborts the answer. */
  chat(caller: Caller, agentId: string, threadId: string, body: ChatInput, signal?: AbortSignal): Promise<ChatOutput>;
  /**
   * `POST .../chat/stream`: everything that can be refused is refused (thrown) before the first
   * event; then `context`, `delta`..., and `done` or `error`. Stop reading (`return()`) to give
   * the answer place back.
   */
  chatStream(caller: Caller, agentId: string, threadId: string, body: ChatInput, signal?: AbortSignal): Promise<AsyncIterable<ChatStreamEventOutput>>;
  /** `POST .../observe-and-respond`: answers like chat and learns the message and the answer. */
  observeAndRespond(caller: Caller, agentId: string, threadId: string, body: ChatInput, signal?: AbortSignal, options?: IdempotencyOptions): Promise<ObserveAndRespondOutput>;
  /** `POST .../observe-and-enrich`: learns the message and returns memory context, no answer. */
  observeAndEnrich(caller: Caller, agentId: string, threadId: string, body: ObserveAndEnrichInput, options?: IdempotencyOptions): Promise<ObserveAndEnrichOutput>;
  /** `POST /v1/agents/{agent_id}/recall`: memory context and citations for a query; learns, records and charges nothing. */
  recall(caller: Caller, agentId: string, body: RecallInput): Promise<RecallOutput>;
  /** The hybrid retrieval chat uses, scored directly (evaluation, custom answerers). */
  retrieve(caller: Caller, agentId: string, query: string, maxContextChars?: number): Promise<RetrievalResult>;
  /** `POST .../observe-file` (202): a document, converted and split into the turns of one job. */
  observeFile(caller: Caller, agentId: string, threadId: string, request: ObserveFileRequest): Promise<DocumentIngestOutput>;

  readonly sources: {
    /** `GET .../threads/{thread_id}/sources`: the documents sent in the thread and how far each was learned. */
    list(caller: Caller, agentId: string, threadId: string): Promise<SourcesListOutput>;
    /** `POST .../sources/{source_id}/finish-learning` (202): learns the rest of a partially learned document. */
    finishLearning(caller: Caller, agentId: string, threadId: string, sourceId: string, body?: FinishLearningInput): Promise<DocumentIngestOutput>;
    /** `GET /v1/agents/{agent_id}/sources/{source_id}`: the stored original bytes (what document citations link to). */
    get(caller: Caller, agentId: string, sourceId: string): Promise<StoredOriginal>;
  };

  readonly images: {
    /** `POST /v1/images` (201): an image for later chat turns; null `file` is 422. */
    upload(caller: Caller, file: FileUpload | null): Promise<ImageUploadOutput>;
  };

  /** Resolves the caller of a request; throws 401/400 per the spec's Authentication rules. */
  authenticate(request: AuthenticateRequest): Promise<Caller>;
  /**
   * Acts for an organization in process, without minting a key or parsing a bearer string: the
   * caller every other method takes. `endUser` works as `X-SP-End-User` does.
   *
   * @example
   * const alice = await service.as(org.organizationId, { endUser: 'alice@example.com' });
   * const agent = await service.agents.create(alice, { agent_config: { role: 'assistant', objective: 'remember' } });
   */
  as(organizationId: string, options?: ActAsOptions): Promise<Caller>;
  /** `GET /v1/session`: who the caller is and the organization's upload limits. */
  session(caller: Caller): Promise<SessionOutput>;
  /** `GET /v1/billing`: balance and ledger entries; readable even with no credit left. */
  billing(caller: Caller, query?: BillingQuery): Promise<BillingOutput>;
  /**
   * Request-rate windows (spec "Limits / Request rates"). `take` counts a request of a limited
   * operation or refuses it (429) without counting; the HTTP layer calls it before any work.
   * `now` is the service clock (ms), for `X-RateLimit-Reset` of responses outside every window.
   */
  readonly limits: {
    take(caller: Caller, operation: RateLimitedOperation): Promise<RateLimitDecision>;
    now(): number;
  };
  /** `GET /v1/agents/{agent_id}/logs`: the agent's activity, newest first. */
  logs(caller: Caller, agentId: string, query?: LogsQuery): Promise<LogsOutput>;

  /**
   * Opens the ports and resumes work a previous process left: agents still initializing are
   * initialized, agents left deleting are removed, learning and deferred conversions restart
   * (none of that with the option `backgroundWork: false`). Idempotent; every other method needs it first.
   */
  start(): Promise<void>;
  /** Waits for background work, then closes the ports. */
  stop(): Promise<void>;
  /** Resolves when background work and learning started so far have settled (tests). */
  idle(): Promise<void>;
  /**
   * Readiness for a load balancer (`GET /readyz`): whether the store and the memory index answer
   * a cheap probe within `timeoutMs` (default 5000). Never rejects; a part that failed carries the
   * sentence saying so. Nothing about any organization is read or returned.
   */
  ready(options?: { timeoutMs?: number }): Promise<ServiceReadiness>;
}

/** What `MemoryService.ready()` found: each part `ok`, or the sentence of its failure. */
export type ServiceReadiness = {
  ready: boolean;
  store: { ok: boolean; error?: string };
  index: { ok: boolean; error?: string };
};
