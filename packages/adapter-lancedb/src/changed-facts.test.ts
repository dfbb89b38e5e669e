import { createMemoryService, inMemoryStore, silentLogger } from '@memory-agents/core';
import { afterAll, describe, expect, it } from 'vitest';
// The issue-32 conversations kept with core's tests (a fixture, not a published module).
import { CHANGED_FACTS, type ChangedFact } from '../../core/src/__fixtures__/changed-facts.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lancedbMemoryIndex } from './lancedb-memory-index.js';

/**
 * Issue 32 on the LanceDB index through the service: validity is filtered in LanceDB's `where`, supersession
 * goes through `update`, `as_of` through `search`'s asOf. Same assertions as core's
 * chat/changed-facts.test.ts (in-memory index) and adapter-postgres's (PGlite).
 */
describe('changed facts on LanceDB (validity and history)', async () => {
  const directory = await mkdtemp(join(tmpdir(), 'memory-agents-changed-facts-'));
  const service = createMemoryService({ store: inMemoryStore(), index: lancedbMemoryIndex({ uri: directory }), logger: silentLogger });
  await service.start();
  afterAll(async () => {
    await service.stop();
    await rm(directory, { recursive: true, force: true });
  });
  const org = await service.admin.createOrganization({ name: 'Acme' });
  const { key } = await service.admin.createKey({ organizationId: org.organizationId });
  const owner = await service.authenticate({ authorization: `Bearer ${key}`, endUser: undefined, secFetchSite: undefined, requestId: 'req_changed' });

  async function learn(fact: ChangedFact) {
    const agent = await service.agents.create({ caller: owner, body: { agent_config: { role: 'assistant', objective: 'remember' } } });
    await service.idle();
    const agentId = agent.agent_id;
    const { thread_id: threadId } = await service.threads.create({ caller: owner, agentId, body: {} });
    for (const [turns, timestamp] of [[fact.early, fact.before], [fact.late, fact.after]] as const) {
      await service.observe({ caller: owner, agentId, threadId, body: { observations: turns.map(([speaker, text]) => ({ content: [{ type: 'text' as const, text }], speaker, timestamp })) } });
      await service.idle();
    }
    return { agentId, threadId };
  }

  it.each(CHANGED_FACTS.map((fact) => [fact.name, fact] as const))('%s: recall and chat give the new value, as_of the old one', async (_, fact) => {
    const { agentId, threadId } = await learn(fact);
    const now = await service.recall({ caller: owner, agentId, body: { query: fact.question } });
    const lines = now.memory_context.split('\n');
    expect(lines[0]).toContain(fact.newValue);
    expect(lines[0]).not.toContain(fact.oldValue);
    for (const line of lines) if (line.includes(fact.oldValue)) expect(line).toMatch(/no longer current, replaced by \[\d+\]/);
    const then = await service.recall({ caller: owner, agentId, body: { query: fact.question, as_of: fact.asOf } });
    expect(then.memory_context).toContain(fact.oldValue);
    expect(then.memory_context).not.toContain(fact.newValue);
    const answer = await service.chat({ caller: owner, agentId, threadId, body: { turn_id: 'now', message: fact.question } });
    expect(answer.message).toContain(fact.newValue);
    const past = await service.chat({ caller: owner, agentId, threadId, body: { turn_id: 'then', message: fact.question, as_of: fact.asOf } });
    expect(past.message).toContain(fact.oldValue);
    expect(past.message).not.toContain(fact.newValue);
  });
});
