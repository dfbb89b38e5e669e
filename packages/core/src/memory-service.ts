import type { ActAsOptions, AuthenticateRequest } from './service/authenticate.js';
import type { Caller } from './auth/caller.js';
import type { BillingSummary } from './organizations/billing-admin.js';
import type { ImportAgentResult, ImportProgress } from './export/agent-import.js';
import type { CreateExportRequest, ExportDownload, ExportJobOutput, ExportJobRequest } from './export/export-jobs.js';
import type { RateLimitDecision } from './limits/rate-limiter.js';
import type { CreatedKey, KeySummary, OrganizationSummary } from './organizations/admin.js';
import type { LimitOverrides } from './ports/limit-overrides.js';
import type { PriceOverrides } from './ports/store/index.js';
import type { RetrievalResult } from './retrieval/retrieve.js';
import type { ErasureOutput } from './schemas/erasures.js';
import type { WebhookDeletedOutput, WebhookDeliveryListOutput, WebhookListOutput, WebhookOutput, WebhookWithSecretOutput } from './schemas/webhooks.js';
import type { CreateWebhookRequest, UpdateWebhookRequest, WebhookDeliveriesRequest, WebhookRequest } from './service/requests.js';
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
  ThreadTurnsOutput,
  LogsOutput,
  MemoryDetailOutput,
  MemoryHistoryOutput,
  MemoryListOutput,
  MemorySearchOutput,
  ObservationReceiptOutput,
  ObservationStatusOutput,
  ObservationListOutput,
  ObserveAndEnrichOutput,
  ObserveAndRespondOutput,
  ObserveOutput,
  RecallOutput,
  SessionOutput,
  SourcesListOutput,
  ThreadDeleteOutput,
  ThreadOutput,
} from './schemas/outputs.js';
import type { ReembedRunOptions, ReembedStatus } from './reembed/reembedder.js';
import type { MaintenanceListRequest, MaintenancePlanRequest, MaintenanceRunRequest } from './maintenance/maintenance.js';
import type { MaintenanceRunListOutput, MaintenanceRunOutput } from './schemas/maintenance.js';
import type { ReviewDeclineRequest, ReviewEditRequest, ReviewListRequest, ReviewMemoryRequest, ReviewReflectRequest, ReviewRelearnRequest } from './review/review.js';
import type { ReviewItemOutput, ReviewListOutput, ReviewReflectionOutput, ReviewRelearningOutput } from './schemas/review.js';
import type { SchedulePass } from './maintenance/schedule.js';
import type {
  AgentRequest,
  BillingRequest,
  CallerRequest,
  ChatRequest,
  CreateAgentRequest,
  CreateThreadRequest,
  EraseRequest,
  ErasureRequest,
  FinishLearningRequest,
  ImageUploadRequest,
  LearningRequest,
  ThreadTurnsRequest,
  LogsRequest,
  ListMemoriesRequest,
  MemoryRequest,
  PatchMemoryRequest,
  ForgetMemoryRequest,
  SearchMemoriesRequest,
  ObservationStatusRequest,
  ObservationListRequest,
  ObserveAndEnrichRequest,
  ObserveAndRespondRequest,
  ObserveFileRequest,
  ObserveRequest,
  RateLimitRequest,
  RecallRequest,
  RetrieveRequest,
  SourceRequest,
  ThreadRequest,
  UpdateAgentRequest,
} from './service/requests.js';

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
  /**
   * The agent as export lines (docs/export-format.md), each ending with a newline, read lazily.
   * Without `organizationId` the agent is looked up in every organization. 404 `not_found` when
   * there is no such agent (raised on the first read of the iterable).
   */
  exportAgent(input: { agentId: string; organizationId?: string; vectors?: boolean }): AsyncIterable<string>;
  /**
   * Imports an export file as a new agent of `organizationId` (ids re-keyed, memories re-embedded
   * when needed). `open` is called twice (check, then write). A bad file is 422 `invalid_request`
   * naming its line, and nothing is written; a failure while writing removes what was written, and
   * the agent stays hidden (`importing`) until its last line is written, so a killed process leaves
   * no partial agent (the next start removes it). `onProgress` hears of each batch of memories.
   */
  importAgent(input: { organizationId: string; open: () => AsyncIterable<string>; keepIds?: boolean; keepVectors?: boolean; onProgress?: (progress: ImportProgress) => void }): Promise<ImportAgentResult>;
}

