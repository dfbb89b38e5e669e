import { LRUCache } from 'lru-cache';
import type { AgentRecord, BillingAccountRecord, JobRecord, KeyRecord, OrganizationRecord, Store, StoreAreas, ThreadRecord } from '../ports/store/index.js';

/** Options of `cachingStore`. */
export type CachingStoreOptions = {
  /**
   * Most records kept per kind (API keys, organizations, agents, threads, billing accounts,
   * observation jobs), least recently used evicted.
   * @default 10000
   */
  maxEntries?: number;
};

type Cached = KeyRecord | OrganizationRecord | AgentRecord | ThreadRecord | BillingAccountRecord | JobRecord;
/**
 * A record known not to exist: a billing account (most organizations never configure billing), or
 * a thread's unreported not-learned records (a chat asks after every answer; there are rarely any).
 */
const NONE = Symbol('none');

/**
 * Keeps the records every authenticated request reads (its API key, its organization and, on agent
 * routes, the agent; on thread routes the thread; on answering routes the organization's billing
 * account) in process, so a request on a store only this process writes does not go to the
 * database for them.
 *
 * Exact because every write to those records goes through this object: a key insert or revocation,
 * an organization's limits, an agent's insert, update or delete (which also drops its threads), a
 * thread's insert, update or delete, and every ledger write of an organization (configure, append,
 * settle: the account's balance) drop the cached record before the write and again after it; that a
 * thread has no unreported not-learned records is remembered until one is inserted
 * (inside a transaction: after the commit), and a read that raced with a write is not cached. Revocation, expiry (checked against the clock on every request), limit
 * changes and agent status changes therefore take effect on the very next request. Only for a
 * store no other process writes (`capabilities.shared === false`; `createMemoryService` applies it
 * then); misses are not cached, so unknown ids cannot crowd out real ones, except a missing billing
 * account (the organization is an authenticated caller's). Records are copied in and out, as the
 * port requires.
 *
 * Observation jobs too, by id: a client polls `.../status` while the job learns, and learning reads
 * its job between batches (a cancel check); with the embedded default's database in its own thread
 * each such read would cross threads and queue behind learning's writes. Every write to a job row
 * goes through `jobs` (insert, update, appendTurns, delete by id; cancelForThread
 * for a thread's jobs), `turns.setStates` (a job's count of turns read) or removes it by cascade (an agent's or a thread's delete): the first kind
 * drops the job, the others every cached job (rare operations).
 */
