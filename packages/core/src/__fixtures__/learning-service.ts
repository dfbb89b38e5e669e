import type { Caller } from '../auth/caller.js';
import { createMemoryService, type MemoryService, type MemoryServiceOptions } from '../create-memory-service.js';
import { inMemoryStore } from '../in-memory/store/index.js';
import { silentLogger } from '../service/logger.js';
import type { ObserveInput } from '../schemas/inputs.js';

/** A started service on the in-memory store with one organization, a ready agent and a thread. */
export async function learningService(options: Partial<MemoryServiceOptions> = {}) {
  const service: MemoryService = createMemoryService({ store: inMemoryStore(), logger: silentLogger, ...options });
  await service.start();
  const org = await service.admin.createOrganization({ name: 'Acme' });
  const { key } = await service.admin.createKey({ organizationId: org.organizationId });
  let requests = 0;
  const caller = (endUser?: string): Promise<Caller> =>
    service.authenticate({ authorization: `Bearer ${key}`, endUser, secFetchSite: undefined, requestId: `req_test_${++requests}` });
  const owner = await caller();
  const agent = await service.agents.create({ caller: owner, body: { agent_config: { role: 'assistant', objective: 'remember' } } });
  await service.idle();
  const agentId = agent.agent_id;
  const thread = await service.threads.create({ caller: owner, agentId, body: {} });
  const threadId = thread.thread_id;

  /** Observes and waits until the job settles; resolves the final status. */
  async function observeSettled(observations: ObserveInput['observations'], options: { caller?: Caller; threadId?: string } = {}) {
    const who = options.caller ?? (await caller());
    const accepted = await service.observe({ caller: who, agentId, threadId: options.threadId ?? threadId, body: { observations } });
    await service.idle();
    return service.observationStatus({ caller: who, agentId, threadId: options.threadId ?? threadId, observationId: accepted.observation_id });
  }

  return { service, key, organizationId: org.organizationId, caller, owner, agentId, threadId, observeSettled };
}

/** `n` observations `turn 1` … `turn n`, each a distinct sentence. */
export const turns = (n: number, prefix = 'turn') =>
  Array.from({ length: n }, (_, i) => ({ content: [{ type: 'text' as const, text: `This is ${prefix} ${i + 1} about item${i + 1}.` }] }));
