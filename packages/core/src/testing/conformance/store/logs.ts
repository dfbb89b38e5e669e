import { expect } from 'vitest';
import type { StoreCase } from './harness.js';
import { agent, logEntry, organization } from './records.js';

/** Conformance cases of the `logs` area. */
export function logCases(test: StoreCase) {
  test('logs: ids increase, list is newest first and pages with beforeLogId', async ({ store }) => {
    const org = organization();
    await store.organizations.insert({ organization: org });
    const record = agent(org.id);
    await store.agents.insert({ agent: record, maxLive: 10 });
    const ids = await store.logs.append({ entries: Array.from({ length: 5 }, () => logEntry(org.id, record.id, '')) });
    expect([...ids].sort((a, b) => a - b)).toEqual(ids);
    const first = await store.logs.list({ agentId: record.id, limit: 2 });
    expect(first.map((e) => e.logId)).toEqual([ids[4], ids[3]]);
    const second = await store.logs.list({ agentId: record.id, limit: 10, beforeLogId: first[1]!.logId });
    expect(second.map((e) => e.logId)).toEqual([ids[2], ids[1], ids[0]]);
    expect(second[0]).toMatchObject({ route: 'chat', direction: 'user', userId: org.id, requestId: 'req_1' });
  });
}
