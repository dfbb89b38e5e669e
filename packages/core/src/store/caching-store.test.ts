import { describe, expect, it } from 'vitest';
import { inMemoryStore } from '../in-memory/store/index.js';
import type { AgentRecord, KeyRecord, Store } from '../ports/store/index.js';
import { describeStoreConformance } from '../testing/conformance/store/index.js';
import { job, thread as threadRecord, turns, world } from '../testing/conformance/store/records.js';
import { cachingStore, copyRecord } from './caching-store.js';

// The wrapper keeps the Store contract whole (copies in and out, transactions, every area).
describeStoreConformance({
  name: 'cachingStore over in-memory',
  create: async () => {
    const store = cachingStore(inMemoryStore());
    await store.init();
    return { store };
  },
});

/** An in-memory store that counts the reads of the cached kinds and can hold one read. */
function countingStore() {
  const inner = inMemoryStore();
  const reads = { keys: 0, organizations: 0, agents: 0 };
  let hold: Promise<void> | null = null;
  const counted: Store = Object.create(inner) as Store;
  Object.defineProperties(counted, {
    keys: {
      get: () => ({
        ...inner.keys,
        get: async (r: { keyId: string }) => {
          reads.keys++;
          const record = await inner.keys.get(r);
          await hold; // the row was read; the answer is held on its way back
          return record;
        },
      }),
    },
    organizations: { get: () => ({ ...inner.organizations, get: async (r: { id: string }) => (reads.organizations++, inner.organizations.get(r)) }) },
    agents: { get: () => ({ ...inner.agents, get: async (r: { organizationId: string; agentId: string }) => (reads.agents++, inner.agents.get(r)) }) },
  });
  return { inner, counted, reads, holdReads: (until: Promise<void> | null) => (hold = until) };
}

const key = (keyId: string): KeyRecord => ({ keyId, organizationId: 'org_1', secretHash: 'h', createdAt: '2026-01-01T00:00:00.000Z', expiresAt: '2027-01-01T00:00:00.000Z', revokedAt: null });
const agent = (id: string): AgentRecord => ({
  id,
  organizationId: 'org_1',
  status: 'ready',
  config: { role: 'r', objective: 'o' } as AgentRecord['config'],
  visibility: 'external',
  resumedFromTurn: 0,
  restoreFrom: null,
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
});

