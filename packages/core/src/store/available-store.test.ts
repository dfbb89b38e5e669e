import { describe, expect, it } from 'vitest';
import { createMemoryService } from '../create-memory-service.js';
import { ServiceError, isServiceError } from '../errors/service-error.js';
import { inMemoryStore } from '../in-memory/store/index.js';
import type { Store } from '../ports/store/index.js';
import { silentLogger } from '../service/logger.js';
import { StoreUnavailableError, availableStore, isUnavailableError } from './available-store.js';

/** A store whose every area method (also inside a transaction) rejects with `error` while `down.value` is true. */
function flakyStore(error: () => unknown, down: { value: boolean }): Store {
  const flaky = <T extends object>(areas: T): T =>
    new Proxy(areas, {
      get(target, property, receiver) {
        const value: unknown = Reflect.get(target, property, receiver);
        if (property === 'transaction') return (fn: (tx: object) => Promise<unknown>) => (target as unknown as Store).transaction((tx) => fn(flaky(tx)));
        if (typeof value !== 'object' || value === null || property === 'capabilities') return value;
        return new Proxy(value, {
          get(area, name) {
            const method: unknown = Reflect.get(area, name);
            if (typeof method !== 'function') return method;
            return (...args: unknown[]) => (down.value ? Promise.reject(error()) : (method as (...a: unknown[]) => unknown).apply(area, args));
          },
        });
      },
    });
  return flaky(inMemoryStore());
}

const refused = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });

