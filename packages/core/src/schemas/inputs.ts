import type { z } from 'zod';
import type { createAgentBody, patchAgentBody } from './agents.js';
import type { billingQuery } from './billing.js';
import type { finishLearningBody } from './documents.js';
import type { chatBody, learningQuery, observationsQuery, observeAndEnrichBody, observeBody, recallBody } from './observations.js';
import type { memoryForgetBody, memoryGetQuery, memoryListQuery, memoryPatchBody, memorySearchBody } from './memories.js';
import type { logsQuery } from './session.js';
import type { createThreadBody } from './threads.js';
import type { threadTurnsQuery } from './turns.js';

// What each core call accepts, as its wire schema's input type (defaults optional). The core
// validates every body and query itself (a wrong shape is 422 `invalid_request`), so these types
// are for callers' editors and compilers; HTTP passes the parsed JSON through unchanged.

/** `service.agents.create` (POST /v1/agents). */
export type CreateAgentInput = z.input<typeof createAgentBody>;
/** `service.agents.update` (PATCH /v1/agents/{agent_id}): `agent_config` is replaced whole. */
export type UpdateAgentInput = z.input<typeof patchAgentBody>;
/** `service.threads.create`; optional (an empty thread). */
export type CreateThreadInput = z.input<typeof createThreadBody> | undefined;
/** `service.observe`: up to 100 observations. */
export type ObserveInput = z.input<typeof observeBody>;
/** `service.chat`, `service.chatStream`, `service.observeAndRespond`. */
export type ChatInput = z.input<typeof chatBody>;
/** `service.observeAndEnrich`. */
export type ObserveAndEnrichInput = z.input<typeof observeAndEnrichBody>;
/** `service.recall`. */
export type RecallInput = z.input<typeof recallBody>;
/** `service.sources.finishLearning`; optional. */
export type FinishLearningInput = z.input<typeof finishLearningBody> | undefined;
/** `service.threads.learning`: `limit` and `cursor`, as query-string values or numbers. */
export type LearningQuery = z.input<typeof learningQuery>;
/** `service.threads.turns` (an extension): `limit`, `cursor`, `observation_id`. */
export type ThreadTurnsQuery = z.input<typeof threadTurnsQuery>;
/** `service.logs`. */
/** `service.listObservations` (an extension). */
export type ObservationsQuery = z.input<typeof observationsQuery>;
export type LogsQuery = z.input<typeof logsQuery>;
/** `service.billing`. */
export type BillingQuery = z.input<typeof billingQuery>;
/** `service.memories.list`: filters, `limit` and `cursor`, as query-string values. */
export type MemoryListQuery = z.input<typeof memoryListQuery>;
/** `service.memories.get` query (extension, issue 42). */
export type MemoryGetQuery = z.input<typeof memoryGetQuery>;
/** `service.memories.setExpiry` (extension, issue 42). */
export type MemoryPatchInput = z.input<typeof memoryPatchBody>;
export type MemoryForgetInput = z.input<typeof memoryForgetBody>;
/** `service.memories.search`. */
export type MemorySearchInput = z.input<typeof memorySearchBody>;
