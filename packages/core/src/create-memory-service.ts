import { randomUUID } from 'node:crypto';
import { createAgents } from './agents/agents.js';
import { createChat } from './chat/chat.js';
import { extractiveLanguageModel } from './chat/extractive-language-model.js';
import { hashedNgramEmbedder } from './embedding/hashed-ngram-embedder.js';
import { inMemoryBlobs } from './in-memory/in-memory-blobs.js';
import { inMemoryMemoryIndex } from './in-memory/in-memory-memory-index.js';
import { defaultMemoryWriter } from './memory/default-memory-writer.js';
import { IngestionScheduler } from './observations/ingestion.js';
import { createObservations } from './observations/observations.js';
import type { BlobStore } from './ports/blob-store.js';
import type { Embedder } from './ports/embedder.js';
import type { LanguageModel } from './ports/language-model.js';
import type { MemoryIndex } from './ports/memory-index.js';
import type { MemoryWriter } from './ports/memory-writer.js';
import type { Ocr } from './ports/ocr.js';
import { cachingStore } from './store/caching-store.js';
import type { ObserveOptions } from './observations/observations.js';
import type { BillingQuery, ChatInput, CreateAgentInput, CreateThreadInput, FinishLearningInput, LearningQuery, LogsQuery, ObserveAndEnrichInput, ObserveInput, RecallInput, UpdateAgentInput } from './schemas/inputs.js';
import { actAs, authenticate, type ActAsOptions, type AuthenticateRequest } from './auth/authenticate.js';
import type { Caller } from './auth/caller.js';
import { describeSession } from './auth/session.js';
import { createIdGenerator, type IdGenerator } from './ids/index.js';
import { DEFAULT_LIMITS, type Limits } from './limits/index.js';
import { listLogs } from './logs/logs.js';
import { createAdmin } from './organizations/admin.js';
import { systemClock, type Clock } from './ports/clock.js';
import type { Store } from './ports/store.js';
import type { RateLimitStore } from './ports/store-credits.js';
import { BackgroundTasks } from './service/background.js';
import type { ServiceContext } from './service/context.js';
import { stderrLogger, type Logger } from './service/logger.js';
import { createThreads } from './threads/threads.js';
import { createImages } from './images/images.js';
import { createSources, type DocumentOptions, type ObserveFileRequest, type FileUpload } from './sources/sources.js';
import { createBillingAdmin } from './credits/billing-admin.js';
import { createCredits } from './credits/credits.js';
import type { Prices } from './credits/pricing.js';
import { inProcessRateLimits } from './limits/in-process-rate-limits.js';
import { createRateLimiter } from './limits/rate-limiter.js';
import type { RateLimitedOperation } from './ports/limit-overrides.js';

/** Options of `createMemoryService`. */
export type MemoryServiceOptions = {
  /** Transactional state. */
  store: Store;
  /** Where memories live. @default inMemoryMemoryIndex() */
  index?: MemoryIndex;
  /** Original documents, figure crops, images. @default inMemoryBlobs() */
  blobs?: BlobStore;
  /** @default hashedNgramEmbedder() (offline, deterministic) */
  embedder?: Embedder;
  /** Writes answers. @default extractiveLanguageModel() (offline) */
  model?: LanguageModel;
  /** Turns -> memories. @default defaultMemoryWriter() (offline, verbatim with resolved dates) */
  writer?: MemoryWriter;
  /** Text recognition for scans; null leaves scans refused with `document_needs_ocr`. @default null */
  ocr?: Ocr | null;
  /** @default systemClock */
  clock?: Clock;
  /** @default prefixed monotonic ULIDs driven by `clock` */
  ids?: IdGenerator;
  /** Defaults under every organization's overrides. @default DEFAULT_LIMITS (the spec's numbers) */
  limits?: Partial<Limits>;
  /** @default stderrLogger (warnings and errors as JSON lines) */
  logger?: Logger;
  /** Document ingestion budgets (OCR pages read inside a request, files learning per organization). */
  documents?: DocumentOptions;
  /**
   * Credits per word under every organization's price overrides.
   * @default DEFAULT_PRICES ({ inputWord: '0.001', outputWord: '0.002' })
   */
  pricing?: Partial<Prices>;
  /**
   * Keep the API keys, organizations and agents that requests read in process (`cachingStore`),
   * so authentication and the agent lookup cost no database round trip. Only correct when no
   * other process writes the store.
   * @default true for a persistent store no other process shares (the embedded default), else false
   */
  cacheRecords?: boolean;
};

/**
 * Composes the memory-agents service from its ports.
 *
 * @example
 * const service = createMemoryService({ store: inMemoryStore() });
 * await service.start();
 * const org = await service.admin.createOrganization({ name: 'Acme' });
 * const { key } = await service.admin.createKey({ organizationId: org.organizationId });
 * const caller = await service.authenticate({ authorization: `Bearer ${key}`, endUser: undefined, secFetchSite: undefined, requestId: 'r1' });
 * const agent = await service.agents.create(caller, { agent_config: { role: 'assistant', objective: 'remember' } });
 */
