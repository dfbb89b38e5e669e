import { randomUUID } from 'node:crypto';
import { createAgents } from './agents/agents.js';
import { createChat } from './chat/chat.js';
import { extractiveLanguageModel } from './chat/extractive-language-model.js';
import { hashedNgramEmbedder } from './embedding/hashed-ngram-embedder.js';
import { inMemoryBlobs } from './in-memory/in-memory-blobs.js';
import { inMemoryMemoryIndex } from './in-memory/in-memory-memory-index.js';
import { defaultMemoryWriter } from './memory/default-memory-writer.js';
import { LearningScheduler } from './observations/learning-scheduler.js';
import { createObservations } from './observations/observations.js';
import { createJobInsert } from './observations/insert-job.js';
import { createAccount } from './service/account.js';
import type { BlobStore } from './ports/blob-store.js';
import type { Embedder } from './ports/embedder.js';
import type { LanguageModel } from './ports/language-model.js';
import type { MemoryIndex } from './ports/memory-index.js';
import type { MemoryWriter } from './ports/memory-writer.js';
import type { Ocr } from './ports/ocr.js';
import type { DocumentConverter } from './ports/document-converter.js';
import { textDocumentConverter } from './conversion/text-document-converter.js';
import { cachingStore } from './store/caching-store.js';
import { availableStore } from './store/available-store.js';
import { isServiceError } from './errors/service-error.js';
import { createIdGenerator, type IdGenerator } from './ids/index.js';
import { DEFAULT_LIMITS, type Limits } from './limits/index.js';
import { createMemoryAdmin } from './organizations/memory-admin.js';
import { createExportJobs } from './export/export-jobs.js';
import { systemClock, type Clock } from './ports/clock.js';
import type { RateLimitStore, Store } from './ports/store/index.js';
import { BackgroundTasks } from './service/background.js';
import { noTelemetry, observedEmbedder, observedModel, type TelemetryObserver } from './service/telemetry.js';
import type { ServiceContext } from './service/context.js';
import { checkRetrievalOptions, type RetrievalOptions } from './retrieval/retrieve.js';
import { checkRedactionOptions, type RedactionOptions } from './policy/redaction.js';
import { stderrLogger, type Logger } from './service/logger.js';
import { createThreads } from './threads/threads.js';
import { createMemories } from './memories/memories.js';
import { describeError } from './service/logger.js';
import { DEFAULT_RESTORE_WINDOW_DAYS, sweepMemories as sweepMemoriesOf, type MemoryLifecycleOptions } from './memories/lifecycle.js';
import { createErasures } from './erasures/erasures.js';
import { createReclaimer } from './erasures/erase-work.js';
import { createImages } from './images/images.js';
import { createSources, type DocumentOptions } from './sources/sources.js';
import { createCredits } from './credits/credits.js';
import type { Prices } from './credits/pricing.js';
import { inProcessRateLimits } from './limits/in-process-rate-limits.js';
import { createRateLimiter } from './limits/rate-limiter.js';
import type { MemoryService } from './memory-service.js';
import { createWebhooks } from './webhooks/webhooks.js';
import type { WebhookOptions } from './webhooks/options.js';
import { Reembedder } from './reembed/reembedder.js';
import { createMaintenance, DEFAULT_MAINTENANCE_MAX_SHARE } from './maintenance/maintenance.js';
import { createReview } from './review/review.js';
import { maintainIdleAgents, resolveSchedule, scheduledPasses, type MaintenanceScheduleOptions } from './maintenance/schedule.js';

