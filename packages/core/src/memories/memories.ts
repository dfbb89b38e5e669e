import { createHash } from 'node:crypto';
import { findAgent, findReadyAgent, findThread } from '../agents/lookup.js';
import type { Caller } from '../auth/caller.js';
import { ServiceError } from '../errors/index.js';
import { scrubNeighbourKeywords } from '../erasures/neighbour-keywords.js';
import { dropExports } from '../export/erased-exports.js';
import { queryEmbedder } from '../chat/query-embedder.js';
import type { MemoryListRequest as IndexListRequest } from '../ports/memory-index.js';
import { DEFAULT_MAX_CONTEXT_CHARS, retrieve } from '../retrieval/retrieve.js';
import { memoryGetQuery, memoryListQuery, memorySearchBody } from '../schemas/memories.js';
import type { MemoryDetailOutput, MemoryListOutput, MemoryOutput, MemorySearchOutput } from '../schemas/outputs.js';
import type { MemoryService } from '../memory-service.js';
import type { ServiceContext } from '../service/context.js';
import type { ListMemoriesRequest, MemoryRequest, SearchMemoriesRequest } from '../service/requests.js';
import { parseBody, parseQuery } from '../validation/parse.js';
import { findMemory, learningCredits, marksOf, reachableThreads } from './find.js';
import { createMemoryLifecycle } from './lifecycle.js';
import { memoryHistory } from './history.js';
import { decayFor, withDecay } from './decay.js';
import { presentMemory, presentSignals } from './present.js';

/** Hits a memories search returns when the body names no `limit`. */
export const DEFAULT_MEMORY_SEARCH_LIMIT = 10;

/**
 * The memories area (issue 30): what an agent knows, where each memory came from, why it ranks
 * where it does for a query, and deleting one. Tenancy as everywhere: another organization's agent
 * is 404 `agent_not_found`; with `X-SP-End-User` only memories learned in the threads that person
 * reaches exist, and with `memory_scope: "end_user"` those of threads of no person too (anything
 * else is 404 `not_found`, exactly as an unknown id).
 */