describe('cachingStore', () => {
  it('reads a key, an organization and an agent once, then answers from memory with copies', async () => {
    const { counted, reads } = countingStore();
    const store = cachingStore(counted);
    await store.init();
    await store.organizations.insert({ organization: { id: 'org_1', name: 'Acme', limits: {}, createdAt: '2026-01-01T00:00:00.000Z' } });
    await store.keys.insert({ key: key('k1'), maxLive: 5, now: '2026-01-01T00:00:00.000Z' });
    await store.agents.insert({ agent: agent('agent_1'), maxLive: 10 });
    for (let i = 0; i < 3; i++) {
      expect((await store.keys.get({ keyId: 'k1' }))?.organizationId).toBe('org_1');
      expect((await store.organizations.get({ id: 'org_1' }))?.name).toBe('Acme');
      expect((await store.agents.get({ organizationId: 'org_1', agentId: 'agent_1' }))?.status).toBe('ready');
    }
    expect(reads).toEqual({ keys: 1, organizations: 1, agents: 1 });
    const copy = (await store.organizations.get({ id: 'org_1' }))!;
    copy.name = 'mutated';
    copy.limits.maxAgents = 999;
    expect((await store.organizations.get({ id: 'org_1' }))?.name).toBe('Acme');
    expect((await store.organizations.get({ id: 'org_1' }))?.limits.maxAgents).toBeUndefined();
    // Misses are not cached: an unknown id goes to the store every time.
    await store.keys.get({ keyId: 'nope' });
    await store.keys.get({ keyId: 'nope' });
    expect(reads.keys).toBe(3);
  });

  it('sees a revocation, a limits change and agent updates and deletions on the very next read', async () => {
    const { counted } = countingStore();
    const store = cachingStore(counted);
    await store.init();
    await store.organizations.insert({ organization: { id: 'org_1', name: 'Acme', limits: {}, createdAt: '2026-01-01T00:00:00.000Z' } });
    await store.keys.insert({ key: key('k1'), maxLive: 5, now: '2026-01-01T00:00:00.000Z' });
    await store.agents.insert({ agent: agent('agent_1'), maxLive: 10 });
    await store.keys.get({ keyId: 'k1' });
    await store.organizations.get({ id: 'org_1' });
    await store.agents.get({ organizationId: 'org_1', agentId: 'agent_1' });

    await store.keys.revoke({ keyId: 'k1', at: '2026-02-01T00:00:00.000Z' });
    expect((await store.keys.get({ keyId: 'k1' }))?.revokedAt).toBe('2026-02-01T00:00:00.000Z');
    await store.organizations.updateLimits({ id: 'org_1', limits: { maxAgents: 3 } });
    expect((await store.organizations.get({ id: 'org_1' }))?.limits).toEqual({ maxAgents: 3 });
    await store.agents.update({ organizationId: 'org_1', agentId: 'agent_1', patch: { status: 'deleting' }, updatedAt: '2026-02-01T00:00:00.000Z' });
    expect((await store.agents.get({ organizationId: 'org_1', agentId: 'agent_1' }))?.status).toBe('deleting');
    await store.agents.delete({ organizationId: 'org_1', agentId: 'agent_1' });
    expect(await store.agents.get({ organizationId: 'org_1', agentId: 'agent_1' })).toBeNull();
  });

  it('does not cache a read that raced with a write, nor rows read inside a transaction', async () => {
    const { counted, holdReads } = countingStore();
    const store = cachingStore(counted);
    await store.init();
    await store.keys.insert({ key: key('k1'), maxLive: 5, now: '2026-01-01T00:00:00.000Z' });
    // A read starts (and is held inside the store) before a revocation lands, and finishes after it.
    let release!: () => void;
    holdReads(new Promise<void>((resolve) => (release = resolve)));
    const slow = store.keys.get({ keyId: 'k1' });
    await store.keys.revoke({ keyId: 'k1', at: '2026-02-01T00:00:00.000Z' });
    holdReads(null);
    release();
    await slow;
    expect((await store.keys.get({ keyId: 'k1' }))?.revokedAt).toBe('2026-02-01T00:00:00.000Z');

    // A transaction that reads and then rolls back leaves nothing behind in the cache.
    await store.agents.insert({ agent: agent('agent_2'), maxLive: 10 });
    await expect(
      store.transaction(async (tx) => {
        await tx.agents.update({ organizationId: 'org_1', agentId: 'agent_2', patch: { status: 'deleting' }, updatedAt: '2026-02-01T00:00:00.000Z' });
        expect((await tx.agents.get({ organizationId: 'org_1', agentId: 'agent_2' }))?.status).toBe('deleting');
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect((await store.agents.get({ organizationId: 'org_1', agentId: 'agent_2' }))?.status).toBe('ready');
    // A committed transaction's write is seen next.
    await store.agents.get({ organizationId: 'org_1', agentId: 'agent_2' });
    await store.transaction((tx) => tx.agents.update({ organizationId: 'org_1', agentId: 'agent_2', patch: { status: 'deleting' }, updatedAt: '2026-02-01T00:00:00.000Z' }));
    expect((await store.agents.get({ organizationId: 'org_1', agentId: 'agent_2' }))?.status).toBe('deleting');
  });

  it('reads a thread and a billing account (even a missing one) once, and sees every write to them on the very next read', async () => {
    const inner = inMemoryStore();
    const reads = { threads: 0, accounts: 0 };
    const counted: Store = Object.create(inner) as Store;
    Object.defineProperties(counted, {
      threads: { get: () => ({ ...inner.threads, get: async (r: { agentId: string; threadId: string }) => (reads.threads++, inner.threads.get(r)) }) },
      ledger: { get: () => ({ ...inner.ledger, getAccount: async (r: { organizationId: string }) => (reads.accounts++, inner.ledger.getAccount(r)) }) },
    });
    const store = cachingStore(counted);
    await store.init();
    await store.organizations.insert({ organization: { id: 'org_1', name: 'Acme', limits: {}, createdAt: '2026-01-01T00:00:00.000Z' } });
    await store.agents.insert({ agent: agent('agent_1'), maxLive: 10 });
    const thread = {
      id: 'thread_1', agentId: 'agent_1', organizationId: 'org_1', endUserId: null, status: 'ready' as const, title: 't', metadata: {},
      createdAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-01-01T00:00:00.000Z',
    };
    await store.threads.insert({ thread });
    for (let i = 0; i < 3; i++) {
      expect((await store.threads.get({ agentId: 'agent_1', threadId: 'thread_1' }))?.title).toBe('t');
      expect(await store.ledger.getAccount({ organizationId: 'org_1' })).toBeNull();
    }
    expect(reads).toEqual({ threads: 1, accounts: 1 });

    await store.threads.update({ agentId: 'agent_1', threadId: 'thread_1', patch: { status: 'deleting' }, updatedAt: '2026-01-02T00:00:00.000Z' });
    expect((await store.threads.get({ agentId: 'agent_1', threadId: 'thread_1' }))?.status).toBe('deleting');
    await store.threads.delete({ agentId: 'agent_1', threadId: 'thread_1' });
    expect(await store.threads.get({ agentId: 'agent_1', threadId: 'thread_1' })).toBeNull();
    await store.threads.insert({ thread: { ...thread, id: 'thread_2' } });
    expect((await store.threads.get({ agentId: 'agent_1', threadId: 'thread_2' }))?.status).toBe('ready');
    // Deleting the agent removes its threads: none is answered from memory afterwards.
    await store.agents.delete({ organizationId: 'org_1', agentId: 'agent_1' });
    expect(await store.threads.get({ agentId: 'agent_1', threadId: 'thread_2' })).toBeNull();

    await store.ledger.configure({ organizationId: 'org_1', patch: { enabled: true } });
    expect((await store.ledger.getAccount({ organizationId: 'org_1' }))?.enabled).toBe(true);
    const grant = { kind: 'grant' as const, route: 'credits_add', inWords: 0, outWords: 0, cost: '-5', reference: null, jobId: null, turnCosts: {}, createdAt: '2026-01-01T00:00:00.000Z' };
    await store.ledger.append({ organizationId: 'org_1', entry: grant, requireFunds: false });
    expect((await store.ledger.getAccount({ organizationId: 'org_1' }))?.balance).toBe('5');
    const charge = await store.ledger.append({ organizationId: 'org_1', entry: { ...grant, kind: 'charge', route: 'chat', cost: '2' }, requireFunds: true });
    expect((await store.ledger.getAccount({ organizationId: 'org_1' }))?.balance).toBe('3');
    if (charge.ok) await store.ledger.settle({ organizationId: 'org_1', entryId: charge.entry.entryId, outWords: 0, cost: '1' });
    expect((await store.ledger.getAccount({ organizationId: 'org_1' }))?.balance).toBe('4');
  });

  it('remembers that a thread has no unreported not-learned records until one is inserted, in or outside a transaction', async () => {
    const inner = inMemoryStore();
    let takes = 0;
    const counted: Store = Object.create(inner) as Store;
    Object.defineProperty(counted, 'notLearned', {
      get: () => ({ ...inner.notLearned, takeUnreported: async (r: { threadId: string }) => (takes++, inner.notLearned.takeUnreported(r)) }),
    });
    const store = cachingStore(counted);
    await store.init();
    const record = {
      organizationId: 'org_1', agentId: 'agent_1', threadId: 'thread_1', jobId: 'obs_1', requestId: 'req_1', ranges: [{ first: 0, last: 0 }],
      reason: 'generation_failed' as const, message: 'Writing the memory failed.', refundedCredits: null, createdAt: '2026-01-01T00:00:00.000Z',
    };
    expect(await store.notLearned.takeUnreported({ threadId: 'thread_1' })).toEqual([]);
    expect(await store.notLearned.takeUnreported({ threadId: 'thread_1' })).toEqual([]);
    expect(takes).toBe(1);
    await store.notLearned.insert({ record });
    expect((await store.notLearned.takeUnreported({ threadId: 'thread_1' })).map((r) => r.jobId)).toEqual(['obs_1']);
    expect(await store.notLearned.takeUnreported({ threadId: 'thread_1' })).toEqual([]);
    await store.transaction((tx) => tx.notLearned.insert({ record: { ...record, jobId: 'obs_2' } }));
    expect((await store.notLearned.takeUnreported({ threadId: 'thread_1' })).map((r) => r.jobId)).toEqual(['obs_2']);
  });
});

describe('cachingStore: observation jobs', () => {
  /** A caching store over an in-memory store that counts `jobs.get`. */
  async function jobsStore() {
    const inner = inMemoryStore();
    const reads = { jobs: 0 };
    const counted: Store = Object.create(inner) as Store;
    Object.defineProperty(counted, 'jobs', { get: () => ({ ...inner.jobs, get: async (r: { agentId: string; jobId: string }) => (reads.jobs++, inner.jobs.get(r)) }) });
    const store = cachingStore(counted);
    await store.init();
    const { org, agent, thread } = await world(store);
    const inserted = (await store.jobs.insert({ job: job(thread, { turnsTotal: 0 }), turns: [], onlyIfIdle: false }))!;
    await store.jobs.appendTurns({ jobId: inserted.id, turns: turns(inserted.id, 3) });
    return { store, reads, org, agent, thread, jobId: inserted.id };
  }
  const at = '2026-02-01T00:00:00.000Z';

  it('reads a job once while it is unchanged (a status poll), never as another agent\'s, and sees each write to it next', async () => {
    const { store, reads, agent, jobId } = await jobsStore();
    const get = () => store.jobs.get({ agentId: agent.id, jobId });
    for (let i = 0; i < 3; i++) expect((await get())?.turnsTotal).toBe(3);
    expect(reads.jobs).toBe(1);
    expect(await store.jobs.get({ agentId: 'agent_other', jobId })).toBeNull();
    expect(await store.jobs.get({ agentId: agent.id, jobId: 'obs_missing' })).toBeNull();

    await store.jobs.update({ jobId, patch: { status: 'processing', updatedAt: at } });
    expect((await get())?.status).toBe('processing');
    await store.turns.setStates({ jobId, turnIndexes: [0, 1], state: 'committed' });
    expect((await get())?.turnsProcessed).toBe(2);
    await store.jobs.appendTurns({ jobId, turns: turns(jobId, 5).slice(3) });
    expect((await get())?.turnsTotal).toBe(5);
    // Each read after a write (and the missing id: misses are not kept) went to the store once; then memory answers again.
    expect(reads.jobs).toBe(5);
    await get();
    await get();
    expect(reads.jobs).toBe(5);
    // Changed in a transaction: the commit's value next; a rollback leaves the old one.
    await store.transaction((tx) => tx.jobs.update({ jobId, patch: { error: 'x', updatedAt: at } }).then(() => undefined));
    expect((await get())?.error).toBe('x');
    await expect(
      store.transaction(async (tx) => {
        await tx.jobs.update({ jobId, patch: { error: 'y', updatedAt: at } });
        expect((await tx.jobs.get({ agentId: agent.id, jobId }))?.error).toBe('y');
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect((await get())?.error).toBe('x');
    await store.jobs.delete({ agentId: agent.id, jobIds: [jobId] });
    expect(await get()).toBeNull();
  });

  it('sees a thread\'s jobs cancelled (also inside a transaction) and jobs gone with their thread or agent on the very next read', async () => {
    const { store, agent, thread, jobId } = await jobsStore();
    const get = (id = jobId) => store.jobs.get({ agentId: agent.id, jobId: id });
    expect((await get())?.status).toBe('queued');
    await store.jobs.cancelForThread({ threadId: thread.id, at });
    expect((await get())?.status).toBe('cancelled');

    const second = threadRecord(agent);
    await store.threads.insert({ thread: second });
    const other = (await store.jobs.insert({ job: job(second), turns: turns('x', 0), onlyIfIdle: false }))!;
    expect((await get(other.id))?.status).toBe('queued');
    await store.transaction((tx) => tx.jobs.cancelForThread({ threadId: second.id, at }).then(() => undefined));
    expect((await get(other.id))?.status).toBe('cancelled');
    await store.threads.delete({ agentId: agent.id, threadId: second.id });
    expect(await get(other.id)).toBeNull();
    expect((await get())?.status).toBe('cancelled');
    await store.agents.delete({ organizationId: agent.organizationId, agentId: agent.id });
    expect(await get()).toBeNull();
  });
});

describe('copyRecord', () => {
  it('copies plain records deeply and leaves other objects to structuredClone', () => {
    const record = { id: 'a', n: 1, none: null, gone: undefined, nested: { list: [1, { x: 'y' }] }, at: new Date(5), bytes: new Uint8Array([1, 2]) };
    const copy = copyRecord(record);
    expect(copy).toEqual(record);
    expect(copy.nested).not.toBe(record.nested);
    expect(copy.nested.list[1]).not.toBe(record.nested.list[1]);
    expect(copy.at).toBeInstanceOf(Date);
    expect(copy.at).not.toBe(record.at);
    expect(copy.bytes).not.toBe(record.bytes);
    expect('gone' in copy).toBe(true);
  });
});
