import { inProcessRateLimits } from '../limits/in-process-rate-limits.js';
import { inMemoryJobs, inMemoryLearning } from './in-memory-jobs.js';
import { emptyLedgerState, inMemoryLedger, type LedgerState } from './in-memory-ledger.js';
import { deleteIngests, emptyDocumentsState, inMemoryDocumentAreas, type DocumentsState } from './in-memory-documents.js';
import type { AgentRecord, JobRecord, KeyRecord, LearningRecord, LeaseRecord, LogRecord, MessageRecord, OrganizationRecord, Store, StoreAreas, ThreadRecord, TurnRecord } from '../ports/store/index.js';
import type { RateLimitStore } from '../ports/store/index.js';

/** Everything the in-memory store holds; cloned for transaction rollback. */
type State = {
  organizations: Map<string, OrganizationRecord>;
  keys: Map<string, KeyRecord>;
  agents: Map<string, AgentRecord>;
  threads: Map<string, ThreadRecord>;
  messages: Map<string, (MessageRecord & { seq: number })[]>;
  logs: LogRecord[];
  leases: Map<string, LeaseRecord>;
  jobs: Map<string, JobRecord>;
  turns: Map<string, TurnRecord[]>;
  learning: LearningRecord[];
  sequence: number;
  ledger: LedgerState;
  documents: DocumentsState;
};

function emptyState(): State {
  return {
    organizations: new Map(),
    keys: new Map(),
    agents: new Map(),
    threads: new Map(),
    messages: new Map(),
    logs: [],
    leases: new Map(),
    jobs: new Map(),
    turns: new Map(),
    learning: [],
    sequence: 0,
    ledger: emptyLedgerState(),
    documents: emptyDocumentsState(),
  };
}

const copy = <T>(value: T): T => structuredClone(value);
const isLive = (status: string) => status !== 'deleting' && status !== 'deleted';

function deleteJobs(state: State, matches: (job: JobRecord) => boolean): void {
  for (const [id, job] of state.jobs) {
    if (!matches(job)) continue;
    state.jobs.delete(id);
    state.turns.delete(id);
  }
}
const newestFirst = (a: { createdAt: string; id: string }, b: { createdAt: string; id: string }) =>
  a.createdAt === b.createdAt ? (a.id < b.id ? 1 : a.id > b.id ? -1 : 0) : a.createdAt < b.createdAt ? 1 : -1;

/** Serializes transactions with every other operation, FIFO. */
class Mutex {
  #tail: Promise<void> = Promise.resolve();
  lock<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#tail.then(fn);
    this.#tail = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }
}

