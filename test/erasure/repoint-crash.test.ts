import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { lancedbMemoryIndex } from '@memory-agents/adapter-lancedb';
import { openSqlClient, postgresMemoryIndex, postgresStore } from '@memory-agents/adapter-postgres';
import { createMemoryService, inMemoryMemoryIndex, inMemoryStore, silentLogger, type MemoryIndex, type MemoryService, type Store } from '@memory-agents/core';
import { postgresUrl } from '@memory-agents/core/testing';

/**
 * Crash-safe re-pointing (issue 33 x issue 30): an erasure re-points a memory that other turns
 * were merged into by deleting it and writing it anew. The process dies between the two (here:
 * the REAL index's upsert throws once, a failing external index, and the erasure is left
 * `running` as a killed process leaves it). The next process resumes the erasure (or the caller
 * sends it again): the kept turn's memory is there with the kept turn's words, the erased words
 * nowhere, on each store and index pair the service ships with.
 */

/** A store and an index opened (again) on the same storage, as a restarted process opens them. */
type Backend = { open: () => { store: Store; index: MemoryIndex }; cleanup: () => Promise<void> };

const backends: [string, () => Promise<Backend>][] = [
  [
    'in-memory store and index',
    async () => {
      const store = inMemoryStore();
      const index = inMemoryMemoryIndex();
      return { open: () => ({ store, index }), cleanup: async () => {} };
    },
  ],
  [
    'PGlite store and PGlite index',
    async () => {
      const client = await openSqlClient({ dataDir: 'memory://' });
      return { open: () => ({ store: postgresStore({ client }), index: postgresMemoryIndex({ client }) }), cleanup: () => client.close() };
    },
  ],
  [
    'PGlite store and LanceDB index (the embedded default)',
    async () => {
      const client = await openSqlClient({ dataDir: 'memory://' });
      const uri = await mkdtemp(join(tmpdir(), 'ma-repoint-'));
      return {
        open: () => ({ store: postgresStore({ client }), index: lancedbMemoryIndex({ uri }) }),
        cleanup: async () => {
          await client.close();
          await rm(uri, { recursive: true, force: true });
        },
      };
    },
  ],
];
const databaseUrl = postgresUrl('crash-safe re-pointing on PostgreSQL');
if (databaseUrl) {
  backends.push([
    'PostgreSQL store and index (DATABASE_URL)',
    async () => {
      const schema = `ma_repoint_${randomBytes(6).toString('hex')}`;
      // The index in a schema of its own on a client that still sees the pgvector extension (public).
      const client = await openSqlClient({ connectionString: databaseUrl });
      return {
        open: () => ({ store: postgresStore({ connectionString: databaseUrl, schema }), index: postgresMemoryIndex({ client, schema }) }),
        cleanup: async () => {
          await client.exec(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
          await client.close();
        },
      };
    },
  ]);
}

/**
 * The real index; once armed, its next upsert of `armed` (after the erasure deleted the record) or,
 * with `at: 'delete'`, its next delete of it by id rejects.
 */
function crashingIndex(index: MemoryIndex) {
  const crash = { armed: null as string | null, at: 'upsert' as 'upsert' | 'delete', crashed: false };
  const fire = () => {
    crash.armed = null;
    crash.crashed = true;
    throw new Error(`index unreachable (simulated crash at the ${crash.at})`);
  };
  const upsert: MemoryIndex['upsert'] = async (request) => {
    if (crash.at === 'upsert' && crash.armed !== null && request.records.some((record) => record.id === crash.armed)) fire();
    return index.upsert(request);
  };
  const deleteBy: MemoryIndex['deleteBy'] = async (request) => {
    if (crash.at === 'delete' && crash.armed !== null && request.ids?.includes(crash.armed)) fire();
    return index.deleteBy(request);
  };
  const wrapped = new Proxy(index, {
    get(target, property) {
      if (property === 'upsert') return upsert;
      if (property === 'deleteBy') return deleteBy;
      const value = Reflect.get(target, property, target) as unknown;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { index: wrapped, crash };
}

const say = (text: string, timestamp: string) => ({ observations: [{ speaker: 'ana', timestamp, content: [{ type: 'text' as const, text }] }] });

async function started(store: Store, index: MemoryIndex): Promise<MemoryService> {
  const service = createMemoryService({ store, index, logger: silentLogger });
  await service.start();
  return service;
}

/**
 * An agent with two threads whose second turn was merged into the first's memory; the first is
 * erased and dies between the delete and the upsert. Resolves what the recovery checks.
 */
async function crashedErasure(backend: Backend, by: 'observation' | 'thread' = 'observation', at: 'upsert' | 'delete' = 'upsert') {
  const { store, index: real } = backend.open();
  const { index, crash } = crashingIndex(real);
  const service = await started(store, index);
  const org = await service.admin.createOrganization({ name: 'Repoint' });
  const organizationId = org.organizationId;
  const caller = await service.as(organizationId);
  const agentId = (await service.agents.create({ caller, body: { agent_config: { role: 'assistant', objective: 'remember' } } })).agent_id;
  await service.idle();
  const erasedThread = (await service.threads.create({ caller, agentId, body: {} })).thread_id;
  const keptThread = (await service.threads.create({ caller, agentId, body: {} })).thread_id;
  const first = await service.observe({ caller, agentId, threadId: erasedThread, body: say('MY SISTER lives in LISBON now.', '2024-01-01T10:00:00Z') });
  await service.idle();
  const second = await service.observe({ caller, agentId, threadId: keptThread, body: say('my sister lives in lisbon now', '2024-02-01T10:00:00Z') });
  await service.idle();
  const memoryId = `mem_${first.observation_id.slice(4)}_0_0`;
  const receipt = await service.observationReceipt({ caller, agentId, threadId: keptThread, observationId: second.observation_id });
  expect(receipt.turns[0]).toMatchObject({ outcome: 'merged', memory_ids: [memoryId] });

  crash.armed = memoryId;
  crash.at = at;
  const erasure = await service.erasures.erase({ caller, agentId, body: by === 'thread' ? { thread_id: erasedThread } : { observation_id: first.observation_id } });
  await service.idle();
  expect(crash.crashed).toBe(true);
  // The crash point: the intent stored (ids only), the old record deleted (or, at the delete, still there), the rewrite not written.
  expect((await real.get({ agentId, ids: [memoryId] })).map((record) => record.text)).toEqual(at === 'delete' ? ['MY SISTER lives in LISBON now.'] : []);
  const intents = await store.repoints.list({ jobId: first.observation_id });
  expect(intents.map((intent) => intent.memoryId)).toEqual([memoryId]);
  expect(JSON.stringify(intents)).not.toMatch(/LISBON|SISTER|lisbon|sister/);
  await service.stop();
  return { organizationId, agentId, keptThread, first, second, memoryId, erasureId: erasure.erasure_id };
}

/** The kept turn's memory is back under its id, with the kept turn's words only; the erased words are nowhere. */
async function expectRecovered(service: MemoryService, world: Awaited<ReturnType<typeof crashedErasure>>) {
  const caller = await service.as(world.organizationId);
  const { agentId } = world;
  const memories = (await service.memories.list({ caller, agentId, query: { include_history: true } as never })).memories;
  expect(memories).toHaveLength(1);
  expect(memories[0]).toMatchObject({
    memory_id: world.memoryId,
    text: 'my sister lives in lisbon now',
    source: { kind: 'turn', thread_id: world.keptThread, observation_id: world.second.observation_id, turn_index: 0 },
    also_from: [],
    occurred_at: '2024-02-01T10:00:00.000Z',
  });
  expect(JSON.stringify(memories)).not.toMatch(/LISBON|SISTER/);
  const recalled = await service.recall({ caller, agentId, body: { query: 'Where does my sister live?' } });
  expect(recalled.memory_context).toContain('my sister lives in lisbon now');
  expect(JSON.stringify(recalled)).not.toMatch(/LISBON|SISTER/);
  const receipt = await service.observationReceipt({ caller, agentId, threadId: world.keptThread, observationId: world.second.observation_id });
  expect(receipt.turns[0]).toMatchObject({ outcome: 'merged', memory_ids: [world.memoryId] });
}

/** The next process on the same storage resumes the erasure a killed one left `running`; it completes and the memory is recovered. */
async function resumedAfterKill(backend: Backend, world: Awaited<ReturnType<typeof crashedErasure>>) {
  const { store, index } = backend.open();
  // A killed process leaves its erasure `running` (the thrown index call settled it `failed`).
  await store.init();
  await store.erasures.update({ erasureId: world.erasureId, patch: { status: 'running', completedAt: null, error: null }, updatedAt: new Date().toISOString() });
  const service = await started(store, index);
  try {
    await service.idle();
    const caller = await service.as(world.organizationId);
    expect(await service.erasures.get({ caller, agentId: world.agentId, erasureId: world.erasureId })).toMatchObject({ status: 'completed' });
    await expectRecovered(service, world);
    expect(await store.repoints.list({ jobId: world.first.observation_id })).toEqual([]);
  } finally {
    await service.stop();
  }
}

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

describe.each(backends)('an erasure that dies while re-pointing a merged memory: %s', (_name, openBackend) => {
  it.each(['observation', 'thread'] as const)('erasing the %s, resumed by the next process, it writes the kept turn\'s memory again and leaves no erased word', { timeout: 120_000 }, async (by) => {
    const backend = await openBackend();
    cleanups.push(backend.cleanup);
    const world = await crashedErasure(backend, by);
    await resumedAfterKill(backend, world);
  });

  it('died at the delete (the old record still there), resumed, it re-points the memory once', { timeout: 120_000 }, async () => {
    const backend = await openBackend();
    cleanups.push(backend.cleanup);
    const world = await crashedErasure(backend, 'observation', 'delete');
    await resumedAfterKill(backend, world);
  });

  it('failed on the index, the erasure sent again writes the kept turn\'s memory again', { timeout: 120_000 }, async () => {
    const backend = await openBackend();
    cleanups.push(backend.cleanup);
    const world = await crashedErasure(backend);
    const { store, index } = backend.open();
    const service = await started(store, index);
    try {
      const caller = await service.as(world.organizationId);
      expect(await service.erasures.get({ caller, agentId: world.agentId, erasureId: world.erasureId })).toMatchObject({ status: 'failed' });
      const again = await service.erasures.erase({ caller, agentId: world.agentId, body: { observation_id: world.first.observation_id } });
      await service.idle();
      expect(await service.erasures.get({ caller, agentId: world.agentId, erasureId: again.erasure_id })).toMatchObject({ status: 'completed' });
      await expectRecovered(service, world);
    } finally {
      await service.stop();
    }
  });
});