/**
 * The memory-agents service: every operation of the `/v1` API as a method, with the same rules and
 * error codes (`ServiceError` with `code` and `status`; docs/api.md). Each method takes ONE request
 * object (service/requests.ts), as the AI SDK's `generateText` takes its options: the `caller`
 * (`service.authenticate` for a request, `service.as` in process), the path's ids (`agentId`,
 * `threadId`, ...), the wire schema's input as `body` (or `query`), and `idempotencyKey` /
 * `abortSignal` where the call takes them. A body of the wrong shape is 422 `invalid_request` (the
 * service validates every input itself).
 * Results are the wire schema's output types, except that citations are data (`Citation`): the
 * HTTP layer writes their links. Made by `createMemoryService`.
 */
export interface MemoryService {
  /** Organizations, keys and credits (no HTTP endpoint). */
  readonly admin: MemoryAdmin;

  readonly agents: {
    /** `POST /v1/agents` (202): the agent starts `initializing` (with `restore_from`, it copies that agent's memories). */
    create(request: CreateAgentRequest): Promise<AgentOutput>;
    /** `GET /v1/agents`: the caller's agents, with the threads the caller may see. */
    list(request: CallerRequest): Promise<AgentListOutput>;
    /** `GET /v1/agents/{agent_id}`; 404 `agent_not_found`. */
    get(request: AgentRequest): Promise<AgentOutput>;
    /** `PATCH /v1/agents/{agent_id}`: `agent_config` is replaced whole. */
    update(request: UpdateAgentRequest): Promise<AgentOutput>;
    /** `DELETE /v1/agents/{agent_id}` (202): the agent and its memories are removed in the background. */
    delete(request: AgentRequest): Promise<AgentDeleteOutput>;
  };

  readonly threads: {
    /** `POST /v1/agents/{agent_id}/threads` (201); the body is optional (an empty thread). */
    create(request: CreateThreadRequest): Promise<ThreadOutput>;
    /** `GET /v1/agents/{agent_id}/threads/{thread_id}`: the thread and its messages; 404 `thread_not_found`. */
    get(request: ThreadRequest): Promise<ThreadOutput>;
    /** `DELETE .../threads/{thread_id}` (202): its jobs are cancelled and its memories removed. */
    delete(request: ThreadRequest): Promise<ThreadDeleteOutput>;
    /** `GET .../threads/{thread_id}/learning`: every turn of the thread that was not learned, newest first. */
    learning(request: LearningRequest): Promise<LearningRecordOutput>;
    /**
     * `GET .../threads/{thread_id}/turns` (an extension, issue 45): the turns the thread observed,
     * oldest observation first, each with its learning state and (a document's piece) its file and
     * page; `total` counts them all; `next_cursor` is "" on the last page.
     */
    turns(request: ThreadTurnsRequest): Promise<ThreadTurnsOutput>;
  };