function areas(get: () => State, rateLimits: RateLimitStore): StoreAreas {
  return {
    ledger: inMemoryLedger(() => get().ledger),
    rateLimits,
    ...inMemoryDocumentAreas(() => get().documents),
    organizations: {
      async insert({ organization }) {
        get().organizations.set(organization.id, copy(organization));
      },
      async get({ id }) {
        const record = get().organizations.get(id);
        return record ? copy(record) : null;
      },
      async list() {
        return [...get().organizations.values()].map(copy);
      },
      async updateLimits({ id, limits }) {
        const record = get().organizations.get(id);
        if (!record) return null;
        record.limits = copy(limits);
        return copy(record);
      },
    },
    keys: {
      async insert({ key, maxLive, now }) {
        const state = get();
        const live = [...state.keys.values()].filter(
          (k) => k.organizationId === key.organizationId && k.revokedAt === null && k.expiresAt > now,
        ).length;
        if (live >= maxLive) return false;
        state.keys.set(key.keyId, copy(key));
        return true;
      },
      async get({ keyId }) {
        const record = get().keys.get(keyId);
        return record ? copy(record) : null;
      },
      async getWithOrganization({ keyId }) {
        const key = get().keys.get(keyId);
        const organization = key ? get().organizations.get(key.organizationId) : undefined;
        return key && organization ? { key: copy(key), organization: copy(organization) } : null;
      },
      async list({ organizationId }) {
        return [...get().keys.values()]
          .filter((k) => k.organizationId === organizationId)
          .sort((a, b) => (a.createdAt === b.createdAt ? b.keyId.localeCompare(a.keyId) : a.createdAt < b.createdAt ? 1 : -1))
          .map(copy);
      },
      async revoke({ keyId, at }) {
        const record = get().keys.get(keyId);
        if (!record) return null;
        record.revokedAt ??= at;
        return copy(record);
      },
    },
    agents: {
      async insert({ agent, maxLive }) {
        const state = get();
        const live = [...state.agents.values()].filter((a) => a.organizationId === agent.organizationId && isLive(a.status)).length;
        if (live >= maxLive) return false;
        state.agents.set(agent.id, copy(agent));
        return true;
      },
      async get({ organizationId, agentId }) {
        const record = get().agents.get(agentId);
        return record && record.organizationId === organizationId ? copy(record) : null;
      },
      async list({ organizationId }) {
        return [...get().agents.values()]
          .filter((a) => a.organizationId === organizationId && isLive(a.status))
          .sort(newestFirst)
          .map(copy);
      },
      async listByStatus({ statuses }) {
        return [...get().agents.values()].filter((a) => statuses.includes(a.status)).map(copy);
      },
      async update({ organizationId, agentId, patch, updatedAt }) {
        const record = get().agents.get(agentId);
        if (!record || record.organizationId !== organizationId) return null;
        Object.assign(record, copy(patch), { updatedAt });
        return copy(record);
      },
      async delete({ organizationId, agentId }) {
        const state = get();
        const record = state.agents.get(agentId);
        if (!record || record.organizationId !== organizationId) return;
        state.agents.delete(agentId);
        for (const [id, thread] of state.threads) {
          if (thread.agentId !== agentId) continue;
          state.threads.delete(id);
          state.messages.delete(id);
        }
        state.logs = state.logs.filter((entry) => entry.agentId !== agentId);
        deleteJobs(state, (job) => job.agentId === agentId);
        state.learning = state.learning.filter((record) => record.agentId !== agentId);
        deleteIngests(state.documents, (record) => record.agentId === agentId);
      },
    },
    threads: {
      async insert({ thread }) {
        get().threads.set(thread.id, copy(thread));
      },
      async get({ agentId, threadId }) {
        const record = get().threads.get(threadId);
        return record && record.agentId === agentId ? copy(record) : null;
      },
      async list({ agentId, endUserId }) {
        return [...get().threads.values()]
          .filter((t) => t.agentId === agentId && isLive(t.status) && (endUserId === undefined || t.endUserId === endUserId))
          .sort(newestFirst)
          .map(copy);
      },
      async listByStatus({ statuses }) {
        return [...get().threads.values()].filter((t) => statuses.includes(t.status)).map(copy);
      },
      async update({ agentId, threadId, patch, updatedAt }) {
        const record = get().threads.get(threadId);
        if (!record || record.agentId !== agentId) return null;
        Object.assign(record, copy(patch), { updatedAt });
        return copy(record);
      },
      async delete({ agentId, threadId }) {
        const state = get();
        const record = state.threads.get(threadId);
        if (!record || record.agentId !== agentId) return;
        state.threads.delete(threadId);
        state.messages.delete(threadId);
        deleteJobs(state, (job) => job.threadId === threadId);
        state.learning = state.learning.filter((record) => record.threadId !== threadId);
        deleteIngests(state.documents, (record) => record.threadId === threadId);
      },
    },
    messages: {
      async append({ messages, logEntries = [] }) {
        const state = get();
        for (const message of messages) {
          const list = state.messages.get(message.threadId) ?? [];
          list.push({ ...copy(message), seq: ++state.sequence });
          state.messages.set(message.threadId, list);
        }
        for (const entry of logEntries) state.logs.push({ ...copy(entry), logId: ++state.sequence });
      },
      async listRecent({ threadId, limit }) {
        const list = get().messages.get(threadId) ?? [];
        return list.slice(Math.max(0, list.length - limit)).map(({ seq: _seq, ...message }) => copy(message));
      },
    },
    logs: {
      async append({ entries }) {
        const state = get();
        return entries.map((entry) => {
          const logId = ++state.sequence;
          state.logs.push({ ...copy(entry), logId });
          return logId;
        });
      },
      async list({ agentId, limit, beforeLogId }) {
        const result: LogRecord[] = [];
        const logs = get().logs;
        for (let i = logs.length - 1; i >= 0 && result.length < limit; i--) {
          const entry = logs[i]!;
          if (entry.agentId === agentId && (beforeLogId === undefined || entry.logId < beforeLogId)) result.push(copy(entry));
        }
        return result;
      },
    },
    leases: {
      async acquire({ name, holder, ttlMs, now }) {
        const leases = get().leases;
        const current = leases.get(name);
        if (current && current.holder !== holder && current.expiresAt > now) return false;
        leases.set(name, { name, holder, expiresAt: now + ttlMs });
        return true;
      },
      async renew({ name, holder, ttlMs, now }) {
        const leases = get().leases;
        const current = leases.get(name);
        if (!current || current.holder !== holder) return false;
        current.expiresAt = now + ttlMs;
        return true;
      },
      async release({ name, holder }) {
        const leases = get().leases;
        if (leases.get(name)?.holder === holder) leases.delete(name);
      },
      async get({ name }) {
        const record = get().leases.get(name);
        return record ? copy(record) : null;
      },
    },
    jobs: inMemoryJobs(get),
    learning: inMemoryLearning(get),
  };
}

/** Wraps every method of every area so it runs under the mutex. */
function locked(inner: StoreAreas, mutex: Mutex): StoreAreas {
  const result: Record<string, Record<string, unknown>> = {};
  for (const [areaName, area] of Object.entries(inner) as [string, Record<string, (...args: unknown[]) => Promise<unknown>>][]) {
    result[areaName] = Object.fromEntries(
      Object.entries(area).map(([method, fn]) => [method, (...args: unknown[]) => mutex.lock(() => fn(...args))]),
    );
  }
  return result as unknown as StoreAreas;
}

/**
 * The reference `Store`: everything in process memory, nothing persisted. Operations are
 * serialized; a transaction runs alone and is rolled back (from a snapshot) when it rejects.
 *
 * @example
 * const service = createMemoryService({ store: inMemoryStore() });
 */
export function inMemoryStore(): Store {
  let state = emptyState();
  const mutex = new Mutex();
  const direct = areas(() => state, inProcessRateLimits());
  return {
    specificationVersion: 'v1',
    id: 'in-memory',
    capabilities: { persistent: false, shared: false },
    async init() {},
    async close() {},
    ...locked(direct, mutex),
    transaction(fn) {
      return mutex.lock(async () => {
        const snapshot = structuredClone(state);
        try {
          return await fn(direct);
        } catch (error) {
          state = snapshot;
          throw error;
        }
      });
    },
  };
}
