import { CONTRACT } from '@memory-agents/core/contract';
import { streamWithCitationLinks, withCitationLinks } from '../citation-links.js';
import { route } from '../route.js';

const { threads, agents } = CONTRACT;

export const observationRoutes = [
  route(threads.observe, async ({ service, caller, params, body, headers }) => ({
    body: await service.observe({ caller, agentId: params.agent_id, threadId: params.thread_id, body, idempotencyKey: headers['idempotency-key'] }),
  })),
  route(threads.observationStatus, async ({ service, caller, params }) => ({
    body: await service.observationStatus({ caller, agentId: params.agent_id, threadId: params.thread_id, observationId: params.observation_id }),
  })),
  route(threads.observationReceipt, async ({ service, caller, params }) => ({
    body: await service.observationReceipt({ caller, agentId: params.agent_id, threadId: params.thread_id, observationId: params.observation_id }),
  })),
  route(threads.listObservations, async ({ service, caller, params, query }) => ({
    body: await service.listObservations({ caller, agentId: params.agent_id, threadId: params.thread_id, query }),
  })),
  route(threads.learning, async ({ service, caller, params, query }) => ({
    body: await service.threads.learning({ caller, agentId: params.agent_id, threadId: params.thread_id, query }),
  })),
  route(threads.turns, async ({ service, caller, params, query }) => ({
    body: await service.threads.turns({ caller, agentId: params.agent_id, threadId: params.thread_id, query }),
  })),
  route(threads.chat, async ({ service, caller, params, body, signal, basePath }) => ({
    body: withCitationLinks(await service.chat({ caller, agentId: params.agent_id, threadId: params.thread_id, body, abortSignal: signal }), basePath),
  })),
  route(threads.chatStream, async ({ service, caller, params, body, signal, basePath }) => ({
    stream: streamWithCitationLinks(await service.chatStream({ caller, agentId: params.agent_id, threadId: params.thread_id, body, abortSignal: signal }), basePath),
  })),
  route(threads.observeAndRespond, async ({ service, caller, params, body, signal, headers, basePath }) => ({
    body: withCitationLinks(
      await service.observeAndRespond({ caller, agentId: params.agent_id, threadId: params.thread_id, body, abortSignal: signal, idempotencyKey: headers['idempotency-key'] }),
      basePath,
    ),
  })),
  route(threads.observeAndEnrich, async ({ service, caller, params, body, headers, basePath }) => ({
    body: withCitationLinks(await service.observeAndEnrich({ caller, agentId: params.agent_id, threadId: params.thread_id, body, idempotencyKey: headers['idempotency-key'] }), basePath),
  })),
  route(agents.recall, async ({ service, caller, params, body, basePath }) => ({
    body: withCitationLinks(await service.recall({ caller, agentId: params.agent_id, body }), basePath),
  })),
];
