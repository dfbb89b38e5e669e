import { expect } from 'vitest';
import type { StoreCase } from './harness.js';
import { iso, T0 } from './harness.js';
import { agent, logEntry, organization, thread } from './records.js';

/** Conformance cases of the `messages` area. */
export function messageCases(test: StoreCase) {
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
