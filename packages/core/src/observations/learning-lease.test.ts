import { describe, expect, it } from 'vitest';
import { inMemoryMemoryIndex } from '../in-memory/in-memory-memory-index.js';
import { inMemoryStore } from '../in-memory/store/index.js';
import { learningService, turns } from '../__fixtures__/learning-service.js';

describe('observation jobs: the ingestion lease', () => {
  /** An in-memory store (shared or not) that records the lease names acquired. */
  function recordingStore(shared: boolean) {
    const base = inMemoryStore();
    const acquired: string[] = [];
    const store = {
      ...base,
      capabilities: { ...base.capabilities, shared },
      leases: {
        ...base.leases,
        acquire: (request: Parameters<typeof base.leases.acquire>[0]) => (acquired.push(request.name), base.leases.acquire(request)),
      },
    };
    return { store, acquired };
  }

  it('is taken in a store other processes share, and not in one only this process opens (its running workers are the lease)', async () => {
    for (const shared of [true, false]) {
      const { store, acquired } = recordingStore(shared);
      const learning = await learningService({ store, index: inMemoryMemoryIndex() });
      expect((await learning.observeSettled(turns(2))).status).toBe('committed');
      expect(acquired.filter((name) => name === `ingest:${learning.agentId}`).length, `shared: ${shared}`).toBe(shared ? 1 : 0);
      expect(await store.leases.get({ name: `ingest:${learning.agentId}` })).toBeNull();
      await learning.service.stop();
    }
  });
});

describe('observation jobs: two processes on one store', () => {
  it('learns a job another process queued while this one was releasing the agent lease, without waiting for a sweep', async () => {
    const base = inMemoryStore();
    // Two services on one store stand for two processes on one database (`shared`: no lease is
    // taken over at start).
    const shared = { ...base, capabilities: { ...base.capabilities, shared: true } };
    let beforeRelease: (() => Promise<void>) | null = null;
    const storeOfA = {
      ...shared,
      leases: {
        ...base.leases,
        async release(request: Parameters<typeof base.leases.release>[0]) {
          const hook = beforeRelease;
          beforeRelease = null;
          if (hook) await hook();
          return base.leases.release(request);
        },
      },
    };
    const index = inMemoryMemoryIndex();
    const a = await learningService({ store: storeOfA, index });
    const { createMemoryService } = await import('../create-memory-service.js');
    const { silentLogger } = await import('../service/logger.js');
    const b = createMemoryService({ store: shared, index, logger: silentLogger });
    await b.start();
    const callerOfB = await b.authenticate({ authorization: `Bearer ${a.key}`, endUser: undefined, secFetchSite: undefined, requestId: 'req_b' });
    // The worst moment: A's worker found no job left and holds the lease until its release; B
    // accepts an observe then, and B's worker is refused the lease A still holds.
    let late: string | null = null;
    beforeRelease = async () => {
      late = (await b.observe({ caller: callerOfB, agentId: a.agentId, threadId: a.threadId, body: { observations: turns(2, 'late') } })).observation_id;
    };
    expect((await a.observeSettled(turns(2))).status).toBe('committed');
    expect(late).not.toBeNull();
    await a.service.idle();
    await b.idle();
    // Both processes idle: the late job was learned, not left for the next sweep (5 s later).
    expect(await b.observationStatus({ caller: callerOfB, agentId: a.agentId, threadId: a.threadId, observationId: late! })).toMatchObject({ status: 'committed', turns_processed: 2, resumed_at: null });
    expect((await index.stats({ agentId: a.agentId })).count).toBe(4);
    await a.service.stop();
    await b.stop();
  });
});
