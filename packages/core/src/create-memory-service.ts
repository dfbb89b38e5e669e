import { createAgents } from './agents/agents.js';
import { authenticate, type AuthenticateRequest } from './auth/authenticate.js';
import type { Caller } from './auth/caller.js';
import { describeSession } from './auth/session.js';
import { createIdGenerator, type IdGenerator } from './ids/index.js';
import { DEFAULT_LIMITS, type Limits } from './limits/index.js';
import { listLogs } from './logs/logs.js';
import { createAdmin } from './organizations/admin.js';
import { systemClock, type Clock } from './ports/clock.js';
import type { Store } from './ports/store.js';
import { BackgroundTasks } from './service/background.js';
import type { ServiceContext } from './service/context.js';
import { stderrLogger, type Logger } from './service/logger.js';
import { createThreads } from './threads/threads.js';

/** Options of `createMemoryService`. */
export type MemoryServiceOptions = {
  /** Transactional state. */
  store: Store;
  /** @default systemClock */
  clock?: Clock;
  /** @default prefixed monotonic ULIDs driven by `clock` */
  ids?: IdGenerator;
  /** Defaults under every organization's overrides. @default DEFAULT_LIMITS (the spec's numbers) */
  limits?: Partial<Limits>;
  /** @default stderrLogger (warnings and errors as JSON lines) */
  logger?: Logger;
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
  const context: ServiceContext = {
    store: options.store,
    clock,
    ids: options.ids ?? createIdGenerator(() => clock.now()),
    defaultLimits: { ...DEFAULT_LIMITS, ...options.limits },
    logger,
    background: new BackgroundTasks(logger),
    nowIso: () => new Date(clock.now()).toISOString(),
  };

  const agents = createAgents(context, {
    initialize: async () => ({ resumedFromTurn: 0 }),
    destroy: async () => {},
  });
  const threads = createThreads(context, { destroy: async () => {} });
  let started = false;

  return {
    admin: createAdmin(context),
    agents: {
      create: agents.create,
      list: agents.list,
      get: agents.get,
      update: agents.update,
      delete: agents.delete,
    },
    threads: { create: threads.create, get: threads.get, delete: threads.delete },

    /** Resolves the caller of a request; throws 401/400 per the spec's Authentication rules. */
    authenticate: (request: AuthenticateRequest): Promise<Caller> => authenticate(context, request),
    /** `GET /v1/session`. */
    session: async (caller: Caller) => describeSession(caller),
    /** `GET /v1/agents/{agent_id}/logs`. */
    logs: (caller: Caller, agentId: string, query: unknown) => listLogs(context, caller, agentId, query),

    /**
     * Opens the ports and resumes work a previous process left: agents still initializing are
     * initialized, agents left deleting are removed. Idempotent.
     */
    async start(): Promise<void> {
      if (started) return;
      await context.store.init();
      started = true;
      for (const agent of await context.store.agents.listByStatus({ statuses: ['initializing', 'deleting'] })) {
        if (agent.status === 'initializing') context.background.run('agent initialize', { agentId: agent.id }, () => agents.initialize(agent));
        else context.background.run('agent delete', { agentId: agent.id }, () => agents.destroy(agent));
      }
    },

    /** Waits for background work, then closes the ports. */
    async stop(): Promise<void> {
      await context.background.drain();
      if (started) await context.store.close();
      started = false;
    },

    /** Resolves when background work started so far has settled (tests, graceful shutdown). */
    idle: () => context.background.drain(),
  };
}

export type MemoryService = ReturnType<typeof createMemoryService>;