export type { MemoryService } from './memory-service.js';

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
  /**
   * Reads uploaded files (`observe-file`) into blocks. The built-in one reads Markdown, text, source
   * code, CSV and JSON only, and refuses PDF, Word and HTML with `unsupported_document`; pass
   * `documentConverter()` from `@memory-agents/documents` to read those (the server does).
   * @default textDocumentConverter()
   */
  documentConverter?: DocumentConverter;
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
  /**
   * Optional retrieval signals and the weights of the fused ones (`weights: { speaker: 0 }` switches
   * the speaker cue off, to measure its share). An unknown signal or a weight that is not a finite
   * number >= 0 throws here. @default the measured defaults (RETRIEVAL_WEIGHTS), WordNet off
   */
  retrieval?: RetrievalOptions;
  /**
   * Kinds of personal data of the operator's own an agent's `extraction_policy.redact` may name
   * beside the built-in ones (`card_number`, `email`, `iban`, `phone`): `{ patterns: {
   * national_id_de: /\bL[0-9A-Z]{8}\b/ } }`. Each a trusted regular expression (never taken from an
   * API caller), applied to every turn before it is stored. A bad name throws here.
   * @default no kinds of the operator's own
   */
  redaction?: RedactionOptions;
  /**
   * Memory lifecycle (issue 42): `restoreWindowDays` a forgotten memory can be restored before it is
   * erased (> 0, default 7); `sweepIntervalMs` between sweeps that erase memories whose window ended
   * (default 10 minutes; only with background work on). A value out of range throws here.
   */
  memoryLifecycle?: MemoryLifecycleOptions;
  /**
   * Maintenance runs (issue 43): `maxShare` is the largest `max_share` a run may ask for (the
   * guard's ceiling: the share of an agent's current memories one application may take out of
   * current search), in (0, 1], default 0.5. `schedule` runs maintenance when an agent is idle
   * (`MaintenanceScheduleOptions`: idle minutes, kinds, runs per day, changes per run), applied only
   * if the guard allows; off when absent. A value out of range throws here.
   */
  maintenance?: { maxShare?: number; schedule?: MaintenanceScheduleOptions };
  /**
   * Whether `start()` starts background work: the learning workers (this instance's and, through
   * the ingestion leases, other processes' unfinished jobs), agents left initializing or deleting,
   * deferred document conversions. `false` for a short-lived process that only administers a store
   * servers run on (the CLI's admin commands): a job it took would be abandoned when it exits, and
   * a server would find it interrupted and resume it. Jobs such an instance queues wait for a
   * process that runs the workers.
   * @default true
   */
  backgroundWork?: boolean;
  /**
   * Receives counts and durations (model calls, turns learned, credits) for metrics; the server's
   * `--metrics` turns them into Prometheus series. Called synchronously: keep it cheap. Traces
   * need no option: spans go through `@opentelemetry/api` to whatever SDK the application registers.
   * @default none
   */
  telemetry?: TelemetryObserver;
  /**
   * Webhooks (an opt-in extension): per-organization endpoints told when observations commit or
   * fail, uploads finish and erasures finish; signed, retried, ordered per thread, delivered by a
   * background worker from the store. Receivers on private, loopback or link-local addresses are
   * refused unless `allowPrivate` or `allowedHosts` say otherwise.
   * @default undefined (off: `service.webhooks` answers 503 `service_not_configured`)
   */
  webhooks?: WebhookOptions;
  /**
   * Whether `start()` (with background work) re-embeds the memory index when it was built by
   * another embedder than `embedder` (issue 39): every record in batches, learning waiting and
   * search on full text until the index switches. `false` keeps the index as it is (learning then
   * fails `embedder_mismatch`); `service.reembedding.run()` still re-embeds on demand.
   * @default true
   */
  reembedInBackground?: boolean;
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
 * const agent = await service.agents.create({ caller, body: { agent_config: { role: 'assistant', objective: 'remember' } } });
 */
