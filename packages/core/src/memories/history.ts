import { findAgent } from '../agents/lookup.js';
import { isUnexpiredAt } from '../memory-index/memory-index-helpers.js';
import type { MemoryHitRecord } from '../ports/memory-index.js';
import { memoryGetQuery } from '../schemas/memories.js';
import type { MemoryHistoryOutput } from '../schemas/outputs.js';
import type { ServiceContext } from '../service/context.js';
import type { MemoryRequest } from '../service/requests.js';
import { parseQuery } from '../validation/parse.js';
import { findMemory, marksOf, reachableThreads } from './find.js';
import { presentMemory } from './present.js';

/** Most versions a history lists (the newest ones; `truncated` says when older ones were left out). */
export const MAX_HISTORY_VERSIONS = 100;
const PAGE = 1000;

/**
 * `GET .../memories/{memory_id}/history` (extension): the versions of the fact a memory holds,
 * oldest first. A version is linked to the next by `superseded_by` (an edit writes the new text as
 * a memory that supersedes the old; learning and maintenance runs supersede an older statement of
 * the same speaker), so the history is every memory connected to this one through those links:
 * the ones it replaced, back to the first, and the ones that replaced it. The links are read from
 * the speaker's memories, history included (supersession stays within one speaker's statements).
 * As `GET .../memories/{memory_id}`: 404 `not_found` for a memory the caller does not reach, and
 * expired or forgotten versions only with `include_expired`; a person sees only versions learned
 * in threads they reach.
 */
export async function memoryHistory(context: ServiceContext, { caller, agentId, memoryId, query = {} }: MemoryRequest): Promise<MemoryHistoryOutput> {
  const input = parseQuery(memoryGetQuery, query);
  const agent = await findAgent(context, caller, agentId);
  const includeExpired = input.include_expired === true;
  const start = await findMemory(context, caller, agent, memoryId, 'read', includeExpired);
  const reachable = await reachableThreads(context, caller, agent);
  const now = context.nowIso();
  const visible = (record: MemoryHitRecord) =>
    (includeExpired || isUnexpiredAt(record, now)) && (reachable === undefined || reachable.includes(record.source.threadId));

  const byId = new Map<string, MemoryHitRecord>([[start.id, start]]);
  const replacedBy = new Map<string, MemoryHitRecord[]>();
  let cursor: string | null = null;
  do {
    const page = await context.index.list({ agentId: agent.id, limit: PAGE, cursor, includeHistory: true, ...(start.speaker ? { speaker: start.speaker } : {}) });
    for (const record of page.records) {
      byId.set(record.id, record);
      if (record.supersededBy) replacedBy.set(record.supersededBy, [...(replacedBy.get(record.supersededBy) ?? []), record]);
    }
    cursor = page.nextCursor;
  } while (cursor !== null);

  // The connected versions: back through what each replaced, forward through `superseded_by`.
  const chain = new Map<string, MemoryHitRecord>([[start.id, start]]);
  const older = [start];
  while (older.length > 0) {
    for (const previous of replacedBy.get(older.pop()!.id) ?? []) {
      if (chain.has(previous.id)) continue;
      chain.set(previous.id, previous);
      older.push(previous);
    }
  }
  for (let current = start; current.supersededBy && !chain.has(current.supersededBy); ) {
    const next = byId.get(current.supersededBy) ?? (await context.index.get({ agentId: agent.id, ids: [current.supersededBy] }))[0];
    if (!next) break;
    chain.set(next.id, next);
    current = next;
  }

  const versions = [...chain.values()]
    .filter((record) => record.id === start.id || visible(record))
    .sort((a, b) => (a.createdAt === b.createdAt ? (a.id < b.id ? -1 : 1) : a.createdAt < b.createdAt ? -1 : 1));
  const kept = versions.slice(-MAX_HISTORY_VERSIONS);
  const marks = await marksOf(context, agent.id, kept);
  return {
    agent_id: agent.id,
    memory_id: start.id,
    versions: kept.map(({ vector: _vector, ...record }: MemoryHitRecord & { vector?: unknown }) => presentMemory(record, marks.get(record.id))),
    truncated: versions.length > kept.length,
  };
}