  /**
   * What an agent knows (an extension of `/v1`, issue 30; docs/api.md "Memories"). Another
   * organization's agent is 404 `agent_not_found`; with `X-SP-End-User`, only memories learned in
   * the threads that person reaches exist (with `memory_scope: "end_user"`, those of threads of no
   * person too), anything else is 404 `not_found` as an unknown id is.
   */
  readonly memories: {
    /**
     * `GET /v1/agents/{agent_id}/memories`: newest first, filtered, `limit` 1..100 (default 20;
     * out of range 400). An unknown filter, a malformed value, or a cursor of another agent or
     * other filters is 422 `invalid_request`; another person's `thread_id` is 404 `thread_not_found`.
     */
    list(request: ListMemoriesRequest): Promise<MemoryListOutput>;
    /** `GET .../memories/{memory_id}`: text, dates, provenance and learning credits; 404 `not_found`. */
    get(request: MemoryRequest): Promise<MemoryDetailOutput>;
    /**
     * `GET .../memories/{memory_id}/history` (extension): the versions of the fact it holds, oldest
     * first (what it replaced, itself, what replaced it), at most 100; expired and forgotten versions
     * only with `include_expired`; 404 `not_found` as `get`.
     */
    history(request: MemoryRequest): Promise<MemoryHistoryOutput>;
    /**
     * `POST .../memories/search`: what chat's retrieval gives for `query` (the same ranking), each hit
     * with its rank, fused score and every signal's contribution; `as_of` searches what was true then.
     */
    search(request: SearchMemoriesRequest): Promise<MemorySearchOutput>;
    /** `DELETE .../memories/{memory_id}` (204); 404 `not_found`. Its words leave its neighbours' keywords; exports made before are removed. */
    delete(request: MemoryRequest): Promise<void>;
    /**
     * `PATCH .../memories/{memory_id}` (extension, issue 42), at least one of: `expires_at` sets
     * (ISO date-time) or clears (null) when it expires; `pinned` pins (never decays; clears an expiry
     * unless `expires_at` is given too) or unpins; `text` edits it: the new text is a new memory
     * (returned, `edited` naming the old one and who edited), the old stays as superseded history.
     * 404 `not_found` as `delete` (a person changes the memories of their own threads); a forgotten
     * memory, or an edit of a superseded one, is 409 `conflict`; a bad body is 422 `invalid_request`.
     */
    update(request: PatchMemoryRequest): Promise<MemoryDetailOutput>;
    /**
     * `POST .../memories/{memory_id}/forget` (extension, issue 42) `{ reason }`: hidden from every read
     * path at once (kept for audit with `include_expired`), restorable for the restore window, then
     * erased for good. Already forgotten: 409 `conflict`.
     */
    forget(request: ForgetMemoryRequest): Promise<MemoryDetailOutput>;
    /** `POST .../memories/{memory_id}/restore` (extension, issue 42): undoes `forget` within the window; else 409 `conflict`. */
    restore(request: MemoryRequest): Promise<MemoryDetailOutput>;
  };

  /** `POST .../observe` (202): stores up to 100 observations as one job and learns them in the background. */
  observe(request: ObserveRequest): Promise<ObserveOutput>;
  /** `GET .../observe/{observation_id}/status`: the job's progress; 404 `not_found` for an unknown id. */
  observationStatus(request: ObservationStatusRequest): Promise<ObservationStatusOutput>;
  /**
   * `GET .../observe/{observation_id}/receipt` (an extension, issue 33): once the job is final
   * (committed, failed or cancelled), per turn whether it was learned or skipped (with the reason),
   * the memory ids written, the memories superseded, and the credits charged and refunded with the
   * ledger entries that hold them. 404 `not_found` for an unknown id; 409 `conflict`
   * while the job runs.
   */
  observationReceipt(request: ObservationStatusRequest): Promise<ObservationReceiptOutput>;
  /**
   * `GET .../threads/{thread_id}/observations` (an extension, for the inspector): the thread's
   * observation jobs newest first, each as its status; `next_cursor` is "" on the last page.
   */
  listObservations(request: ObservationListRequest): Promise<ObservationListOutput>;
  /**
   * `POST .../chat`: retrieves, answers, records the turn and cites, in one call; `abortSignal` aborts the answer.
   * Which memories it draws on (as every answering call and recall): every memory of the agent (the
   * spec), or with `agent_config.memory_scope: "end_user"` a person's own and shared ones
   * (`agents/memory-scope.ts`; docs/api.md "Per-person memory").
   */
  chat(request: ChatRequest): Promise<ChatOutput>;
  /**
   * `POST .../chat/stream`: everything that can be refused is refused (thrown) before the first
   * event; then `context`, `delta`..., and `done` or `error`. Stop reading (`return()`) to give
   * the answer place back.
   */
  chatStream(request: ChatRequest): Promise<AsyncIterable<ChatStreamEventOutput>>;
  /** `POST .../observe-and-respond`: answers like chat and learns the message and the answer. */
  observeAndRespond(request: ObserveAndRespondRequest): Promise<ObserveAndRespondOutput>;
  /** `POST .../observe-and-enrich`: learns the message and returns memory context, no answer. */
  observeAndEnrich(request: ObserveAndEnrichRequest): Promise<ObserveAndEnrichOutput>;
  /** `POST /v1/agents/{agent_id}/recall`: memory context and citations for a query; learns, records and charges nothing. */
  recall(request: RecallRequest): Promise<RecallOutput>;
  /** The hybrid retrieval chat uses, scored directly (evaluation, custom answerers). */
  retrieve(request: RetrieveRequest): Promise<RetrievalResult>;
  /** `POST .../observe-file` (202): a document, converted and split into the turns of one job. */
  observeFile(request: ObserveFileRequest): Promise<DocumentIngestOutput>;

