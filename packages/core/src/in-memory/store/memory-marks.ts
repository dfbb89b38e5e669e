import { copy, type State } from './state.js';
import type { MemoryMarkRecord, MemoryMarkStore } from '../../ports/store/index.js';

/** A stored mark as `get` returns it: the fields added later (issue 44) null when never set. */
const read = (mark: MemoryMarkRecord): MemoryMarkRecord => ({ ...copy(mark), category: mark.category ?? null, policyVersion: mark.policyVersion ?? null, review: mark.review ?? null });

/** The review queue's order: oldest proposal first, then memory id; the cursor is the last key given. */
const reviewKey = (mark: MemoryMarkRecord) => `${mark.review!.proposedAt}|${mark.memoryId}`;

/** Memory marks (issue 42), per agent then memory id. */
export function inMemoryMemoryMarks(get: () => State): MemoryMarkStore {
  const ofAgent = (agentId: string) => {
    const marks = get().memoryMarks;
    let agent = marks.get(agentId);
    if (!agent) marks.set(agentId, (agent = new Map()));
    return agent;
  };
  return {
    async get({ agentId, memoryIds }) {
      const agent = get().memoryMarks.get(agentId);
      if (!agent) return [];
      return memoryIds.flatMap((id) => {
        const mark = agent.get(id);
        return mark ? [read(mark)] : [];
      });
    },
    async put({ record }) {
      ofAgent(record.agentId).set(record.memoryId, copy(record));
    },
    async cite({ organizationId, agentId, memories, at }) {
      const agent = ofAgent(agentId);
      for (const source of new Map(memories.map((memory) => [memory.memoryId, memory])).values()) {
        const mark = agent.get(source.memoryId) ?? { organizationId, agentId, ...copy(source), pinned: false, forgotten: null, edited: null, citedAt: null, citedCount: 0, updatedAt: at };
        agent.set(source.memoryId, { ...mark, citedAt: at, citedCount: mark.citedCount + 1, updatedAt: at });
      }
    },
    async recordLearned({ organizationId, agentId, memories, at }) {
      const agent = ofAgent(agentId);
      for (const { category, policyVersion, review, ...source } of memories) {
        const mark = agent.get(source.memoryId) ?? { organizationId, agentId, ...copy(source), pinned: false, forgotten: null, edited: null, citedAt: null, citedCount: 0, updatedAt: at };
        agent.set(source.memoryId, { ...mark, category, policyVersion, ...(review ? { review: copy(review) } : {}), updatedAt: at });
      }
    },
    async deleteBy({ agentId, threadId, observationId, sourceId }) {
      const agent = get().memoryMarks.get(agentId);
      for (const [id, mark] of agent ?? []) {
        if ((threadId === undefined || mark.threadId === threadId) && (observationId === undefined || mark.observationId === observationId) && (sourceId === undefined || mark.sourceId === sourceId)) agent!.delete(id);
      }
    },
    async delete({ agentId, memoryIds }) {
      const agent = get().memoryMarks.get(agentId);
      for (const id of memoryIds) agent?.delete(id);
    },
    async listReview({ agentId, state, limit, cursor }) {
      const marks = [...(get().memoryMarks.get(agentId)?.values() ?? [])]
        .filter((mark) => mark.review?.state === state && (cursor == null || reviewKey(mark) > cursor))
        .sort((a, b) => (reviewKey(a) < reviewKey(b) ? -1 : 1));
      const page = marks.slice(0, limit);
      return { records: page.map(read), nextCursor: marks.length > limit && page.length > 0 ? reviewKey(page.at(-1)!) : null };
    },
    async declinedFingerprints({ agentId, fingerprints }) {
      const declined = new Set([...(get().memoryMarks.get(agentId)?.values() ?? [])].flatMap((mark) => (mark.review?.state === 'declined' ? [mark.review.fingerprint] : [])));
      return [...new Set(fingerprints)].filter((fingerprint) => declined.has(fingerprint));
    },
    async listForgottenDue({ before, limit }) {
      const due = Date.parse(before);
      return [...get().memoryMarks.values()]
        .flatMap((agent) => [...agent.values()])
        .filter((mark) => mark.forgotten !== null && Date.parse(mark.forgotten.restoreUntil) <= due)
        .sort((a, b) => Date.parse(a.forgotten!.restoreUntil) - Date.parse(b.forgotten!.restoreUntil) || (a.memoryId < b.memoryId ? -1 : 1))
        .slice(0, limit)
        .map(read);
    },
  };
}
