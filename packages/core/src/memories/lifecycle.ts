import { findAgent } from '../agents/lookup.js';
import { requireIndexEmbedder } from '../reembed/reembedder.js';
import type { Caller } from '../auth/caller.js';
import { ServiceError } from '../errors/index.js';
import { scrubNeighbourKeywords } from '../erasures/neighbour-keywords.js';
import { dropExports } from '../export/erased-exports.js';
import { EDIT_WRITER, type MemoryHitRecord, type MemoryRecord } from '../ports/memory-index.js';
import type { MemoryMarkRecord } from '../ports/store/index.js';
import { memoryForgetBody, memoryPatchBody } from '../schemas/memories.js';
import type { MemoryDetailOutput } from '../schemas/outputs.js';
import type { ServiceContext } from '../service/context.js';
import type { ForgetMemoryRequest, MemoryRequest, PatchMemoryRequest } from '../service/requests.js';
import { parseBody } from '../validation/parse.js';
import { blankMark, findMemory, learningCredits, marksOf } from './find.js';
import { presentMemory } from './present.js';

/**
 * `createMemoryService`'s `memoryLifecycle` (issue 42): `restoreWindowDays` a forgotten memory can be
 * restored before it is erased (> 0, at most 3650; default 7); `expiredRetentionDays` an expired
 * memory is kept for audit before it is erased (>= 0, at most 36500; default: kept);
 * `sweepIntervalMs` between the sweeps that erase both (>= 1000; default 10 minutes; only with
 * background work on).
 */
export type MemoryLifecycleOptions = {
  restoreWindowDays?: number;
  sweepIntervalMs?: number;
  /** Days an expired memory is kept (for audit, `include_expired`) before it is erased; absent: kept until erased. */
  expiredRetentionDays?: number;
};

/** How long a forgotten memory can be restored before it is erased, unless the operator sets another. */
export const DEFAULT_RESTORE_WINDOW_DAYS = 7;


/** Who did it, as marks record it: the API key id, and the person when the request carried one. */
const actor = (caller: Caller) => (caller.endUserId === null ? caller.keyId : `${caller.keyId} for ${caller.endUserId}`);

/** A mark that says nothing any more is removed rather than kept empty. */
async function saveMark(context: ServiceContext, mark: MemoryMarkRecord): Promise<void> {
  if (!mark.pinned && mark.forgotten === null && mark.edited === null && mark.citedCount === 0 && (mark.category ?? null) === null && (mark.policyVersion ?? null) === null && (mark.review ?? null) === null) {
    await context.store.memoryMarks.delete({ agentId: mark.agentId, memoryIds: [mark.memoryId] });
  } else {
    await context.store.memoryMarks.put({ record: mark });
  }
}

/**
 * Pin, edit, expire, forget and restore one memory (issue 42), and the sweep that erases forgotten
 * memories once their restore window ends. A forgotten memory is hidden by expiring it at the
 * instant it is forgotten (every read path already obeys expiry, on every index), its previous
 * expiry kept in its mark for `restore`.
 */