  /** Asynchronous export jobs of the organization's own agents (an extension, issue 34). */
  readonly exports: {
    /** `POST /v1/agents/{agent_id}/exports` (202): starts writing the agent's export file. 403 with X-SP-End-User. */
    create(request: CreateExportRequest): Promise<ExportJobOutput>;
    /** `GET .../exports/{export_id}`: the job's status; 404 `not_found` for an id of another agent or organization, or once a later erasure or delete removed it. */
    get(request: ExportJobRequest): Promise<ExportJobOutput>;
    /**
     * `GET .../exports/{export_id}/download`: the JSON lines once ready, as chunks read from the blob
     * store as they are consumed, with the size; 409 `conflict` while running or failed; 404
     * `not_found` once removed.
     */
    download(request: ExportJobRequest): Promise<ExportDownload>;
  };

  readonly sources: {
    /** `GET .../threads/{thread_id}/sources`: the documents sent in the thread and how far each was learned. */
    list(request: ThreadRequest): Promise<SourcesListOutput>;
    /** `POST .../sources/{source_id}/finish-learning` (202): learns the rest of a partially learned document. */
    finishLearning(request: FinishLearningRequest): Promise<DocumentIngestOutput>;
    /** `GET /v1/agents/{agent_id}/sources/{source_id}`: the stored original bytes (what document citations link to). */
    get(request: SourceRequest): Promise<StoredOriginal>;
  };

  readonly images: {
    /** `POST /v1/images` (201): an image for later chat turns; null `file` is 422. */
    upload(request: ImageUploadRequest): Promise<ImageUploadOutput>;
  };