export function createMemoryService(options: MemoryServiceOptions): MemoryService {
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? stderrLogger;
  const instanceId = `worker_${randomUUID()}`;
  // Limits hold across processes only when the store is shared; otherwise an in-process limiter
  // keeps the embedded default free of a database round trip per request.
  // (Bound late: an adapter's areas exist only once `start()` has run `store.init()`.)
  // A database that went away answers 503 naming the part, on every route, from one place.
  const available = availableStore(options.store);
  const rateLimitStore: RateLimitStore = options.store.capabilities.shared
    ? {
        hit: (request) => available.rateLimits.hit(request),
        acquire: (request) => available.rateLimits.acquire(request),
        release: (request) => available.rateLimits.release(request),
      }
    : inProcessRateLimits();
  // Keys, organizations and agents every request reads stay in process when no other process
  // writes the store (exact invalidation: every write goes through this wrapper).
  const store = (options.cacheRecords ?? (options.store.capabilities.persistent && !options.store.capabilities.shared)) ? cachingStore(available) : available;
  const telemetry = options.telemetry ?? noTelemetry;
  const lifecycleOptions = checkLifecycleOptions(options.memoryLifecycle);
  const baseContext: Omit<ServiceContext, 'webhooks'> = {
    store,
    index: options.index ?? inMemoryMemoryIndex(),
    blobs: options.blobs ?? inMemoryBlobs(),
    embedder: observedEmbedder(options.embedder ?? hashedNgramEmbedder(), telemetry),
    model: observedModel(options.model ?? extractiveLanguageModel(), telemetry),
    writer: options.writer ?? defaultMemoryWriter(),
    retrieval: checkRetrievalOptions(options.retrieval ?? {}),
    redactionPatterns: checkRedactionOptions(options.redaction),
    lifecycle: { restoreWindowMs: lifecycleOptions.restoreWindowDays * DAY_MS },
    ocr: options.ocr ?? null,
    converter: options.documentConverter ?? textDocumentConverter(),
    instanceId,
    clock,
    ids: options.ids ?? createIdGenerator(() => clock.now()),
    defaultLimits: { ...DEFAULT_LIMITS, ...options.limits },
    logger,
    background: new BackgroundTasks(logger),
    credits: createCredits({ store, clock, telemetry, ...(options.pricing ? { prices: options.pricing } : {}) }),
    telemetry,
    limiter: createRateLimiter(rateLimitStore, clock, instanceId),
    nowIso: () => new Date(clock.now()).toISOString(),
  };
  const webhooks = createWebhooks(baseContext, options.webhooks ?? null);
  const context: ServiceContext = { ...baseContext, webhooks: webhooks.emitter };

  // Learning waits while the index is re-embedded for another embedder; the switch wakes it.
  let reembedder: Reembedder | null = null;
  const scheduler = new LearningScheduler(context, () => reembedder?.learningPaused === true);
  reembedder = new Reembedder(context, () => void scheduler.sweep());
  const reembedding = reembedder;
  const insertJob = createJobInsert(context, (agentId) => scheduler.kick(agentId));
  const reclaimer = createReclaimer(context);
  const agents = createAgents(context, reclaimer);
  const threads = createThreads(context, reclaimer);
  const erasures = createErasures(context, reclaimer);
  const maintenanceShare = options.maintenance?.maxShare ?? DEFAULT_MAINTENANCE_MAX_SHARE;
  if (!(typeof maintenanceShare === 'number' && maintenanceShare > 0 && maintenanceShare <= 1)) throw new TypeError(`maintenance.maxShare must be a number above 0 and at most 1, got ${String(maintenanceShare)}`);
  const maintenance = createMaintenance(context, { maxShare: maintenanceShare });
  const schedule = options.maintenance?.schedule === undefined ? null : resolveSchedule(options.maintenance.schedule, maintenanceShare);
  const scheduled = scheduledPasses(context, async () => (schedule === null ? { planned: 0, applied: 0, refused: 0 } : maintainIdleAgents(context, maintenance, schedule)));
  let scheduleTimer: ReturnType<typeof setInterval> | null = null;
  const sources = createSources(context, (agentId) => scheduler.kick(agentId), options.documents);
  let started = false;
  let sweepTimer: ReturnType<typeof setInterval> | null = null;
  let sweeping: Promise<unknown> = Promise.resolve();
  const sweepMemories = () => {
    const run = sweeping.then(() => sweepMemoriesOf(context, lifecycleOptions.expiredRetentionDays === null ? null : lifecycleOptions.expiredRetentionDays * DAY_MS));
    sweeping = run.catch(() => undefined);
    return run;
  };

  // Each member is documented on `MemoryService` (memory-service.ts); each area returns its part.
  return {
    admin: createMemoryAdmin(context),
    ...createExportJobs(context),
    agents: agents.agents,
    threads: threads.threads,
    memories: createMemories(context).memories,
    ...createObservations(context, insertJob),
    ...createChat(context, insertJob),
    observeFile: sources.observeFile,
    sources: sources.sources,
    images: createImages(context).images,
    erasures: erasures.erasures,
    maintenance: maintenance.maintenance,
    review: createReview(context),
    webhooks: webhooks.webhooks,
    ...createAccount(context),
    reembedding: {
      status: () => reembedding.status(),
      run: (runOptions) => reembedding.run(runOptions),
    },

    async start(): Promise<void> {
      if (started) return;
      await context.store.init();
      await context.index.init();
      await context.blobs.init?.();
      started = true;
      if (options.backgroundWork === false) return;
      await agents.resume();
      await threads.resume();
      await erasures.resume();
      await maintenance.resume();
      // Before the learning workers: a job must not learn under an embedder the index is leaving.
      if (options.reembedInBackground !== false) await reembedding.start();
      await scheduler.start();
      await sources.resumeConversions();
      webhooks.start();
      sweepTimer = setInterval(() => {
        sweepMemories().catch((error: unknown) => context.logger.warn('forgotten memories could not be erased; the next sweep tries again', { error: describeError(error) }));
      }, lifecycleOptions.sweepIntervalMs);
      sweepTimer.unref();
      if (schedule !== null) {
        scheduleTimer = setInterval(() => void scheduled.tick().catch(() => undefined), schedule.intervalMs);
        scheduleTimer.unref();
      }
    },

    async stop(): Promise<void> {
      if (sweepTimer) clearInterval(sweepTimer);
      sweepTimer = null;
      if (scheduleTimer) clearInterval(scheduleTimer);
      scheduleTimer = null;
      await sweeping;
      await scheduled.settled();
      await reembedding.stop();
      await scheduler.stop();
      await webhooks.stop();
      await context.background.drain();
      if (started) {
        await context.index.close();
        await context.blobs.close?.();
        await context.ocr?.close?.();
        await context.store.close();
      }
      started = false;
    },

    sweepMemories,
    maintainIdle: () => scheduled.tick(),

    async idle(): Promise<void> {
      await context.background.drain();
      await scheduler.idle();
      await webhooks.idle();
    },

    async ready({ timeoutMs = 5000 } = {}) {
      // An id no key has: a point read that reaches the database (misses are never cached).
      const [storeCheck, indexCheck] = await Promise.all([
        probe(() => context.store.keys.get({ keyId: 'readiness_probe' }), timeoutMs, 'The database (store) did not answer.'),
        probe(() => (context.index.ping ? context.index.ping() : context.index.embedder()), timeoutMs, 'The memory index did not answer.'),
      ]);
      // A re-embed in progress does not make the service unready (search works on full text).
      const progress = indexCheck.ok ? await reembedding.status().catch(() => null) : null;
      return { ready: storeCheck.ok && indexCheck.ok, store: storeCheck, index: indexCheck, ...(progress ? { reembedding: progress } : {}) };
    },
  };
}


