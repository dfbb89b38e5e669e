import { schemas, type ErrorCode } from '@memory-agents/core';
import { streamWithCitationLinks, withCitationLinks } from '../citation-links.js';
import { route } from '../route.js';

const THREAD = '/v1/agents/{agent_id}/threads/{thread_id}';

/** What an answering call can answer besides the common codes (images: 404 unknown id, 413 over the turn limits). */
const ANSWER_CODES: readonly ErrorCode[] = [
  'agent_not_found', 'agent_not_ready', 'thread_not_found', 'not_found', 'payload_too_large', 'payment_required', 'answer_model_unavailable',
];

export const observationRoutes = [
  route({
    method: 'POST',
    path: `${THREAD}/observe`,
    operationId: 'observe',
    tag: 'Learning',
    rateLimit: 'observe',
    summary: 'Send observations to learn (202 once stored; poll the status)',
    status: 202,
    body: schemas.observeBody,
    response: schemas.observeAccepted,
    headers: ['X-SP-End-User', 'Idempotency-Key'],
    codes: ['agent_not_found', 'agent_not_ready', 'thread_not_found', 'conflict', 'payment_required'],
    handler: async ({ service, caller, params, body, headers }) => ({
      body: await service.observe({ caller, agentId: params.agent_id, threadId: params.thread_id, body: body as schemas.ObserveInput, idempotencyKey: headers['idempotency-key'] }),
    }),
  }),
  route({
    method: 'GET',
    path: `${THREAD}/observe/{observation_id}/status`,
    operationId: 'getObservationStatus',
    tag: 'Learning',
    summary: 'Progress of an observation job',
    status: 200,
    response: schemas.observationStatus,
    headers: ['X-SP-End-User'],
    codes: ['agent_not_found', 'thread_not_found', 'not_found'],
    handler: async ({ service, caller, params }) => ({
      body: await service.observationStatus({ caller, agentId: params.agent_id, threadId: params.thread_id, observationId: params.observation_id }),
    }),
  }),
  route({
    method: 'GET',
    path: `${THREAD}/observations`,
    operationId: 'listObservations',
    tag: 'Learning',
    summary: 'The thread\'s observation jobs, newest first, each as its status (an extension)',
    status: 200,
    query: schemas.observationsQuery,
    response: schemas.observationListResponse,
    headers: ['X-SP-End-User'],
    codes: ['agent_not_found', 'thread_not_found'],
    handler: async ({ service, caller, params, query }) => ({
      body: await service.listObservations({ caller, agentId: params.agent_id, threadId: params.thread_id, query }),
    }),
  }),
  route({
    method: 'GET',
    path: `${THREAD}/learning`,
    operationId: 'getThreadLearning',
    tag: 'Learning',
    summary: 'Every turn of the thread that was not learned, newest first',
    status: 200,
    query: schemas.learningQuery,
    response: schemas.learningRecordResponse,
    headers: ['X-SP-End-User'],
    codes: ['agent_not_found', 'thread_not_found'],
    handler: async ({ service, caller, params, query }) => ({
      body: await service.threads.learning({ caller, agentId: params.agent_id, threadId: params.thread_id, query }),
    }),
  }),
  route({
    method: 'POST',
    path: `${THREAD}/chat`,
    operationId: 'chat',
    tag: 'Chat',
    rateLimit: 'chat',
    summary: 'Answer a message from memory, with citations',
    status: 200,
    body: schemas.chatBody,
    response: schemas.chatResponse,
    headers: ['X-SP-End-User'],
    codes: ANSWER_CODES,
    handler: async ({ service, caller, params, body, signal, basePath }) => ({
      body: withCitationLinks(await service.chat({ caller, agentId: params.agent_id, threadId: params.thread_id, body: body as schemas.ChatInput, abortSignal: signal }), basePath),
    }),
  }),
  route({
    method: 'POST',
    path: `${THREAD}/chat/stream`,
    operationId: 'chatStream',
    tag: 'Chat',
    rateLimit: 'chat',
    summary: 'Chat as server-sent events: context, delta..., done (or error)',
    status: 200,
    body: schemas.chatBody,
    response: schemas.chatResponse,
    streams: true,
    headers: ['X-SP-End-User'],
    codes: ANSWER_CODES,
    handler: async ({ service, caller, params, body, signal, basePath }) => ({
      stream: streamWithCitationLinks(await service.chatStream({ caller, agentId: params.agent_id, threadId: params.thread_id, body: body as schemas.ChatInput, abortSignal: signal }), basePath),
    }),
  }),
  route({
    method: 'POST',
    path: `${THREAD}/observe-and-respond`,
    operationId: 'observeAndRespond',
    tag: 'Chat',
    rateLimit: 'observe_respond',
    summary: 'Answer like chat and learn the message and the answer',
    status: 200,
    body: schemas.chatBody,
    response: schemas.observeAndRespondResponse,
    headers: ['X-SP-End-User', 'Idempotency-Key'],
    codes: [...ANSWER_CODES, 'conflict'],
    handler: async ({ service, caller, params, body, signal, headers, basePath }) => ({
      body: withCitationLinks(await service.observeAndRespond({ caller, agentId: params.agent_id, threadId: params.thread_id, body: body as schemas.ChatInput, abortSignal: signal, idempotencyKey: headers['idempotency-key'] }), basePath),
    }),
  }),
  route({
    method: 'POST',
    path: `${THREAD}/observe-and-enrich`,
    operationId: 'observeAndEnrich',
    tag: 'Chat',
    rateLimit: 'observe_respond',
    summary: 'Learn the message and return memory context without an answer',
    status: 200,
    body: schemas.observeAndEnrichBody,
    response: schemas.observeAndEnrichResponse,
    headers: ['X-SP-End-User', 'Idempotency-Key'],
    codes: ['agent_not_found', 'agent_not_ready', 'thread_not_found', 'payment_required', 'conflict'],
    handler: async ({ service, caller, params, body, headers, basePath }) => ({
      body: withCitationLinks(await service.observeAndEnrich({ caller, agentId: params.agent_id, threadId: params.thread_id, body: body as schemas.ObserveAndEnrichInput, idempotencyKey: headers['idempotency-key'] }), basePath),
    }),
  }),
  route({
    method: 'POST',
    path: '/v1/agents/{agent_id}/recall',
    operationId: 'recall',
    tag: 'Chat',
    rateLimit: 'chat',
    summary: 'Return the memory context and citations retrieval builds for a query, learning nothing',
    status: 200,
    body: schemas.recallBody,
    response: schemas.recallResponse,
    headers: ['X-SP-End-User'],
    codes: ['agent_not_found', 'agent_not_ready'],
    handler: async ({ service, caller, params, body, basePath }) => ({
      body: withCitationLinks(await service.recall({ caller, agentId: params.agent_id, body: body as schemas.RecallInput }), basePath),
    }),
  }),
];
