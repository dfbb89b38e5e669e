/**
 * Embedding memory agents in your own Node program: no HTTP, the core called directly.
 * Run: npx tsx examples/embed-core.ts
 */
import { createMemoryService, inMemoryStore, type Caller, type MemoryService } from '@memory-agents/core';

/** Waits until an observation job is final (learning is asynchronous). */
export async function waitForLearning(service: MemoryService, caller: Caller, agentId: string, threadId: string, observationId: string) {
  for (;;) {
    const status = await service.observationStatus({ caller, agentId, threadId, observationId });
    if (status.status === 'committed' || status.status === 'failed' || status.status === 'cancelled') return status;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

export async function main(): Promise<string> {
  const service = createMemoryService({ store: inMemoryStore() });
  await service.start();
  try {
    // One-time administration: an organization and its key (the CLI does this for the server).
    const org = await service.admin.createOrganization({ name: 'Acme' });
    const { key } = await service.admin.createKey({ organizationId: org.organizationId });
    const caller = await service.authenticate({ authorization: `Bearer ${key}`, endUser: 'alice@example.com', secFetchSite: undefined, requestId: 'example' });

    const agent = await service.agents.create({ caller, body: { agent_config: { role: 'assistant', objective: 'remember what Alice tells us' } } });
    await service.idle(); // creation work finishes in the background
    const thread = await service.threads.create({ caller, agentId: agent.agent_id, body: { title: 'Onboarding' } });

    const accepted = await service.observe({
      caller,
      agentId: agent.agent_id,
      threadId: thread.thread_id,
      body: {
        observations: [
          { speaker: 'alice', timestamp: '2024-03-04T10:00:00Z', content: [{ type: 'text', text: 'Our invoices go to billing@acme.test and are due in 30 days.' }] },
          { speaker: 'alice', timestamp: '2024-03-04T10:01:00Z', content: [{ type: 'text', text: 'I moved to the Berlin office last week.' }] },
        ],
      },
    });
    await waitForLearning(service, caller, agent.agent_id, thread.thread_id, accepted.observation_id);

    const answer = await service.chat({ caller, agentId: agent.agent_id, threadId: thread.thread_id, body: { turn_id: 't1', message: 'Where do invoices go?' } });
    return `${answer.message}\n${answer.citations.map((c) => `  cited: ${c.label} (${c.source_id}, verified ${c.verified})`).join('\n')}`;
  } finally {
    await service.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(await main());
