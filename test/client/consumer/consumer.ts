// A consumer of @memory-agents/client, compiled by test/client/consumer.test.ts against the built
// package under strict tsc: the calls derived from the contract type their options and results.
// Each `@ts-expect-error` is a mistake the types must refuse (tsc fails if one is accepted).
import { createClient, MemoryAgentsError, type Agent, type ChatStreamEvent, type MemorySearchHit, type ObservationStatus } from '@memory-agents/client';

export async function tour(apiKey: string): Promise<string> {
  const client = createClient({ baseUrl: 'http://127.0.0.1:8787', apiKey, retries: { max: 3, maxDelayMs: 5_000 } });
  const created = await client.agents.create({ agent_config: { role: 'support assistant', objective: 'remember' } });
  const agent: Agent = await client.agents.waitUntilReady({ agentId: created.agent_id, timeoutMs: 60_000 });
  const agentId = agent.agent_id;
  const { thread_id: threadId } = await client.threads.create({ agentId, title: 'Consumer', endUser: 'alice' });
  const accepted = await client.threads.observe({
    agentId,
    threadId,
    observations: [{ content: [{ type: 'text', text: 'I moved to Berlin.' }] }],
    idempotencyKey: 'k-1',
  });
  const status: ObservationStatus = await client.waitForObservation({ agentId, threadId, observationId: accepted.observation_id });
  const hits: MemorySearchHit[] = (await client.memories.search({ agentId, query: 'Berlin', limit: 3 })).hits;
  const page = await client.memories.list({ agentId, limit: 10 });
  const nextCursor: string | null = page.next_cursor;
  const events: ChatStreamEvent[] = [];
  for await (const event of client.threads.chatStream({ agentId, threadId, turn_id: 't1', message: 'Where?', signal: AbortSignal.timeout(30_000) })) events.push(event);
  const upload = await client.threads.observeFile({ agentId, threadId, file: new Blob(['# Notes']), filename: 'notes.md', max_chars: 500, strategy: 'structure' });
  const original = await client.sources.get({ agentId, sourceId: upload.source_id });
  const deleted: void = await client.memories.delete({ agentId, memoryId: hits[0]?.memory.memory_id ?? 'mem_x' });
  const session = await client.session.get();

  // @ts-expect-error a path id is required
  await client.threads.get({ agentId });
  // @ts-expect-error the positional form is gone
  await client.agents.get(agentId);
  // @ts-expect-error a body field of the wrong type
  await client.memories.search({ agentId, query: 'x', limit: 'three' });
  // @ts-expect-error idempotencyKey only on calls that honour one
  await client.agents.get({ agentId, idempotencyKey: 'k' });
  // @ts-expect-error an unknown field
  await client.threads.chat({ agentId, threadId, turn_id: 't', message: 'hi', temperature: 2 });

  try {
    await client.agents.get({ agentId: 'agent_missing' });
  } catch (error) {
    if (MemoryAgentsError.isInstance(error)) return error.code;
  }
  return [status.status, nextCursor, events.length, original.mediaType, deleted, session.organization_id].join(' ');
}
