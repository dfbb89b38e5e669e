import { describe, expect, expectTypeOf, it } from 'vitest';
import { createMemoryService } from './create-memory-service.js';
import { inMemoryStore } from './in-memory/store/index.js';
import type { MemoryService } from './memory-service.js';
import type { ChatInput } from './schemas/inputs.js';
import type { ChatOutput, Citation, RecallOutput } from './schemas/outputs.js';

// The interface and the object the factory builds name the same members (a member added to one
// and not the other fails to compile or fails here).
const MEMBERS = {
  admin: true, agents: true, threads: true, memories: true, observe: true, observationStatus: true, observationReceipt: true, listObservations: true, chat: true, chatStream: true,
  observeAndRespond: true, observeAndEnrich: true, recall: true, retrieve: true, observeFile: true, sources: true,
  images: true, erasures: true, webhooks: true, exports: true, authenticate: true, as: true, session: true, billing: true, limits: true, logs: true, start: true,
  stop: true, idle: true, ready: true, reembedding: true, sweepMemories: true, maintainIdle: true, maintenance: true, review: true,
} satisfies Record<keyof MemoryService, true>;

describe('MemoryService', () => {
  it('createMemoryService builds exactly the members the interface declares', () => {
    const service = createMemoryService({ store: inMemoryStore() });
    expect(Object.keys(service).sort()).toEqual(Object.keys(MEMBERS).sort());
    expectTypeOf(createMemoryService).returns.toEqualTypeOf<MemoryService>();
  });

  it('takes one request object with the wire input type as `body`, and returns citations as data', async () => {
    expectTypeOf<Parameters<MemoryService['chat']>[0]['body']>().toEqualTypeOf<ChatInput>();
    expectTypeOf<Awaited<ReturnType<MemoryService['chat']>>>().toEqualTypeOf<ChatOutput>();
    expectTypeOf<RecallOutput['citations'][number]>().toEqualTypeOf<Citation>();
    expectTypeOf<Citation>().not.toHaveProperty('href');

    const service = createMemoryService({ store: inMemoryStore() });
    await service.start();
    const org = await service.admin.createOrganization({ name: 'Acme' });
    const caller = await service.as(org.organizationId);
    const agent = await service.agents.create({ caller, body: { agent_config: { role: 'r', objective: 'o' } } });
    await service.idle();
    const thread = await service.threads.create({ caller, agentId: agent.agent_id });
    const accepted = await service.observe({ caller, agentId: agent.agent_id, threadId: thread.thread_id, body: { observations: [{ speaker: 'ana', content: [{ type: 'text', text: 'Invoices go to billing@acme.test.' }] }] } });
    await service.idle();
    const recalled = await service.recall({ caller, agentId: agent.agent_id, body: { query: 'Where do invoices go?' } });
    expect(recalled.citations[0]).toEqual({
      source_id: accepted.observation_id,
      label: expect.stringContaining('ana'),
      media_type: 'text/plain',
      verified: true,
      target: { kind: 'observation', agent_id: agent.agent_id, thread_id: thread.thread_id, observation_id: accepted.observation_id, turn_index: 0 },
    });
    await service.stop();
  });
});
