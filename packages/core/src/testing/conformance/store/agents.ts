import { expect } from 'vitest';
import type { StoreCase } from './harness.js';
import { iso, T0 } from './harness.js';
import { agent, logEntry, organization, thread } from './records.js';

/** Conformance cases of the `agents` area. */
export function agentCases(test: StoreCase) {
  test('agents: insert, get scoped to the organization, update', async ({ store, reopen }) => {
    const org = organization();
    const other = organization();
    await store.organizations.insert({ organization: org });
    await store.organizations.insert({ organization: other });
    const record = agent(org.id, { status: 'initializing' });
    expect(await store.agents.insert({ agent: record, maxLive: 10 })).toBe(true);
    expect(await store.agents.get({ organizationId: org.id, agentId: record.id })).toEqual(record);
    expect(await store.agents.get({ organizationId: other.id, agentId: record.id })).toBeNull();
    const updated = await store.agents.update({
      organizationId: org.id,
      agentId: record.id,
      patch: { status: 'ready', resumedFromTurn: 7, config: { role: 'r', objective: 'o' } },
      updatedAt: iso(T0 + 1),
    });
    expect(updated).toMatchObject({ status: 'ready', resumedFromTurn: 7, config: { role: 'r', objective: 'o' }, updatedAt: iso(T0 + 1) });
    expect(await store.agents.update({ organizationId: other.id, agentId: record.id, patch: { status: 'failed' }, updatedAt: iso(T0) })).toBeNull();
    if (reopen) expect(await (await reopen()).agents.get({ organizationId: org.id, agentId: record.id })).toEqual(updated);
  });

  test('agents: list is newest first and leaves out deleting agents; listByStatus spans organizations', async ({ store }) => {
    const org = organization();
    await store.organizations.insert({ organization: org });
    const a = agent(org.id, { createdAt: iso(T0) });
    const b = agent(org.id, { createdAt: iso(T0 + 10) });
    const c = agent(org.id, { createdAt: iso(T0 + 20), status: 'deleting' });
    for (const record of [a, b, c]) await store.agents.insert({ agent: record, maxLive: 10 });
    expect((await store.agents.list({ organizationId: org.id })).map((r) => r.id)).toEqual([b.id, a.id]);
    expect((await store.agents.listByStatus({ statuses: ['deleting'] })).map((r) => r.id)).toContain(c.id);
  });

  test('agents: an importing agent is not listed but counts against the quota; listByStatus finds it', async ({ store }) => {
    const org = organization();
    await store.organizations.insert({ organization: org });
    const listed = agent(org.id, { createdAt: iso(T0) });
    const importing = agent(org.id, { createdAt: iso(T0 + 10), status: 'importing' });
    for (const record of [listed, importing]) expect(await store.agents.insert({ agent: record, maxLive: 2 })).toBe(true);
    expect((await store.agents.list({ organizationId: org.id })).map((r) => r.id)).toEqual([listed.id]);
    expect(await store.agents.insert({ agent: agent(org.id), maxLive: 2 })).toBe(false);
    expect((await store.agents.listByStatus({ statuses: ['importing'] })).map((r) => r.id)).toContain(importing.id);
    await store.agents.update({ organizationId: org.id, agentId: importing.id, patch: { status: 'ready' }, updatedAt: iso(T0 + 20) });
    expect((await store.agents.list({ organizationId: org.id })).map((r) => r.id)).toEqual([importing.id, listed.id]);
  });

  test('agents: concurrent inserts at the quota never exceed it, and deleting agents do not count', async ({ store }) => {
    const org = organization();
    await store.organizations.insert({ organization: org });
    await store.agents.insert({ agent: agent(org.id, { status: 'deleting' }), maxLive: 3 });
    const results = await Promise.all(Array.from({ length: 6 }, () => store.agents.insert({ agent: agent(org.id), maxLive: 3 })));
    expect(results.filter(Boolean)).toHaveLength(3);
    expect(await store.agents.list({ organizationId: org.id })).toHaveLength(3);
  });

  test('agents: delete cascades to threads, messages and logs', async ({ store }) => {
    const org = organization();
    await store.organizations.insert({ organization: org });
    const record = agent(org.id);
    await store.agents.insert({ agent: record, maxLive: 10 });
    const t = thread(record);
    await store.threads.insert({ thread: t });
    await store.messages.append({ messages: [{ threadId: t.id, agentId: record.id, speaker: 'user', text: 'hi', timestamp: iso(T0), sourceIds: [] }] });
    await store.logs.append({ entries: [logEntry(org.id, record.id, t.id)] });
    await store.agents.delete({ organizationId: org.id, agentId: record.id });
    expect(await store.agents.get({ organizationId: org.id, agentId: record.id })).toBeNull();
    expect(await store.threads.get({ agentId: record.id, threadId: t.id })).toBeNull();
    expect(await store.messages.listRecent({ threadId: t.id, limit: 10 })).toEqual([]);
    expect(await store.logs.list({ agentId: record.id, limit: 10 })).toEqual([]);
  });
}