export function createMemoryLifecycle(context: ServiceContext) {
  async function detail(caller: Caller, record: MemoryHitRecord, mark: MemoryMarkRecord | null): Promise<MemoryDetailOutput> {
    return { ...presentMemory(record, mark), learning_credits: await learningCredits(context, caller, record) };
  }

  async function markOf(record: MemoryHitRecord): Promise<MemoryMarkRecord> {
    return (await marksOf(context, record.agentId, [record])).get(record.id) ?? blankMark(record, context.nowIso());
  }

  /** Writes the edited text as a new memory and makes the old one its superseded history. */
  async function edit(caller: Caller, record: MemoryHitRecord, text: string, expiresAt: string | null, now: string): Promise<MemoryRecord> {
    await requireIndexEmbedder(context, 'edit the memory again');
    const { vectors } = await context.embedder.embed({ texts: [text] });
    const edited: MemoryRecord = {
      id: context.ids('mem_'),
      organizationId: record.organizationId,
      agentId: record.agentId,
      text,
      keywords: record.speaker ?? '',
      vector: vectors[0]!,
      speaker: record.speaker,
      occurredAt: record.occurredAt,
      source: record.source,
      createdAt: now,
      provenance: { writer: EDIT_WRITER, jobId: record.provenance.jobId, span: null },
      alsoFrom: record.alsoFrom,
      validFrom: now,
      validTo: null,
      supersededBy: null,
      suspicious: false,
      expiresAt,
    };
    await context.index.upsert({ records: [edited], embedder: { id: context.embedder.id, dimensions: context.embedder.dimensions }, newIds: true });
    await context.index.update({ agentId: record.agentId, patches: [{ id: record.id, validTo: now, supersededBy: edited.id }] });
    return edited;
  }

  return {
    /**
     * `PATCH .../memories/{memory_id}`: `expires_at`, `pinned`, `text`. A forgotten memory is 409
     * `conflict` (restore it first); editing a superseded one is 409 too (edit the current one).
     */
    async update({ caller, agentId, memoryId, body }: PatchMemoryRequest): Promise<MemoryDetailOutput> {
      const input = parseBody(memoryPatchBody, body);
      const agent = await findAgent(context, caller, agentId);
      const record = await findMemory(context, caller, agent, memoryId, 'change');
      const mark = await markOf(record);
      if (mark.forgotten !== null) throw new ServiceError('conflict', `Memory ${memoryId} is forgotten; restore it (POST .../memories/${memoryId}/restore) before changing it.`);
      refuseHeld(mark);
      const now = context.nowIso();
      const pinned = input.pinned ?? mark.pinned;
      // Pinning clears an expiry; an expiry given in the same request (or later) still applies.
      const expiresAt = input.expires_at !== undefined ? (input.expires_at === null ? null : new Date(input.expires_at).toISOString()) : input.pinned === true ? null : record.expiresAt;
      if (input.text !== undefined && input.text !== record.text) {
        if (record.supersededBy !== null || record.validTo !== null) {
          throw new ServiceError('conflict', `Memory ${memoryId} is history (superseded${record.supersededBy === null ? '' : ` by ${record.supersededBy}`}); edit the current memory instead.`);
        }
        const edited = await edit(caller, record, input.text, expiresAt, now);
        // The edit keeps the category and policy version the memory was learned with (issue 44).
        const editedMark: MemoryMarkRecord = { ...blankMark(edited, now), pinned, edited: { at: now, by: actor(caller), fromMemoryId: record.id }, category: mark.category ?? null, policyVersion: mark.policyVersion ?? null };
        await saveMark(context, editedMark);
        const { vector: _vector, ...hit } = edited;
        return detail(caller, hit, editedMark);
      }
      if (expiresAt !== record.expiresAt) await context.index.update({ agentId: agent.id, patches: [{ id: record.id, expiresAt }] });
      const next = { ...mark, pinned, updatedAt: now };
      if (next.pinned !== mark.pinned) await saveMark(context, next);
      return detail(caller, { ...record, expiresAt }, next);
    },

    /**
     * `POST .../memories/{memory_id}/forget` `{ reason }`: hidden from every read path at once,
     * restorable until the window ends, then erased by the sweep. Already forgotten: 409 `conflict`.
     */
    async forget({ caller, agentId, memoryId, body }: ForgetMemoryRequest): Promise<MemoryDetailOutput> {
      const input = parseBody(memoryForgetBody, body);
      const agent = await findAgent(context, caller, agentId);
      const record = await findMemory(context, caller, agent, memoryId, 'change');
      const mark = await markOf(record);
      if (mark.forgotten !== null) throw new ServiceError('conflict', `Memory ${memoryId} was already forgotten at ${mark.forgotten.at}; it can be restored until ${mark.forgotten.restoreUntil}.`);
      refuseHeld(mark);
      const now = context.nowIso();
      const forgotten = { at: now, reason: input.reason, by: actor(caller), restoreUntil: new Date(Date.parse(now) + context.lifecycle.restoreWindowMs).toISOString(), expiresAtBefore: record.expiresAt };
      // The mark first: a failure between the two leaves a mark to restore, never a hidden memory without one.
      const next = { ...mark, forgotten, updatedAt: now };
      await saveMark(context, next);
      await context.index.update({ agentId: agent.id, patches: [{ id: record.id, expiresAt: now }] });
      return detail(caller, { ...record, expiresAt: now }, next);
    },

    /**
     * `POST .../memories/{memory_id}/restore`: a forgotten memory comes back with the expiry it had.
     * Not forgotten, or its restore window over: 409 `conflict`; erased by the sweep: 404.
     */
    async restore({ caller, agentId, memoryId }: MemoryRequest): Promise<MemoryDetailOutput> {
      const agent = await findAgent(context, caller, agentId);
      const record = await findMemory(context, caller, agent, memoryId, 'change');
      const mark = await markOf(record);
      if (mark.forgotten === null) throw new ServiceError('conflict', `Memory ${memoryId} is not forgotten; there is nothing to restore.`);
      const now = context.nowIso();
      if (Date.parse(mark.forgotten.restoreUntil) <= Date.parse(now)) {
        throw new ServiceError('conflict', `The restore window of memory ${memoryId} ended at ${mark.forgotten.restoreUntil}; it is being erased.`);
      }
      const expiresAt = mark.forgotten.expiresAtBefore;
      await context.index.update({ agentId: agent.id, patches: [{ id: record.id, expiresAt }] });
      const next = { ...mark, forgotten: null, updatedAt: now };
      await saveMark(context, next);
      return detail(caller, { ...record, expiresAt }, next);
    },
  };
}

