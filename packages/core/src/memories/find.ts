import { ownThreadIds, readableThreadIds } from '../agents/memory-scope.js';
import type { Caller } from '../auth/caller.js';
import { sumOf } from '../credits/pricing.js';
import { ServiceError } from '../errors/index.js';
import { isUnexpiredAt } from '../memory-index/memory-index-helpers.js';
import type { MemoryHitRecord } from '../ports/memory-index.js';
import type { AgentRecord, MemoryMarkRecord, MemoryMarkSource } from '../ports/store/index.js';
import { memoryId as memoryIdSchema } from '../schemas/memories.js';
import type { ServiceContext } from '../service/context.js';

/**
 * The thread ids whose memories the caller reads here, or undefined for every memory: a person's
 * own threads, and with `memory_scope: "end_user"` the threads of no person too (memory-scope.ts).
 */
export function reachableThreads(context: ServiceContext, caller: Caller, agent: AgentRecord): Promise<string[] | undefined> {
  return readableThreadIds(context, caller, agent, 'inspect');
}

/**
 * The memory if it exists for the caller, else 404 `not_found` (the same for every reason).
 * `change` (delete, edit, pin, forget, restore) finds only the memories of the caller's own threads:
 * a person reads the shared memories of an `end_user` agent but does not change them. An expired or
 * forgotten memory (issue 42) is found for `change`, and for `read` only with `includeExpired` (audit).
 */
export async function findMemory(context: ServiceContext, caller: Caller, agent: AgentRecord, memoryId: string, purpose: 'read' | 'change' = 'read', includeExpired = false): Promise<MemoryHitRecord> {
  const notFound = new ServiceError('not_found', `Memory ${memoryId} was not found.`);
  if (!memoryIdSchema.safeParse(memoryId).success) throw notFound;
  const [record] = await context.index.get({ agentId: agent.id, ids: [memoryId] });
  if (!record || record.organizationId !== caller.organizationId) throw notFound;
  if (purpose === 'read' && !includeExpired && !isUnexpiredAt(record, context.nowIso())) throw notFound;
  const reachable = purpose === 'read' ? await reachableThreads(context, caller, agent) : await ownThreadIds(context, caller, agent);
  if (reachable !== undefined && !reachable.includes(record.source.threadId)) throw notFound;
  const { vector: _vector, ...hit } = record;
  return hit;
}

/** Credits charged for the turn a memory came from: the charges of its job for that turn index. */
export async function learningCredits(context: ServiceContext, caller: Caller, record: MemoryHitRecord): Promise<string> {
  const jobId = record.provenance.jobId ?? record.source.observationId;
  const entries = await context.store.ledger.listForJob({ organizationId: caller.organizationId, jobId });
  const turn = String(record.source.turnIndex);
  const costs = entries.filter((entry) => entry.kind === 'charge').flatMap((entry) => (entry.turnCosts[turn] === undefined ? [] : [entry.turnCosts[turn]]));
  return costs.length === 0 ? '0' : sumOf(costs);
}

/** Where a memory was learned, as its mark records it (so every erasure path takes the mark too). */
export function markSourceOf(record: Pick<MemoryHitRecord, 'id' | 'source'>): MemoryMarkSource {
  const { source } = record;
  return { memoryId: record.id, threadId: source.threadId, observationId: source.observationId, sourceId: source.kind === 'document' ? source.sourceId : null };
}

/** A mark for a memory that has none yet. */
export function blankMark(record: Pick<MemoryHitRecord, 'id' | 'source' | 'organizationId' | 'agentId'>, now: string): MemoryMarkRecord {
  return { organizationId: record.organizationId, agentId: record.agentId, ...markSourceOf(record), pinned: false, forgotten: null, edited: null, citedAt: null, citedCount: 0, updatedAt: now };
}

/** The marks (issue 42) of these memories of the agent, by memory id. */
export async function marksOf(context: ServiceContext, agentId: string, records: readonly Pick<MemoryHitRecord, 'id'>[]): Promise<Map<string, MemoryMarkRecord>> {
  if (records.length === 0) return new Map();
  const marks = await context.store.memoryMarks.get({ agentId, memoryIds: records.map((record) => record.id) });
  return new Map(marks.map((mark) => [mark.memoryId, mark]));
}
