import { expect } from 'vitest';
import type { StoreCase } from './harness.js';
import { iso, T0 } from './harness.js';
import { agent, organization, thread } from './records.js';

/** Conformance cases of the `threads` area. */
export function threadCases(test: StoreCase) {
  test('threads: insert, get scoped to the agent, list per end user newest first, update, delete', async ({ store, reopen }) => {
    const org = organization();
    await store.organizations.insert({ organization: org });
    const record = agent(org.id);
    const otherAgent = agent(org.id);
    await store.agents.insert({ agent: record, maxLive: 10 });
    await store.agents.insert({ agent: otherAgent, maxLive: 10 });
    const mine = thread(record, { endUserId: 'eu_a', createdAt: iso(T0), metadata: { k: [1, 2] } });
    const theirs = thread(record, { endUserId: 'eu_b', createdAt: iso(T0 + 1) });
    const orgs = thread(record, { endUserId: null, createdAt: iso(T0 + 2) });
    for (const t of [mine, theirs, orgs]) await store.threads.insert({ thread: t });
    expect(await store.threads.get({ agentId: record.id, threadId: mine.id })).toEqual(mine);
    expect(await store.threads.get({ agentId: otherAgent.id, threadId: mine.id })).toBeNull();
    expect((await store.threads.list({ agentId: record.id })).map((t) => t.id)).toEqual([orgs.id, theirs.id, mine.id]);
    expect((await store.threads.list({ agentId: record.id, endUserId: 'eu_a' })).map((t) => t.id)).toEqual([mine.id]);
    const updated = await store.threads.update({ agentId: record.id, threadId: theirs.id, patch: { status: 'deleting' }, updatedAt: iso(T0 + 9) });
    expect(updated?.status).toBe('deleting');
    expect((await store.threads.list({ agentId: record.id })).map((t) => t.id)).toEqual([orgs.id, mine.id]);
    // listByStatus spans agents (and organizations): what a start resumes.
    const elsewhere = thread(otherAgent, { status: 'deleting' });
    await store.threads.insert({ thread: elsewhere });
    const deleting = (await store.threads.listByStatus({ statuses: ['deleting'] })).map((t) => t.id);
    expect(deleting).toEqual(expect.arrayContaining([theirs.id, elsewhere.id]));
    expect(deleting).not.toContain(mine.id);
    expect((await store.threads.listByStatus({ statuses: ['deleting'] })).find((t) => t.id === theirs.id)).toEqual(updated);
    await store.threads.delete({ agentId: record.id, threadId: theirs.id });
    expect((await store.threads.listByStatus({ statuses: ['deleting'] })).map((t) => t.id)).not.toContain(theirs.id);
    expect(await store.threads.get({ agentId: record.id, threadId: theirs.id })).toBeNull();
    if (reopen) expect(await (await reopen()).threads.get({ agentId: record.id, threadId: mine.id })).toEqual(mine);
  });
}