describe('isUnavailableError', () => {
  it('recognizes connection, timeout and storage failures, and not defects', () => {
    expect(isUnavailableError(refused())).toBe(true);
    expect(isUnavailableError(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(isUnavailableError(new Error('Query read timeout'))).toBe(true);
    expect(isUnavailableError(new Error('timeout exceeded when trying to connect'))).toBe(true);
    expect(isUnavailableError(Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }))).toBe(true);
    expect(isUnavailableError(Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' }))).toBe(true);
    expect(isUnavailableError(Object.assign(new Error('could not extend file'), { code: '53100' }))).toBe(true);
    expect(isUnavailableError(new Error('wrapped', { cause: Object.assign(new Error('write'), { code: 'ENOSPC' }) }))).toBe(true);
    expect(isUnavailableError(new AggregateError([refused(), refused()]))).toBe(true);
    expect(isUnavailableError(new StoreUnavailableError('backend away'))).toBe(true);

    expect(isUnavailableError(new TypeError("Cannot read properties of undefined (reading 'id')"))).toBe(false);
    expect(isUnavailableError(Object.assign(new Error('duplicate key value violates unique constraint'), { code: '23505' }))).toBe(false);
    expect(isUnavailableError(Object.assign(new Error('syntax error at or near "SELEC"'), { code: '42601' }))).toBe(false);
    expect(isUnavailableError(null)).toBe(false);
  });
});

describe('availableStore', () => {
  it('turns a backend failure of any area into 503 naming the part, and leaves defects and ServiceErrors alone', async () => {
    const down = { value: false };
    let thrown: () => unknown = refused;
    const store = availableStore(flakyStore(() => thrown(), down));
    await store.init();
    down.value = true;

    const error = await store.keys.get({ keyId: 'k' }).catch((e: unknown) => e);
    expect(isServiceError(error) && error.code).toBe('service_unavailable');
    expect((error as ServiceError).status).toBe(503);
    expect((error as Error).message).toMatch(/The database \(store in-memory\) did not respond while working on its keys/);

    const windows = await store.rateLimits.hit({ windows: [], now: 0 }).catch((e: unknown) => e);
    expect((windows as Error).message).toContain('the rate limit windows');

    thrown = () => new StoreUnavailableError('an adapter says its backend is away');
    const own = (await store.agents.get({ organizationId: 'o', agentId: 'a' }).catch((e: unknown) => e)) as ServiceError;
    expect(own.code).toBe('service_unavailable');
    // The adapter's own sentence is kept (e.g. the embedded database naming its failed data dir).
    expect(own.message).toBe('The database (store in-memory) could not be used while working on its agents. an adapter says its backend is away');

    thrown = () => new TypeError('a bug');
    expect(await store.keys.get({ keyId: 'k' }).catch((e: unknown) => e)).toBeInstanceOf(TypeError);

    thrown = () => new ServiceError('conflict', 'already there');
    expect(await store.keys.get({ keyId: 'k' }).catch((e: unknown) => (e as ServiceError).code)).toBe('conflict');
  });

  it('wraps the areas a transaction hands out, and a failing commit', async () => {
    const down = { value: false };
    const store = availableStore(flakyStore(refused, down));
    await store.init();
    const error = await store
      .transaction(async (tx) => {
        down.value = true;
        return tx.organizations.list();
      })
      .catch((e: unknown) => e);
    expect(isServiceError(error) && error.code).toBe('service_unavailable');
    expect((error as Error).message).toContain('its organizations');
  });

  it('makes createMemoryService answer 503 (not 500) while the store is away, and serve again after', async () => {
    const down = { value: false };
    const service = createMemoryService({ store: flakyStore(refused, down), logger: silentLogger });
    await service.start();
    const org = await service.admin.createOrganization({ name: 'Acme' });
    const { key } = await service.admin.createKey({ organizationId: org.organizationId });
    const authenticate = () => service.authenticate({ authorization: `Bearer ${key}`, endUser: undefined, secFetchSite: undefined, requestId: 'r' });
    down.value = true;
    const error = await authenticate().catch((e: unknown) => e);
    expect(isServiceError(error) && error.status).toBe(503);
    expect(await service.ready()).toMatchObject({ ready: false, store: { ok: false }, index: { ok: true } });
    down.value = false;
    await expect(authenticate()).resolves.toBeTruthy();
    expect(await service.ready()).toEqual({ ready: true, store: { ok: true }, index: { ok: true } });
    await service.stop();
  });

  it('lets a keyed observe that failed with the store be sent again with its key once the store is back (not 409 for the in-flight window)', async () => {
    const down = { value: false };
    const flaky = flakyStore(refused, down);
    // The store goes away right after the key is claimed: the job insert and the key's release fail.
    let armed = false;
    const store = new Proxy(flaky, {
      get(target, property, receiver) {
        const value: unknown = Reflect.get(target, property, receiver);
        if (property !== 'idempotency') return value;
        const area = value as Store['idempotency'];
        return {
          ...area,
          claim: async (request: Parameters<Store['idempotency']['claim']>[0]) => {
            const claimed = await area.claim(request);
            if (armed) [armed, down.value] = [false, true];
            return claimed;
          },
          complete: (request: Parameters<Store['idempotency']['complete']>[0]) => area.complete(request),
          release: (request: Parameters<Store['idempotency']['release']>[0]) => area.release(request),
        };
      },
    });
    const service = createMemoryService({ store, logger: silentLogger });
    await service.start();
    const org = await service.admin.createOrganization({ name: 'Acme' });
    const caller = await service.as(org.organizationId);
    const agent = await service.agents.create({ caller, body: { agent_config: { role: 'assistant', objective: 'remember' } } });
    await service.idle();
    const thread = await service.threads.create({ caller, agentId: agent.agent_id, body: {} });
    const observe = () =>
      service.observe({ caller, agentId: agent.agent_id, threadId: thread.thread_id, idempotencyKey: 'key-1', body: { observations: [{ content: [{ type: 'text', text: 'The crane was inspected.' }] }] } });
    armed = true;
    await expect(observe()).rejects.toMatchObject({ code: 'service_unavailable', status: 503 });
    // Still away: 503 again, never 409 "still being processed".
    await expect(observe()).rejects.toMatchObject({ code: 'service_unavailable', status: 503 });
    down.value = false;
    const accepted = await observe();
    expect(accepted).toMatchObject({ accepted: true, observation_id: expect.stringMatching(/^obs_/) });
    expect(await observe()).toEqual(accepted);
    await service.stop();
  });
});