const DAY_MS = 86_400_000;

/** The lifecycle options with their defaults; a value out of range throws (a programming error). */
function checkLifecycleOptions(options: MemoryLifecycleOptions = {}) {
  const restoreWindowDays = options.restoreWindowDays ?? DEFAULT_RESTORE_WINDOW_DAYS;
  const sweepIntervalMs = options.sweepIntervalMs ?? 600_000;
  if (!(Number.isFinite(restoreWindowDays) && restoreWindowDays > 0 && restoreWindowDays <= 3650)) {
    throw new TypeError(`memoryLifecycle.restoreWindowDays must be a number of days above 0 and at most 3650, got ${String(options.restoreWindowDays)}`);
  }
  if (!(Number.isInteger(sweepIntervalMs) && sweepIntervalMs >= 1000 && sweepIntervalMs <= 2_147_483_647)) {
    throw new TypeError(`memoryLifecycle.sweepIntervalMs must be a whole number of milliseconds from 1000, got ${String(options.sweepIntervalMs)}`);
  }
  const expiredRetentionDays = options.expiredRetentionDays ?? null;
  if (expiredRetentionDays !== null && !(Number.isFinite(expiredRetentionDays) && expiredRetentionDays >= 0 && expiredRetentionDays <= 36500)) {
    throw new TypeError(`memoryLifecycle.expiredRetentionDays must be a number of days from 0 to 36500, got ${String(options.expiredRetentionDays)}`);
  }
  return { restoreWindowDays, sweepIntervalMs, expiredRetentionDays };
}

/** Runs one readiness probe under a timeout: `{ ok: true }`, or `{ ok: false, error }` with a sentence. */
async function probe(check: () => Promise<unknown>, timeoutMs: number, fallback: string): Promise<{ ok: boolean; error?: string }> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = Symbol('late');
  const timeout = new Promise<typeof late>((resolve) => {
    timer = setTimeout(() => resolve(late), timeoutMs);
  });
  try {
    const outcome = await Promise.race([check().then(() => null), timeout]);
    return outcome === late ? { ok: false, error: `${fallback.replace(/\.$/, '')} within ${timeoutMs} ms.` } : { ok: true };
  } catch (error) {
    return { ok: false, error: isServiceError(error) && error.code === 'service_unavailable' ? error.message : fallback };
  } finally {
    clearTimeout(timer);
  }
}
