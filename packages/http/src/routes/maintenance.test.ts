import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryService, inMemoryStore, silentLogger, type MemoryService } from '@memory-agents/core';
import { createFetchHandler } from '../create-fetch-handler.js';

const services: MemoryService[] = [];
afterEach(async () => {
  for (const service of services.splice(0)) await service.stop();
});

describe('maintenance runs over HTTP (an extension: /v1/agents/{agent_id}/maintenance...)', () => {
  it('plans (201), reads, applies, undoes; Idempotency-Key replays; bad kind 422, unknown run 404, a second apply 409', async () => {
    const service = createMemoryService({ store: inMemoryStore(), logger: silentLogger });
    services.push(service);
    await service.start();
    const org = await service.admin.createOrganization({ name: 'Acme' });
    const { key } = await service.admin.createKey({ organizationId: org.organizationId });
    const api = createFetchHandler(service, { logger: silentLogger });
    const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
      const response = await api(new Request(`http://host${path}`, { method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) }));
      return { status: response.status, body: (await response.json()) as any };
    };
    const agent = (await call('POST', '/v1/agents', { agent_config: { role: 'r', objective: 'o' } })).body.agent_id as string;
    await service.idle();
    const thread = (await call('POST', `/v1/agents/${agent}/threads`, {})).body.thread_id as string;
    await call('POST', `/v1/agents/${agent}/threads/${thread}/observe`, { observations: [{ speaker: 'ana', content: [{ type: 'text', text: 'The offsite is at the lake house.' }], expires_at: '2020-01-01T00:00:00Z' }, { speaker: 'ana', content: [{ type: 'text', text: 'I live in Paris.' }] }] });
    await service.idle();
    const base = `/v1/agents/${agent}/maintenance`;
    const planned = await call('POST', base, { kind: 'sweep_expired', max_share: 0.5 }, { 'idempotency-key': 'p1' });
    expect(planned.status).toBe(201);
    expect(planned.body).toMatchObject({ status: 'dry_run', kind: 'sweep_expired', changes: [{ action: 'forget', memory_text: 'The offsite is at the lake house.', keep_id: null }] });
    expect(await call('POST', base, { kind: 'sweep_expired', max_share: 0.5 }, { 'idempotency-key': 'p1' })).toEqual(planned);
    const runId = planned.body.run_id as string;
    expect((await call('GET', `${base}/${runId}`)).body).toEqual(planned.body);
    const applied = await call('POST', `${base}/${runId}/apply`);
    expect(applied).toMatchObject({ status: 200, body: { status: 'applied', receipt: { forgotten: 1 } } });
    expect(await call('POST', `${base}/${runId}/apply`)).toMatchObject({ status: 409, body: { code: 'conflict' } });
    expect(await call('POST', `${base}/${runId}/undo`)).toMatchObject({ status: 200, body: { status: 'undone' } });
    expect((await call('GET', `${base}?limit=5`)).body).toMatchObject({ runs: [{ run_id: runId, status: 'undone' }], next_cursor: '' });
    expect(await call('POST', base, { kind: 'reflect' })).toMatchObject({ status: 422, body: { code: 'invalid_request' } });
    expect(await call('GET', `${base}/mnt_01ARZ3NDEKTSV4RRFFQ69G5FAV`)).toMatchObject({ status: 404, body: { code: 'not_found' } });
  });
});