export function cachingStore(store: Store, options: CachingStoreOptions = {}): Store {
  const max = options.maxEntries ?? 10_000;
  const cache = new LRUCache<string, Cached | typeof NONE>({ max: max * 7 });
  // Bumped by every invalidation: a read that started before one is not cached.
  let epoch = 0;

  const invalidate = (ids: Iterable<string>) => {
    epoch++;
    for (const id of ids) cache.delete(id);
  };
  async function cached<T extends Cached>(id: string, read: () => Promise<T | null>, cacheMissing = false): Promise<T | null> {
    const hit = cache.get(id);
    if (hit === NONE) return null;
    if (hit !== undefined) return copyRecord(hit) as T;
    const started = epoch;
    const record = await read();
    if (started === epoch && (record !== null || cacheMissing)) cache.set(id, record === null ? NONE : copyRecord(record));
    return record;
  }
  /** Drops every cached job (a thread's jobs cancelled, an agent or thread deleted with its jobs). */
  const invalidateJobs = () => invalidate([...cache.keys()].filter((id) => id.startsWith(JOB_PREFIX)));
  /** Drops every cached thread of an agent (its deletion removes them). */
  const invalidateThreadsOf = (agent: string) => invalidate([...cache.keys()].filter((id) => id.startsWith(threadPrefix(agent))));

  const keyId = (id: string) => `key:${id}`;
  const orgId = (id: string) => `org:${id}`;
  const agentId = (organizationId: string, id: string) => `agent:${organizationId}:${id}`;
  const threadPrefix = (agent: string) => `thread:${agent}:`;
  const threadId = (agent: string, id: string) => `${threadPrefix(agent)}${id}`;
  const accountId = (organizationId: string) => `billing:${organizationId}`;
  const unreportedId = (thread: string) => `unreported:${thread}`;
  const jobId = (id: string) => `${JOB_PREFIX}${id}`;

  /**
   * The areas with the three record kinds cached. Inside a transaction (`touched` set) reads go to
   * the store (uncommitted rows are never cached) and touched ids are dropped again after commit.
   * `areas` is read at each call: adapters may bind their areas only in `init()`.
   */
  function wrap(areas: () => StoreAreas, touched: Set<string> | null): StoreAreas {
    async function write<T>(ids: string[], run: () => Promise<T>): Promise<T> {
      invalidate(ids);
      for (const id of ids) touched?.add(id);
      try {
        return await run();
      } finally {
        invalidate(ids);
      }
    }
    const organizations: StoreAreas['organizations'] = {
      insert: (request) => write([orgId(request.organization.id)], () => areas().organizations.insert(request)),
      get: (request) => (touched ? areas().organizations.get(request) : cached(orgId(request.id), () => areas().organizations.get(request))),
      list: () => areas().organizations.list(),
      updateLimits: (request) => write([orgId(request.id)], () => areas().organizations.updateLimits(request)),
    };
    const keys: StoreAreas['keys'] = {
      insert: (request) => write([keyId(request.key.keyId)], () => areas().keys.insert(request)),
      get: (request) => (touched ? areas().keys.get(request) : cached(keyId(request.keyId), () => areas().keys.get(request))),
      // From the two cached kinds: no round trip at all once both are held.
      getWithOrganization: async (request) => {
        const key = await keys.get(request);
        const organization = key ? await organizations.get({ id: key.organizationId }) : null;
        return key && organization ? { key, organization } : null;
      },
      list: (request) => areas().keys.list(request),
      revoke: (request) => write([keyId(request.keyId)], () => areas().keys.revoke(request)),
    };
    /** A write that may change or remove any job: every cached job dropped before, after, and after the commit. */
    async function writeJobs<T>(run: () => Promise<T>): Promise<T> {
      invalidateJobs();
      touched?.add(ALL_JOBS);
      try {
        return await run();
      } finally {
        invalidateJobs();
      }
    }
    const agents: StoreAreas['agents'] = {
      insert: (request) => write([agentId(request.agent.organizationId, request.agent.id)], () => areas().agents.insert(request)),
      get: (request) =>
        touched
          ? areas().agents.get(request)
          : cached(agentId(request.organizationId, request.agentId), () => areas().agents.get(request)),
      list: (request) => areas().agents.list(request),
      listByStatus: (request) => areas().agents.listByStatus(request),
      update: (request) => write([agentId(request.organizationId, request.agentId)], () => areas().agents.update(request)),
      delete: async (request) => {
        invalidateThreadsOf(request.agentId);
        try {
          return await writeJobs(() => write([agentId(request.organizationId, request.agentId)], () => areas().agents.delete(request)));
        } finally {
          invalidateThreadsOf(request.agentId);
        }
      },
    };
    const threads: StoreAreas['threads'] = {
      insert: (request) => write([threadId(request.thread.agentId, request.thread.id)], () => areas().threads.insert(request)),
      get: (request) =>
        touched ? areas().threads.get(request) : cached(threadId(request.agentId, request.threadId), () => areas().threads.get(request)),
      list: (request) => areas().threads.list(request),
      listByStatus: (request) => areas().threads.listByStatus(request),
      update: (request) => write([threadId(request.agentId, request.threadId)], () => areas().threads.update(request)),
      delete: (request) => writeJobs(() => write([threadId(request.agentId, request.threadId)], () => areas().threads.delete(request))),
    };
    const area = () => areas().jobs;
    const jobs: StoreAreas['jobs'] = {
      ...passThrough(area, JOB_READS),
      insert: (request) => write([jobId(request.job.id)], () => area().insert(request)),
      get: async (request) => {
        if (touched) return area().get(request);
        const job = await cached(jobId(request.jobId), () => area().get(request));
        // Cached by id: another agent's job is not this agent's, as the store answers.
        return job && job.agentId === request.agentId ? job : null;
      },
      update: (request) => write([jobId(request.jobId)], () => area().update(request)),
      appendTurns: (request) => write([jobId(request.jobId)], () => area().appendTurns(request)),
      delete: (request) => write(request.jobIds.map(jobId), () => area().delete(request)),
      cancelForThread: (request) => writeJobs(() => area().cancelForThread(request)),
    };
    // A turn's new state changes its job's `turnsProcessed`: the cached job is dropped.
    const turns: StoreAreas['turns'] = {
      ...passThrough(() => areas().turns, TURN_READS),
      setStates: (request) => write([jobId(request.jobId)], () => areas().turns.setStates(request)),
    };
    const ledger: StoreAreas['ledger'] = {
      getAccount: (request) =>
        touched ? areas().ledger.getAccount(request) : cached(accountId(request.organizationId), () => areas().ledger.getAccount(request), true),
      configure: (request) => write([accountId(request.organizationId)], () => areas().ledger.configure(request)),
      append: (request) => write([accountId(request.organizationId)], () => areas().ledger.append(request)),
      settle: (request) => write([accountId(request.organizationId)], () => areas().ledger.settle(request)),
      listForJob: (request) => areas().ledger.listForJob(request),
      list: (request) => areas().ledger.list(request),
    };
    const notLearned: StoreAreas['notLearned'] = {
      insert: (request) => write([unreportedId(request.record.threadId)], () => areas().notLearned.insert(request)),
      list: (request) => areas().notLearned.list(request),
      // "None unreported" is remembered until a not-learned record of the thread is inserted.
      takeUnreported: async (request) => {
        const id = unreportedId(request.threadId);
        if (touched) return areas().notLearned.takeUnreported(request);
        if (cache.get(id) === NONE) return [];
        const started = epoch;
        const records = await areas().notLearned.takeUnreported(request);
        if (records.length === 0 && started === epoch) cache.set(id, NONE);
        return records;
      },
    };
    const wrapped = { organizations, keys, agents, threads, ledger, notLearned, jobs, turns } as Record<string, unknown>;
    for (const name of PASSED_THROUGH) Object.defineProperty(wrapped, name, { enumerable: true, get: () => areas()[name] });
    return wrapped as StoreAreas;
  }

  const outside = wrap(() => store, null);
  const methods = {
    specificationVersion: store.specificationVersion,
    id: store.id,
    capabilities: store.capabilities,
    init: () => store.init(),
    async close() {
      cache.clear();
      await store.close();
    },
    transaction<T>(fn: (areas: StoreAreas) => Promise<T>): Promise<T> {
      const touched = new Set<string>();
      return store.transaction((tx) => fn(wrap(() => tx, touched))).finally(() => {
        if (touched.has(ALL_JOBS)) invalidateJobs();
        if (touched.size > 0) invalidate(touched);
      });
    },
  };
  // The areas keep their getters (an adapter's areas may exist only after init()).
  return Object.defineProperties(methods, Object.getOwnPropertyDescriptors(outside)) as unknown as Store;
}

