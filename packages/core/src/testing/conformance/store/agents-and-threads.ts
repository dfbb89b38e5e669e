import { expect } from 'vitest';
import type { storeCase } from './harness.js';
import { iso, T0 } from './harness.js';
import { agent, organization, thread } from './records.js';

export function agentAndThreadCases(test: ReturnType<typeof storeCase>) {
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

  test('messages: listRecent returns the most recent, oldest first', async ({ store }) => {
    const org = organization();
    await store.organizations.insert({ organization: org });
    const record = agent(org.id);
    await store.agents.insert({ agent: record, maxLive: 10 });
    const t = thread(record);
    await store.threads.insert({ thread: t });
    for (let i = 0; i < 5; i++) {
      await store.messages.append({
        messages: [{ threadId: t.id, agentId: record.id, speaker: i % 2 ? 'agent' : 'user', text: `m${i}`, timestamp: iso(T0), sourceIds: i === 4 ? ['src_1'] : [] }],
      });
    }
    const recent = await store.messages.listRecent({ threadId: t.id, limit: 3 });
    expect(recent.map((m) => m.text)).toEqual(['m2', 'm3', 'm4']);
    expect(recent[2]).toEqual({ threadId: t.id, agentId: record.id, speaker: 'user', text: 'm4', timestamp: iso(T0), sourceIds: ['src_1'] });
  });

  test('messages: append with logEntries stores the messages and the activity entries in order', async ({ store }) => {
    const org = organization();
    await store.organizations.insert({ organization: org });
    const record = agent(org.id);
    await store.agents.insert({ agent: record, maxLive: 10 });
    const t = thread(record);
    await store.threads.insert({ thread: t });
    const [earlier] = await store.logs.append({ entries: [logEntry(org.id, record.id, t.id)] });
    const user = { ...logEntry(org.id, record.id, t.id), direction: 'user' as const, route: 'chat' };
    const answer = { ...logEntry(org.id, record.id, t.id), direction: 'agent' as const, route: 'chat' };
    await store.messages.append({
      messages: [
        { threadId: t.id, agentId: record.id, speaker: 'user', text: 'question', timestamp: iso(T0), sourceIds: [] },
        { threadId: t.id, agentId: record.id, speaker: 'agent', text: 'answer', timestamp: iso(T0), sourceIds: ['obs_1'] },
      ],
      logEntries: [user, answer],
    });
    expect((await store.messages.listRecent({ threadId: t.id, limit: 10 })).map((m) => [m.speaker, m.text, m.sourceIds])).toEqual([
      ['user', 'question', []],
      ['agent', 'answer', ['obs_1']],
    ]);
    const logs = await store.logs.list({ agentId: record.id, limit: 10 });
    expect(logs.map(({ logId: _logId, ...entry }) => entry)).toEqual([answer, user, logEntry(org.id, record.id, t.id)]);
    expect(logs[1]!.logId).toBeGreaterThan(earlier!);
    expect(logs[0]!.logId).toBeGreaterThan(logs[1]!.logId);
    // Without messages the entries are still appended; without either nothing happens.
    await store.messages.append({ messages: [], logEntries: [user] });
    await store.messages.append({ messages: [] });
    expect(await store.logs.list({ agentId: record.id, limit: 10 })).toHaveLength(4);
  });
}

export function logEntry(organizationId: string, agentId: string, threadId: string) {
  return {
    organizationId,
    agentId,
    threadId,
    userId: organizationId,
    actorEmail: '',
    actorDisplayName: 'partner key',
    direction: 'user',
    route: 'chat',
    requestId: 'req_1',
    createdAt: iso(T0),
  };
}