export function createMemoryService(options: MemoryServiceOptions) {
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? stderrLogger;
  const instanceId = `worker_${randomUUID()}`;
  // Limits hold across processes only when the store is shared; otherwise an in-process limiter
  // keeps the embedded default free of a database round trip per request.
  // (Bound late: an adapter's areas exist only once `start()` has run `store.init()`.)
  const rateLimitStore: RateLimitStore = options.store.capabilities.shared
    ? {
        hit: (request) => options.store.rateLimits.hit(request),
        acquire: (request) => options.store.rateLimits.acquire(request),
        release: (request) => options.store.rateLimits.release(request),
      }
    : inProcessRateLimits();
  // Keys, organizations and agents every request reads stay in process when no other process
  // writes the store (exact invalidation: every write goes through this wrapper).
  const store = (options.cacheRecords ?? (options.store.capabilities.persistent && !options.store.capabilities.shared)) ? cachingStore(options.store) : options.store;
  const context: ServiceContext = {
    store,
    index: options.index ?? inMemoryMemoryIndex(),
    blobs: options.blobs ?? inMemoryBlobs(),
    embedder: options.embedder ?? hashedNgramEmbedder(),
    model: options.model ?? extractiveLanguageModel(),
    writer: options.writer ?? defaultMemoryWriter(),
    ocr: options.ocr ?? null,
    instanceId,
    clock,
    ids: options.ids ?? createIdGenerator(() => clock.now()),
    defaultLimits: { ...DEFAULT_LIMITS, ...options.limits },
    logger,
    background: new BackgroundTasks(logger),
    credits: createCredits({ store, clock, ...(options.pricing ? { prices: options.pricing } : {}) }),
    limiter: createRateLimiter(rateLimitStore, clock, instanceId),
    nowIso: () => new Date(clock.now()).toISOString(),
  };

  const scheduler = new IngestionScheduler(context);
  const observations = createObservations(context, scheduler);
  const chat = createChat(context, observations);
  const sources = createSources(context, (agentId) => scheduler.kick(agentId), options.documents);
  const images = createImages(context);
  const agents = createAgents(context, {
    // restore_from: copy the other agent's memories; it had learned its own turns plus what it restored.
    async initialize(agent) {
      if (agent.restoreFrom === null) return { resumedFromTurn: 0 };
      const source = await context.store.agents.get({ organizationId: agent.organizationId, agentId: agent.restoreFrom });
      if (!source) throw new Error(`restore source ${agent.restoreFrom} vanished`);
      await context.index.deleteBy({ agentId: agent.id });
      await context.index.copyAgent({ fromAgentId: source.id, toAgentId: agent.id, toOrganizationId: agent.organizationId, newId: () => context.ids('mem_') });
      return { resumedFromTurn: source.resumedFromTurn + (await context.store.jobs.countCommittedTurns({ agentId: source.id })) };
    },
    async destroy(agent) {
      await context.index.deleteBy({ agentId: agent.id });
    },
  });
  const threads = createThreads(context, {
    async destroy(thread) {
      await context.store.jobs.cancelForThread({ threadId: thread.id, at: context.nowIso() });
      await context.index.deleteBy({ agentId: thread.agentId, threadId: thread.id });
    },
  });
  let started = false;
  const admin = createAdmin(context);
  const billingAdmin = createBillingAdmin({ store: context.store, clock });

  return {
    admin: {
      ...admin,
      /** Creates an organization; with `credits`, billing is enabled and the balance starts there. */
      createOrganization: billingAdmin.withCredits(admin),
      getBilling: billingAdmin.getBilling,
      addCredits: billingAdmin.addCredits,
      configureBilling: billingAdmin.configureBilling,
    },
    agents: {
      create: (caller: Caller, body: CreateAgentInput) => agents.create(caller, body),
      list: agents.list,
      get: agents.get,
      update: (caller: Caller, agentId: string, body: UpdateAgentInput) => agents.update(caller, agentId, body),
      delete: agents.delete,
    },
    threads: {
      create: (caller: Caller, agentId: string, body?: CreateThreadInput) => threads.create(caller, agentId, body),
      get: threads.get,
      delete: threads.delete,
      learning: (caller: Caller, agentId: string, threadId: string, query: LearningQuery = {}) => observations.learningRecord(caller, agentId, threadId, query),
    },
    /** `POST .../observe` (202). */
    observe: (caller: Caller, agentId: string, threadId: string, body: ObserveInput, options?: ObserveOptions) => observations.observe(caller, agentId, threadId, body, options),
    /** `GET .../observe/{observation_id}/status`. */
    observationStatus: observations.status,
    /** `POST .../chat`. */
    chat: (caller: Caller, agentId: string, threadId: string, body: ChatInput, signal?: AbortSignal) => chat.chat(caller, agentId, threadId, body, signal),
    /** `POST .../chat/stream`: an async iterable of stream events. */
    chatStream: (caller: Caller, agentId: string, threadId: string, body: ChatInput, signal?: AbortSignal) => chat.chatStream(caller, agentId, threadId, body, signal),
    /** `POST .../observe-and-respond`. */
    observeAndRespond: (caller: Caller, agentId: string, threadId: string, body: ChatInput, signal?: AbortSignal, options?: { idempotencyKey?: string | undefined }) =>
      chat.observeAndRespond(caller, agentId, threadId, body, signal, options),
    /** `POST .../observe-and-enrich`. */
    observeAndEnrich: (caller: Caller, agentId: string, threadId: string, body: ObserveAndEnrichInput, options?: { idempotencyKey?: string | undefined }) =>
      chat.observeAndEnrich(caller, agentId, threadId, body, options),
    /** `POST /v1/agents/{agent_id}/recall`: memory context and citations for a query; learns nothing. */
    recall: (caller: Caller, agentId: string, body: RecallInput) => chat.recall(caller, agentId, body),
    /** The hybrid retrieval chat uses, scored directly (evaluation, custom answerers). */
    retrieve: chat.retrieve,
    /** `POST .../observe-file` (202): a document, converted and split into turns of one job. */
    observeFile: (caller: Caller, agentId: string, threadId: string, request: ObserveFileRequest) => sources.observeFile(caller, agentId, threadId, request),
    sources: {
      /** `GET .../threads/{thread_id}/sources`. */
      list: sources.listSources,
      /** `POST .../sources/{source_id}/finish-learning` (202). */
      finishLearning: (caller: Caller, agentId: string, threadId: string, sourceId: string, body?: FinishLearningInput) => sources.finishLearning(caller, agentId, threadId, sourceId, body),
      /** `GET /v1/agents/{agent_id}/sources/{source_id}`: the stored original bytes. */
      get: sources.getSource,
    },
    images: {
      /** `POST /v1/images` (201). */
      upload: (caller: Caller, file: FileUpload | null) => images.upload(caller, file),
    },

    /** Resolves the caller of a request; throws 401/400 per the spec's Authentication rules. */
    authenticate: (request: AuthenticateRequest): Promise<Caller> => authenticate(context, request),
    /**
     * Acts for an organization in process, without minting a key or parsing a bearer string:
     * the caller every other method takes. `endUser` works as `X-SP-End-User` does.
     *
     * @example
     * const alice = await service.as(org.organizationId, { endUser: 'alice@example.com' });
     * const agent = await service.agents.create(alice, { agent_config: { role: 'assistant', objective: 'remember' } });
     */
    as: (organizationId: string, options?: ActAsOptions): Promise<Caller> => actAs(context, organizationId, options),
    /** `GET /v1/session`. */
    session: async (caller: Caller) => describeSession(caller),
    /** `GET /v1/billing`: readable even with no credit left. */
    billing: (caller: Caller, query: BillingQuery = {}) => context.credits.billing(caller, query),
    /**
     * Request-rate windows (spec "Limits / Request rates"). `take` counts a request of a limited
     * operation or refuses it (429) without counting; the HTTP layer calls it before any work.
     */
    limits: {
      take: (caller: Caller, operation: RateLimitedOperation) => context.limiter.take(caller, operation),
      /** The service clock (ms), for `X-RateLimit-Reset` of responses outside every window. */
      now: () => clock.now(),
    },
    /** `GET /v1/agents/{agent_id}/logs`. */
    logs: (caller: Caller, agentId: string, query: LogsQuery = {}) => listLogs(context, caller, agentId, query),

    /**
     * Opens the ports and resumes work a previous process left: agents still initializing are
     * initialized, agents left deleting are removed. Idempotent.
     */
    async start(): Promise<void> {
      if (started) return;
      await context.store.init();
      await context.index.init();
      await context.blobs.init?.();
      started = true;
      for (const agent of await context.store.agents.listByStatus({ statuses: ['initializing', 'deleting'] })) {
        if (agent.status === 'initializing') context.background.run('agent initialize', { agentId: agent.id }, () => agents.initialize(agent));
        else context.background.run('agent delete', { agentId: agent.id }, () => agents.destroy(agent));
      }
      await scheduler.start();
      await sources.resumeConversions();
    },

    /** Waits for background work, then closes the ports. */
    async stop(): Promise<void> {
      await scheduler.stop();
      await context.background.drain();
      if (started) {
        await context.index.close();
        await context.blobs.close?.();
        await context.ocr?.close?.();
        await context.store.close();
      }
      started = false;
    },

    /** Resolves when background work and learning started so far have settled (tests). */
    async idle(): Promise<void> {
      await context.background.drain();
      await scheduler.idle();
    },
  };
}

export type MemoryService = ReturnType<typeof createMemoryService>;