/** The areas `cachingStore` hands through untouched. */
const PASSED_THROUGH = ['receipts', 'repoints', 'messages', 'logs', 'leases', 'rateLimits', 'uploads', 'idempotency', 'images', 'erasures', 'webhooks', 'memoryMarks', 'maintenanceRuns'] as const satisfies readonly (keyof StoreAreas)[];

const JOB_PREFIX = 'job:';
/** In a transaction's touched ids: it changed jobs not known by id; every cached job is dropped after the commit. */
const ALL_JOBS = `${JOB_PREFIX}*`;
/** Methods of `jobs` that only read. */
const JOB_READS = ['nextForAgent', 'countAhead', 'listForThread', 'agentsWithUnfinishedJobs', 'allForThread', 'listUnfinished'] as const satisfies readonly (keyof StoreAreas['jobs'])[];
/** Methods of `turns` that only read. */
const TURN_READS = ['list', 'get', 'counts', 'countCommitted'] as const satisfies readonly (keyof StoreAreas['turns'])[];

/** The named methods of an area, each calling the area as it is at the call. */
function passThrough<A extends object, K extends keyof A>(area: () => A, names: readonly K[]): Pick<A, K> {
  const methods = {} as Pick<A, K>;
  for (const name of names) (methods as Record<K, unknown>)[name] = (...args: unknown[]) => (area()[name] as (...a: unknown[]) => unknown)(...args);
  return methods;
}

/**
 * A deep copy of a record (plain objects, arrays and primitives, as every cached kind is), several
 * times cheaper than `structuredClone` for these small records; anything else (a Date, a typed
 * array) is left to `structuredClone`.
 */
export function copyRecord<T>(value: T): T {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(copyRecord) as T;
  const prototype = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return structuredClone(value);
  const copy: Record<string, unknown> = {};
  for (const name of Object.keys(value)) copy[name] = copyRecord((value as Record<string, unknown>)[name]);
  return copy as T;
}
