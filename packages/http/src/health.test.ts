import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createMemoryService, inMemoryStore, silentLogger, type Store } from '@memory-agents/core';
import { createFetchHandler } from './create-fetch-handler.js';
import { createHandler } from './create-handler.js';

/** An in-memory store whose key reads fail like a lost PostgreSQL connection while `down.value`. */
function storeWithKeys(down: { value: boolean }): Store {
  const store = inMemoryStore();
  return new Proxy(store, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (property !== 'keys') return value;
      const keys = value as Store['keys'];
      const refused = () => Promise.reject(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }));
      return {
        ...keys,
        get: (request: Parameters<Store['keys']['get']>[0]) => (down.value ? refused() : keys.get(request)),
        getWithOrganization: (request: Parameters<Store['keys']['getWithOrganization']>[0]) => (down.value ? refused() : keys.getWithOrganization(request)),
      };
    },
  });
}

describe('GET /healthz and /readyz', () => {
  it('answer without a key on the fetch handler: alive always, ready only while the store answers, no organization named', async () => {
    const down = { value: false };
    const service = createMemoryService({ store: storeWithKeys(down), logger: silentLogger });
    await service.start();
    const org = await service.admin.createOrganization({ name: 'Acme' });
    const { key } = await service.admin.createKey({ organizationId: org.organizationId });
    const api = createFetchHandler(service, { logger: silentLogger });
    const get = async (path: string, headers: Record<string, string> = {}) => {
      const response = await api(new Request(`http://host${path}`, { headers }));
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    };

    expect(await get('/healthz')).toEqual({ status: 200, body: { status: 'ok' } });
    expect(await get('/readyz')).toEqual({ status: 200, body: { status: 'ready', checks: { store: 'ok', index: 'ok' } } });

    down.value = true;
    expect(await get('/healthz')).toEqual({ status: 200, body: { status: 'ok' } });
    const ready = await get('/readyz');
    expect(ready.status).toBe(503);
    expect(ready.body).toEqual({ status: 'unavailable', error: expect.stringMatching(/^The database \(store in-memory\) did not respond/), checks: { store: 'unavailable', index: 'ok' } });
    expect(JSON.stringify(ready.body)).not.toContain(org.organizationId);
    // An authenticated route answers the same 503, not 500.
    const session = await get('/v1/session', { authorization: `Bearer ${key}` });
    expect(session.status).toBe(503);
    expect(session.body).toMatchObject({ code: 'service_unavailable', error: expect.stringContaining('its keys') });

    down.value = false;
    expect((await get('/readyz')).status).toBe(200);
    expect((await get('/v1/session', { authorization: `Bearer ${key}` })).status).toBe(200);
    await service.stop();
  });

  it('answer on the node handler too', async () => {
    const service = createMemoryService({ store: inMemoryStore(), logger: silentLogger });
    await service.start();
    const server = createServer(createHandler(service, { logger: silentLogger }));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const live = await fetch(`${url}/healthz`);
      expect(live.status).toBe(200);
      expect(await live.json()).toEqual({ status: 'ok' });
      const ready = await fetch(`${url}/readyz`);
      expect(ready.status).toBe(200);
      expect(ready.headers.get('cache-control')).toBe('no-store');
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await service.stop();
    }
  });
});
