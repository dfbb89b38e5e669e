import type { z } from 'zod';
import type { agent, agentDeleteAccepted, agentList } from './agents.js';
import type { billing } from './billing.js';
import type { chatStreamDeltaEvent, chatStreamErrorEvent } from './chat-stream.js';
import type { documentIngestResponse, imageUploaded, sourcesResponse } from './documents.js';
import type { chatResponse, learningRecordResponse, observationListResponse, observationReceipt, observationStatus, observeAccepted, observeAndEnrichResponse, observeAndRespondResponse, recallResponse } from './observations.js';
import type { memory, memoryDetail, memoryHistory, memoryList, memorySearchResponse, memorySignals, memorySource } from './memories.js';
import type { logsResponse, session } from './session.js';
import type { thread, threadDeleteAccepted } from './threads.js';
import type { threadTurnsResponse } from './turns.js';

// What each core call returns, as its wire schema's output type. The calls that cite memories
// (chat, chat stream, observe-and-respond, observe-and-enrich, recall) return `Citation` (data,
// no URL) where the wire has `{ ..., href, ... }`: the HTTP layer builds `href` under its mount
// prefix (docs/decisions.md "Citation links are built by http").

/**
 * What a citation points at: the stored original of a document (`source`, with the page the
 * memory came from when the format has pages) or the observation a conversation turn came with
 * (`observation`, with the 0-based turn index).
 */
export type CitationTarget =
  | { kind: 'source'; agent_id: string; source_id: string; page: number | null }
  | { kind: 'observation'; agent_id: string; thread_id: string; observation_id: string; turn_index: number };

/**
 * A citation as the in-process API returns it: the spec's `Citation` without `href`, plus the
 * `target` an href is made of (`citationHref(target)` in `@memory-agents/http` gives the path
 * the HTTP API serves it at).
 */
export type Citation = { source_id: string; label: string; media_type: string; verified: boolean; target: CitationTarget };

/** The wire body `T` with its `citations` as the in-process API returns them. */
export type WithCitationData<T extends { citations: unknown[] }> = Omit<T, 'citations'> & { citations: Citation[] };

/** `service.agents.create`, `get`, `update`. */
export type AgentOutput = z.output<typeof agent>;
/** `service.agents.list`. */
export type AgentListOutput = z.output<typeof agentList>;
/** `service.agents.delete` (202). */
export type AgentDeleteOutput = z.output<typeof agentDeleteAccepted>;
/** `service.threads.create`, `get`. */
export type ThreadOutput = z.output<typeof thread>;
/** `service.threads.delete` (202). */
export type ThreadDeleteOutput = z.output<typeof threadDeleteAccepted>;
/** `service.threads.learning`: the thread's turns that were not learned, newest first. */
export type LearningRecordOutput = z.output<typeof learningRecordResponse>;
/** `service.observe` (202). */
export type ObserveOutput = z.output<typeof observeAccepted>;
/** `service.observationStatus`. */
export type ObservationStatusOutput = z.output<typeof observationStatus>;
/** `service.threads.turns` (an extension). */
export type ThreadTurnsOutput = z.output<typeof threadTurnsResponse>;
/** `service.listObservations` (an extension). */
export type ObservationListOutput = z.output<typeof observationListResponse>;
/** `service.observationReceipt`. */
export type ObservationReceiptOutput = z.output<typeof observationReceipt>;
/** `service.chat`. */
export type ChatOutput = WithCitationData<z.output<typeof chatResponse>>;
/** `service.observeAndRespond`. */
export type ObserveAndRespondOutput = WithCitationData<z.output<typeof observeAndRespondResponse>>;
/** `service.observeAndEnrich`. */
export type ObserveAndEnrichOutput = WithCitationData<z.output<typeof observeAndEnrichResponse>>;
/** `service.recall`. */
export type RecallOutput = WithCitationData<z.output<typeof recallResponse>>;
/**
 * One event of `service.chatStream`: `context` once, `delta` zero or more times, then `done` or
 * `error` (the wire's `ChatStreamEvent`, with citations as data).
 */
export type ChatStreamEventOutput =
  | { event: 'context'; data: { memory_context: string; citations: Citation[] } }
  | z.output<typeof chatStreamDeltaEvent>
  | { event: 'done'; data: ChatOutput }
  | z.output<typeof chatStreamErrorEvent>;
/** `service.observeFile` and `service.sources.finishLearning` (202). */
export type DocumentIngestOutput = z.output<typeof documentIngestResponse>;
/** `service.sources.list`. */
export type SourcesListOutput = z.output<typeof sourcesResponse>;
/** `service.images.upload` (201). */
export type ImageUploadOutput = z.output<typeof imageUploaded>;
/** `service.session`. */
export type SessionOutput = z.output<typeof session>;
/** `service.logs`. */
export type LogsOutput = z.output<typeof logsResponse>;
/** `service.billing`. */
export type BillingOutput = z.output<typeof billing>;

/** `service.memories.list`. */
export type MemoryListOutput = z.output<typeof memoryList>;
/** One memory of a list or a search hit. */
export type MemoryOutput = z.output<typeof memory>;
/** `service.memories.get`: the memory and its learning credits. */
export type MemoryDetailOutput = z.output<typeof memoryDetail>;
export type MemoryHistoryOutput = z.output<typeof memoryHistory>;
/** Where a memory was learned from. */
export type MemorySourceOutput = z.output<typeof memorySource>;
/** What each retrieval signal added to a search hit's score. */
export type MemorySignalsOutput = z.output<typeof memorySignals>;
/** `service.memories.search`. */
export type MemorySearchOutput = z.output<typeof memorySearchResponse>;