  /** Erasure jobs (an extension, issue 30): everything derived from a source, thread, observation or end user. */
  readonly erasures: {
    /**
     * `POST /v1/agents/{agent_id}/memories/erase` (202): exactly one of `source_id`, `thread_id`,
     * `observation_id`, `end_user_id`; the removal runs as a job (resumed after a restart). Once it
     * is `completed`, no route answers with the erased text and no byte of it remains in the memory
     * index's storage or the blob store (docs/deploying.md: what the database's WAL may still hold).
     * 422 for bad input; 404 for a target the caller does not reach (another organization, another
     * person's thread), exactly as for an id that does not exist.
     */
    erase(request: EraseRequest): Promise<ErasureOutput>;
    /** `GET /v1/agents/{agent_id}/erasures/{erasure_id}`: status and counts; 404 `not_found`. */
    get(request: ErasureRequest): Promise<ErasureOutput>;
  };
  /**
   * Maintenance runs of an agent (an extension, issue 43; docs/api.md "Maintenance"): merge
   * duplicates, supersede across history, sweep expired. Each is a dry run first (the diff), applied
   * exactly (409 `conflict` when a memory changed since, when the guard refuses, or when it is not a
   * dry run any more), undoable within the restore window. `X-SP-End-User` is 403; unknown ids 404.
   */
  readonly maintenance: {
    /** `POST /v1/agents/{agent_id}/maintenance` (201) `{ kind, max_share? }`: a dry run; a bad kind or share is 422. */
    plan(request: MaintenancePlanRequest): Promise<MaintenanceRunOutput>;
    /** `POST .../maintenance/{run_id}/apply`: applies exactly the dry run's diff (the guard, then a re-check of every memory). */
    apply(request: MaintenanceRunRequest): Promise<MaintenanceRunOutput>;
    /** `POST .../maintenance/{run_id}/undo`: reverses an applied run within its window; after it 409. */
    undo(request: MaintenanceRunRequest): Promise<MaintenanceRunOutput>;
    /** `GET .../maintenance/{run_id}`: the run and its diff. */
    get(request: MaintenanceRunRequest): Promise<MaintenanceRunOutput>;
    /** `GET .../maintenance`: the agent's runs, newest first (`limit`, `cursor`), without diffs. */
    list(request: MaintenanceListRequest): Promise<MaintenanceRunListOutput>;
  };
  /**
   * The review queue (an extension, issue 43; docs/api.md "Review"): the memories the agent's
   * `review_mode` holds wait here, hidden from chat, recall and search, until approved. A decline
   * keeps one hidden and learning never proposes its words again; undo reverses the last approve or
   * decline within the restore window. Wrong state: 409 `conflict`; `X-SP-End-User` is 403.
   */
  readonly review: {
    /** `GET /v1/agents/{agent_id}/review` (`state` pending by default, `limit`, `cursor`): oldest proposal first. */
    list(request: ReviewListRequest): Promise<ReviewListOutput>;
    /** `POST .../review/{memory_id}/approve`: re-checked against what is current (409 when a current memory says the same). */
    approve(request: ReviewMemoryRequest): Promise<ReviewItemOutput>;
    /** `POST .../review/{memory_id}/decline` `{ reason? }`. */
    decline(request: ReviewDeclineRequest): Promise<ReviewItemOutput>;
    /** `PATCH .../review/{memory_id}` `{ text }`: a pending memory's text, embedded again. */
    edit(request: ReviewEditRequest): Promise<ReviewItemOutput>;
    /** `POST .../review/{memory_id}/undo`: the last approve or decline reversed within the restore window. */
    undo(request: ReviewMemoryRequest): Promise<ReviewItemOutput>;
    /**
     * `POST .../review/reflect` (201) `{ max_proposals? }`: the language model proposes facts the newest
     * memories imply together, each pending review; 503 `service_not_configured` on the extractive
     * model, 503 `answer_model_unavailable` when the model fails or answers no JSON; 402 out of credit.
     */
    reflect(request: ReviewReflectRequest): Promise<ReviewReflectionOutput>;
    /**
     * `POST .../review/relearn` (201) `{ thread_id?, max_turns?, cursor? }`: turns learned again under the
     * current writer and policy; each memory that reads differently is proposed pending review.
     */
    relearn(request: ReviewRelearnRequest): Promise<ReviewRelearningOutput>;
  };
  /**
   * Webhooks (an opt-in extension, issue 34; polling stays the spec's way). Off unless the service
   * was created with `webhooks`: then every member is 503 `service_not_configured`. Managed with
   * the organization's key alone (`X-SP-End-User` is 403); another organization's id is 404.
   */
  readonly webhooks: {
    /** `POST /v1/webhooks` (201): a receiver URL (http or https; one resolving to a private, loopback or link-local address is 422 unless the operator allows it) and its signing secret, shown here and on rotation only. */
    create(request: CreateWebhookRequest): Promise<WebhookWithSecretOutput>;
    /** `GET /v1/webhooks`: the organization's endpoints, oldest first. */
    list(request: CallerRequest): Promise<WebhookListOutput>;
    /** `GET /v1/webhooks/{webhook_id}`. */
    get(request: WebhookRequest): Promise<WebhookOutput>;
    /** `PATCH /v1/webhooks/{webhook_id}`: url, events, description, `enabled` (true re-enables one disabled after failures). */
    update(request: UpdateWebhookRequest): Promise<WebhookOutput>;
    /** `DELETE /v1/webhooks/{webhook_id}`: the endpoint and its delivery log. */
    delete(request: WebhookRequest): Promise<WebhookDeletedOutput>;
    /** `POST /v1/webhooks/{webhook_id}/rotate-secret`: a new secret; the old one keeps signing beside it for the rotation window. */
    rotateSecret(request: WebhookRequest): Promise<WebhookWithSecretOutput>;
    /** `GET /v1/webhooks/{webhook_id}/deliveries`: the delivery log, newest first (`limit`, `cursor`). */
    deliveries(request: WebhookDeliveriesRequest): Promise<WebhookDeliveryListOutput>;
  };