/**
 * Erases, for good, every forgotten memory whose restore window has ended and, with a retention,
 * every memory expired longer ago than it (as a memory delete does: its words leave its neighbours'
 * keywords, the agent's earlier exports are removed), then their marks. Resolves the number of
 * memories erased. Safe to run from several processes at once.
 */
export async function sweepMemories(context: ServiceContext, expiredRetentionMs: number | null, batch = 100): Promise<{ erased: number }> {
  const forgotten = await sweepForgotten(context, batch);
  return { erased: forgotten + (expiredRetentionMs === null ? 0 : await sweepExpired(context, expiredRetentionMs, batch)) };
}

/** Erases the given memories of one agent as `DELETE` does, then their marks; resolves how many existed. */
async function erase(context: ServiceContext, organizationId: string, agentId: string, ids: readonly string[]): Promise<number> {
  const records = (await context.index.get({ agentId, ids })).map(({ vector: _vector, ...hit }) => hit);
  if (records.length > 0) {
    await scrubNeighbourKeywords(context, agentId, records);
    await context.index.deleteBy({ agentId, ids: records.map((record) => record.id) });
    await dropExports(context, organizationId, agentId);
  }
  await context.store.memoryMarks.delete({ agentId, memoryIds: ids });
  return records.length;
}

/** A memory the review queue hides is decided there (issue 43): pinning or expiring it here would show it. */
function refuseHeld(mark: MemoryMarkRecord): void {
  if (isHiddenByReview(mark)) {
    throw new ServiceError('conflict', `Memory ${mark.memoryId} is ${mark.review!.state} in the review queue; approve it (POST .../review/${mark.memoryId}/approve) before changing it.`);
  }
}

/** A memory waiting in the review queue, or declined there: hidden by expiring at its proposal, kept (a decline is remembered). */
const isHiddenByReview = (mark: MemoryMarkRecord | undefined) => mark?.review?.state === 'pending' || mark?.review?.state === 'declined';

/** Memories of every agent that expired at least `retentionMs` ago (a forgotten one waits for its window). */
async function sweepExpired(context: ServiceContext, retentionMs: number, batch: number): Promise<number> {
  const before = new Date(context.clock.now() - retentionMs).toISOString();
  let erased = 0;
  for (const agent of await context.store.agents.listByStatus({ statuses: ['ready', 'failed'] })) {
    // Keyset pages (newest first): erasing a page's rows does not move the cursor past others.
    let cursor: string | null = null;
    do {
      const page = await context.index.list({ agentId: agent.id, limit: batch, cursor, includeHistory: true, expiredBefore: before });
      const marks = await marksOf(context, agent.id, page.records);
      // A forgotten memory waits for its window; one pending or declined in review (issue 43) is hidden by expiry, not expired.
      const due = page.records.filter((record) => marks.get(record.id)?.forgotten == null && !isHiddenByReview(marks.get(record.id))).map((record) => record.id);
      if (due.length > 0) erased += await erase(context, agent.organizationId, agent.id, due);
      cursor = page.nextCursor;
    } while (cursor !== null);
  }
  return erased;
}

async function sweepForgotten(context: ServiceContext, batch: number): Promise<number> {
  let erased = 0;
  for (;;) {
    const due = await context.store.memoryMarks.listForgottenDue({ before: context.nowIso(), limit: batch });
    const agents = new Map<string, { organizationId: string; marks: MemoryMarkRecord[] }>();
    for (const mark of due) {
      const entry = agents.get(mark.agentId) ?? { organizationId: mark.organizationId, marks: [] };
      entry.marks.push(mark);
      agents.set(mark.agentId, entry);
    }
    for (const [agentId, { organizationId, marks }] of agents) erased += await erase(context, organizationId, agentId, marks.map((mark) => mark.memoryId));
    if (due.length < batch) return erased;
  }
}