export function createMemories(context: ServiceContext) {
  const memories = {
    /** `GET /v1/agents/{agent_id}/memories`: newest first, filtered, one page at a time. */
    async list({ caller, agentId, query = {} }: ListMemoriesRequest): Promise<MemoryListOutput> {
      const input = parseListQuery(query);
      const agent = await findAgent(context, caller, agentId);
      let threadIds = await reachableThreads(context, caller, agent);
      if (input.thread_id !== undefined) {
        // Another person's thread is 404 exactly as an unknown one (findThread).
        const thread = await findThread(context, caller, agent, input.thread_id);
        threadIds = [thread.id];
      }
      if (input.end_user_id !== undefined) {
        const owned = (await context.store.threads.list({ agentId: agent.id, endUserId: input.end_user_id })).map((thread) => thread.id);
        threadIds = threadIds === undefined ? owned : threadIds.filter((id) => owned.includes(id));
      }
      const filters = {
        ...(threadIds === undefined ? {} : { threadIds }),
        ...(input.source_id === undefined ? {} : { sourceId: input.source_id }),
        ...(input.observation_id === undefined ? {} : { observationId: input.observation_id }),
        ...(input.speaker === undefined ? {} : { speaker: input.speaker }),
        ...(input.learned_after === undefined ? {} : { learnedAfter: input.learned_after }),
        ...(input.learned_before === undefined ? {} : { learnedBefore: input.learned_before }),
        ...(input.occurred_after === undefined ? {} : { occurredAfter: input.occurred_after }),
        ...(input.occurred_before === undefined ? {} : { occurredBefore: input.occurred_before }),
        ...(input.text_contains === undefined ? {} : { textContains: input.text_contains }),
        ...(input.include_history ? { includeHistory: true } : {}),
        // Expired memories (issue 42) are gone at the service clock's instant unless asked for.
        ...(input.include_expired ? {} : { now: context.nowIso() }),
      } satisfies Omit<IndexListRequest, 'agentId' | 'limit' | 'cursor'>;
      const fingerprint = filterFingerprint(agent.id, caller.endUserId, input);
      const cursor = input.cursor === undefined ? null : openCursor(input.cursor, agent.id, fingerprint);
      if (threadIds !== undefined && threadIds.length === 0) return { agent_id: agent.id, memories: [], next_cursor: null };
      const listPage = async (limit: number, at: string | null) => {
        try {
          return await context.index.list({ agentId: agent.id, limit, cursor: at, ...filters });
        } catch (error) {
          // A cursor the index did not make: the shared decoder (decodeListCursor) throws RangeError.
          if (at !== null && error instanceof RangeError) throw invalidCursor();
          throw error;
        }
      };
      // A category (issue 44) lives in the memories' marks: index pages are read (each no larger
      // than what is still missing) and filtered until the page is full, the end, or 20 reads.
      const memories: MemoryOutput[] = [];
      let next: string | null = cursor;
      for (let reads = 0; reads < (input.category === undefined ? 1 : 20); reads++) {
        const page = await listPage(input.limit - memories.length, next);
        const marks = await marksOf(context, agent.id, page.records);
        for (const record of page.records) {
          const shown = presentMemory(record, marks.get(record.id));
          if (input.category === undefined || shown.category === input.category) memories.push(shown);
        }
        next = page.nextCursor;
        if (next === null || memories.length >= input.limit) break;
      }
      return { agent_id: agent.id, memories, next_cursor: next === null ? null : sealCursor(next, agent.id, fingerprint) };
    },

    /** `GET .../memories/{memory_id}`: the memory, its provenance and what learning it cost. */
    async get({ caller, agentId, memoryId, query = {} }: MemoryRequest): Promise<MemoryDetailOutput> {
      const input = parseQuery(memoryGetQuery, query);
      const agent = await findAgent(context, caller, agentId);
      const record = await findMemory(context, caller, agent, memoryId, 'read', input.include_expired === true);
      const marks = await marksOf(context, agent.id, [record]);
      return { ...presentMemory(record, marks.get(record.id)), learning_credits: await learningCredits(context, caller, record) };
    },

    /** `GET .../memories/{memory_id}/history` (extension): every version of its fact, oldest first. */
    history: (request: MemoryRequest) => memoryHistory(context, request),

    /**
     * `POST .../memories/search`: chat's retrieval for `query` (the same ranking), each hit with
     * its rank, fused score and what every signal added to it.
     */
    async search({ caller, agentId, body }: SearchMemoriesRequest): Promise<MemorySearchOutput> {
      const input = parseBody(memorySearchBody, body);
      const agent = await findReadyAgent(context, caller, agentId);
      const threadIds = await reachableThreads(context, caller, agent);
      if (threadIds !== undefined && threadIds.length === 0) return { agent_id: agent.id, memory_context: '', hits: [] };
      const embedder = await queryEmbedder(context.index, context.embedder);
      const result = await retrieve(context.index, embedder, {
        agentId: agent.id,
        query: input.query,
        maxContextChars: DEFAULT_MAX_CONTEXT_CHARS,
        options: context.retrieval,
        explain: true,
        ...(input.as_of === undefined ? {} : { asOf: input.as_of }),
        ...(threadIds === undefined ? {} : { threadIds }),
        unexpiredAt: input.include_expired === true ? null : context.nowIso(),
        ...(input.as_of === undefined ? withDecay(decayFor(context, agent)) : {}),
      });
      const limit = input.limit ?? DEFAULT_MEMORY_SEARCH_LIMIT;
      const marks = await marksOf(context, agent.id, result.ranked.slice(0, limit).map((item) => item.record));
      return {
        agent_id: agent.id,
        memory_context: result.memoryContext,
        hits: result.ranked.slice(0, limit).map((item, i) => ({
          rank: i + 1,
          score: item.score,
          signals: presentSignals(item.contributions),
          in_memory_context: i < result.packed.length,
          memory: presentMemory(item.record, marks.get(item.record.id)),
        })),
      };
    },

    /** `DELETE .../memories/{memory_id}` (204): the memory is no longer found, listed or retrieved. */
    async delete({ caller, agentId, memoryId }: MemoryRequest): Promise<void> {
      const agent = await findAgent(context, caller, agentId);
      const record = await findMemory(context, caller, agent, memoryId, 'change');
      // Its words leave the neighbours' keywords first (a failure here leaves it deletable again),
      // then the memory, then the exports that could hold it (issue 41).
      await scrubNeighbourKeywords(context, agent.id, [record]);
      await context.index.deleteBy({ agentId: agent.id, ids: [record.id] });
      await dropExports(context, caller.organizationId, agent.id);
      await context.store.memoryMarks.delete({ agentId: agent.id, memoryIds: [record.id] });
    },

    ...createMemoryLifecycle(context),
  } satisfies MemoryService['memories'];

  return { memories };
}

/**
 * The list query: `limit` out of 1..100 is 400 (spec "Limits": `limit` on list calls); anything
 * else the schema refuses (an unknown parameter, a malformed id or date) is 422.
 */
function parseListQuery(query: Record<string, unknown>) {
  if (query.limit !== undefined) parseQuery(memoryListQuery.pick({ limit: true }), { limit: query.limit });
  return parseBody(memoryListQuery, query, 'query');
}

type ListInput = ReturnType<typeof parseListQuery>;

/** A hash of what a page was asked with (every filter, and who asked), bound into its cursor. */
function filterFingerprint(agentId: string, endUserId: string | null, input: ListInput): string {
  const { limit: _limit, cursor: _cursor, ...filters } = input;
  const canonical = JSON.stringify([agentId, endUserId, Object.entries(filters).sort(([a], [b]) => (a < b ? -1 : 1))]);
  return createHash('sha256').update(canonical).digest('base64url').slice(0, 22);
}

/** The index's cursor wrapped with the agent and the filters' hash (base64url JSON). */
function sealCursor(indexCursor: string, agentId: string, fingerprint: string): string {
  return Buffer.from(JSON.stringify({ a: agentId, f: fingerprint, c: indexCursor })).toString('base64url');
}

/** The index's cursor out of `cursor`, or 422 when it was not made by this list with these filters. */
function openCursor(cursor: string, agentId: string, fingerprint: string): string {
  const invalid = invalidCursor();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalid;
  }
  if (typeof parsed !== 'object' || parsed === null) throw invalid;
  const { a, f, c } = parsed as Record<string, unknown>;
  if (a !== agentId || f !== fingerprint || typeof c !== 'string') throw invalid;
  return c;
}

function invalidCursor(): ServiceError {
  return new ServiceError('invalid_request', 'cursor is not a next_cursor this list returned for this agent and these filters; start again without cursor.', { status: 422 });
}

export type Memories = ReturnType<typeof createMemories>;