  /** Resolves the caller of a request; throws 401/400 per the spec's Authentication rules. */
  authenticate(request: AuthenticateRequest): Promise<Caller>;
  /**
   * Acts for an organization in process, without minting a key or parsing a bearer string: the
   * caller every other method takes. `endUser` works as `X-SP-End-User` does.
   *
   * @example
   * const alice = await service.as(org.organizationId, { endUser: 'alice@example.com' });
   * const agent = await service.agents.create({ caller: alice, body: { agent_config: { role: 'assistant', objective: 'remember' } } });
   */
  as(organizationId: string, options?: ActAsOptions): Promise<Caller>;
  /** `GET /v1/session`: who the caller is and the organization's upload limits. */
  session(request: CallerRequest): Promise<SessionOutput>;
  /** `GET /v1/billing`: balance and ledger entries; readable even with no credit left. */
  billing(request: BillingRequest): Promise<BillingOutput>;
  /**
   * Request-rate windows (spec "Limits / Request rates"). `take` counts a request of a limited
   * operation or refuses it (429) without counting; the HTTP layer calls it before any work.
   * `now` is the service clock (ms), for `X-RateLimit-Reset` of responses outside every window.
   */
  readonly limits: {
    take(request: RateLimitRequest): Promise<RateLimitDecision>;
    now(): number;
  };
  /** `GET /v1/agents/{agent_id}/logs`: the agent's activity, newest first. */
  logs(request: LogsRequest): Promise<LogsOutput>;

  /**
   * Opens the ports and resumes work a previous process left: agents still initializing are
   * initialized, agents left deleting are removed, learning and deferred conversions restart
   * (none of that with the option `backgroundWork: false`). Idempotent; every other method needs it first.
   */
  start(): Promise<void>;
  /** Waits for background work, then closes the ports. */
  stop(): Promise<void>;
  /**
   * Switching embedders on a live index (issue 39). When the memory index was built by another
   * embedder than the service's, `start()` re-embeds every record in the background (unless
   * `reembedInBackground: false`): learning waits (jobs stay queued) and search uses full text
   * until the index switches to the new embedder. Resumable after a kill.
   */
  readonly reembedding: {
    /** The re-embed in progress (`done` of `total` records, from and to which embedder), or null. */
    status(): Promise<ReembedStatus | null>;
    /**
     * Runs the re-embed to its end in this call (the CLI's `reembed run`, with background work
     * off); resolves the last status, or null when the index already has the service's embedder.
     */
    run(options?: ReembedRunOptions): Promise<ReembedStatus | null>;
  };
  /** Resolves when background work and learning started so far have settled (tests). */
  idle(): Promise<void>;
  /**
   * Erases, for good, every forgotten memory whose restore window has ended (issue 42); resolves how
   * many. `start()` runs it every `memoryLifecycle.sweepIntervalMs` when background work is on; call
   * it yourself with background work off (a cron job of the CLI, a test).
   */
  sweepMemories(): Promise<{ erased: number }>;
  /**
   * One pass of idle maintenance (issue 43, `maintenance.schedule`): each idle agent's allowed
   * kinds planned and applied when the guard allows. `start()` runs it every `schedule.intervalMs`
   * when a schedule is set and background work is on; without a schedule it does nothing.
   */
  maintainIdle(): Promise<SchedulePass>;
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
  /** Present while the memory index is re-embedded for another embedder (the service stays ready). */
  reembedding?: ReembedStatus;
};
