import type { Caller } from '../auth/caller.js';
import { requireIndexEmbedder } from '../reembed/reembedder.js';
import { findAgent } from '../agents/lookup.js';
import { createIdempotency, requestFingerprint } from '../idempotency/idempotency.js';
import { ServiceError } from '../errors/index.js';
import { actor } from '../maintenance/maintenance.js';
import { blankMark, findMemory, marksOf } from '../memories/find.js';
import { presentMemory } from '../memories/present.js';
import { isUnexpiredAt } from '../memory-index/memory-index-helpers.js';
import type { MemoryHitRecord, MemoryPatch } from '../ports/memory-index.js';
import type { AgentRecord, MemoryMarkRecord, MemoryReview, ReviewAction } from '../ports/store/index.js';
import { reviewDeclineBody, reviewEditBody, reviewListQuery, reviewReflectBody, reviewRelearnBody, type ReviewItemOutput, type ReviewListOutput, type ReviewReflectionOutput, type ReviewRelearningOutput } from '../schemas/review.js';
import type { ServiceContext } from '../service/context.js';
import type { AgentRequest } from '../service/requests.js';
import { parseBody, parseQuery } from '../validation/parse.js';
import { hiddenCharacters, reviewFingerprint, reviewModeOf } from './proposals.js';
import { DEFAULT_REFLECTION_PROPOSALS, reflect } from './reflect.js';
import { DEFAULT_RELEARN_TURNS, relearn } from './relearn.js';

export type ReviewListRequest = AgentRequest & { query?: Record<string, unknown> };
export type ReviewMemoryRequest = AgentRequest & { memoryId: string };
export type ReviewDeclineRequest = ReviewMemoryRequest & { body?: unknown };
export type ReviewEditRequest = ReviewMemoryRequest & { body: unknown };
export type ReviewReflectRequest = AgentRequest & { body?: unknown; idempotencyKey?: string | undefined };
export type ReviewRelearnRequest = AgentRequest & { body?: unknown; idempotencyKey?: string | undefined };

type Held = { agent: AgentRecord; record: MemoryHitRecord; mark: MemoryMarkRecord & { review: MemoryReview } };

/** A review item as the wire shows it: the memory with its own expiry (not the instant that hides it). */
export function presentReviewItem(record: MemoryHitRecord, mark: MemoryMarkRecord & { review: MemoryReview }): ReviewItemOutput {
  const { review } = mark;
  const hidden = review.state !== 'approved';
  return {
    memory: presentMemory(hidden ? { ...record, expiresAt: review.expiresAtBefore } : record, mark),
    state: review.state,
    held_as: review.heldAs,
    proposed_at: review.proposedAt,
    supersedes: [...review.supersedes],
    superseded: [...review.superseded],
    decisions: review.decisions.map((decision) => ({ ...decision })),
    hidden_characters: hiddenCharacters(record.text),
  };
}

/** Memories just proposed (a reflection's, a re-learning's) as review items: their marks hold their review alone. */
function presentProposed(proposed: readonly { record: MemoryHitRecord; review: MemoryReview }[], now: string): ReviewItemOutput[] {
  return proposed.map(({ record, review }) => presentReviewItem(record, { ...blankMark(record, now), review }));
}

/**
 * The review queue (an extension, issue 43; docs/api.md "Review"). Learning holds the memories the
 * agent's `review_mode` names as `pending`: hidden from chat, recall, search and the memories list
 * (they expire at the instant they were proposed, as forgotten memories do) until a person approves
 * one. Approving re-checks it against what is current (a current memory with the same words: 409;
 * the memories it replaces are superseded only if still current) and gives it back its own expiry;
 * declining keeps it hidden, and learning never proposes the same words again; an edit changes a
 * pending memory's text (embedded again); undo reverses the last approve or decline within the
 * restore window. Every decision is kept with who and when. Organization-level: `X-SP-End-User` is 403.
 */
export function createReview(context: ServiceContext) {
  const idempotency = createIdempotency(context);
  async function agentFor(caller: Caller, agentId: string): Promise<AgentRecord> {
    const agent = await findAgent(context, caller, agentId);
    if (caller.endUserId !== null) throw new ServiceError('forbidden', 'Review decides for every thread of the agent; call without X-SP-End-User.');
    return agent;
  }

  async function held(caller: Caller, agentId: string, memoryId: string): Promise<Held> {
    const agent = await agentFor(caller, agentId);
    const record = await findMemory(context, caller, agent, memoryId, 'change');
    const mark = (await marksOf(context, agent.id, [record])).get(record.id);
    if (!mark?.review) throw new ServiceError('not_found', `Memory ${memoryId} was never held for review.`);
    return { agent, record, mark: mark as Held['mark'] };
  }

  function decided(mark: Held['mark'], caller: Caller, action: ReviewAction, patch: Partial<MemoryReview>, reason: string | null = null): Held['mark'] {
    const at = context.nowIso();
    return { ...mark, review: { ...mark.review, ...patch, decisions: [...mark.review.decisions, { action, at, by: actor(caller), reason }] }, updatedAt: at };
  }

  const mustBe = (mark: Held['mark'], state: MemoryReview['state'], doing: string) => {
    if (mark.review.state !== state) throw new ServiceError('conflict', `Memory ${mark.memoryId} is ${mark.review.state}, not ${state}; it cannot be ${doing}.`);
  };

  /** The current memory (not this one) that already says the same words, if any. */
  async function sameWordsCurrent(record: MemoryHitRecord, now: string): Promise<MemoryHitRecord | null> {
    const fingerprint = reviewFingerprint(record);
    const { lexical } = await context.index.search({ agentId: record.agentId, text: record.text, vector: null, limit: 10, now });
    return lexical.map((hit) => hit.record).find((other) => other.id !== record.id && reviewFingerprint(other) === fingerprint) ?? null;
  }

  async function relearnNow(agent: AgentRecord, input: { thread_id?: string | undefined; max_turns?: number | undefined; cursor?: string | undefined }): Promise<ReviewRelearningOutput> {
    const relearned = await relearn(context, agent, {
      maxTurns: input.max_turns ?? DEFAULT_RELEARN_TURNS,
      ...(input.thread_id === undefined ? {} : { threadId: input.thread_id }),
      ...(input.cursor === undefined ? {} : { cursor: input.cursor }),
    });
    const now = context.nowIso();
    return {
      agent_id: agent.id,
      writer: context.writer.id,
      turns_read: relearned.turnsRead,
      unchanged_turns: relearned.unchanged,
      credits: relearned.credits,
      proposals: presentProposed(relearned.proposed, now),
      next_cursor: relearned.nextCursor,
    };
  }

  return {
    async list({ caller, agentId, query }: ReviewListRequest): Promise<ReviewListOutput> {
      const input = parseQuery(reviewListQuery, query ?? {});
      const agent = await agentFor(caller, agentId);
      const state = input.state ?? 'pending';
      const page = await context.store.memoryMarks.listReview({ agentId: agent.id, state, limit: input.limit, cursor: input.cursor ?? null });
      const records = new Map((await context.index.get({ agentId: agent.id, ids: page.records.map((mark) => mark.memoryId) })).map(({ vector: _vector, ...hit }) => [hit.id, hit]));
      // A mark whose memory was erased meanwhile (an erasure takes both; between the two) is left out.
      const items = page.records.flatMap((mark) => {
        const record = records.get(mark.memoryId);
        return record && mark.review ? [presentReviewItem(record, mark as Held['mark'])] : [];
      });
      return { agent_id: agent.id, review_mode: reviewModeOf(agent.config), state, items, next_cursor: page.nextCursor };
    },

    async approve({ caller, agentId, memoryId }: ReviewMemoryRequest): Promise<ReviewItemOutput> {
      const { record, mark } = await held(caller, agentId, memoryId);
      mustBe(mark, 'pending', 'approved');
      const now = context.nowIso();
      const same = await sameWordsCurrent(record, now);
      if (same) throw new ServiceError('conflict', `Memory ${same.id} already says this and is current; decline ${memoryId} instead.`);
      // What it replaces, if still current now (another memory may have replaced or ended it meanwhile).
      const olds = mark.review.supersedes.length === 0 ? [] : await context.index.get({ agentId: record.agentId, ids: mark.review.supersedes });
      // (Or already superseded by it: an approval retried after its mark failed to be written.)
      const superseded = olds.filter((old) => old.supersededBy === record.id || (old.validTo === null && old.supersededBy === null && isUnexpiredAt(old, now))).map((old) => old.id);
      const next = decided(mark, caller, 'approve', { state: 'approved', superseded });
      // The index first: a failure before the mark is written leaves the memory shown and still
      // listed pending, and approving again writes the same patches and then the mark.
      const patches: MemoryPatch[] = [{ id: record.id, expiresAt: mark.review.expiresAtBefore }, ...superseded.map((id) => ({ id, validTo: record.validFrom ?? now, supersededBy: record.id }))];
      await context.index.update({ agentId: record.agentId, patches });
      await context.store.memoryMarks.put({ record: next });
      return presentReviewItem({ ...record, expiresAt: mark.review.expiresAtBefore }, next);
    },

    async decline({ caller, agentId, memoryId, body }: ReviewDeclineRequest): Promise<ReviewItemOutput> {
      const input = parseBody(reviewDeclineBody, body ?? {});
      const { record, mark } = await held(caller, agentId, memoryId);
      mustBe(mark, 'pending', 'declined');
      const next = decided(mark, caller, 'decline', { state: 'declined' }, input.reason ?? null);
      await context.store.memoryMarks.put({ record: next });
      return presentReviewItem(record, next);
    },

    async edit({ caller, agentId, memoryId, body }: ReviewEditRequest): Promise<ReviewItemOutput> {
      const input = parseBody(reviewEditBody, body);
      const { record, mark } = await held(caller, agentId, memoryId);
      mustBe(mark, 'pending', 'edited');
      await requireIndexEmbedder(context, 'edit the memory again');
      const [stored] = await context.index.get({ agentId: record.agentId, ids: [record.id] });
      if (!stored) throw new ServiceError('not_found', `Memory ${memoryId} was not found.`);
      const { vectors } = await context.embedder.embed({ texts: [input.text] });
      // The same id: a proposal is not yet knowledge, so its first words are not kept as history; the fingerprint stays the proposal's.
      const edited = { ...stored, text: input.text, vector: vectors[0]!, provenance: { ...stored.provenance, span: null } };
      await context.index.upsert({ records: [edited], embedder: { id: context.embedder.id, dimensions: context.embedder.dimensions }, newIds: false });
      const next = decided(mark, caller, 'edit', {});
      await context.store.memoryMarks.put({ record: next });
      const { vector: _vector, ...hit } = edited;
      return presentReviewItem(hit, next);
    },

    /**
     * `POST .../review/reflect` (with a language model): the model reads the agent's newest memories
     * and proposes facts they imply together, each written pending review (reflect.ts).
     */
    async reflect({ caller, agentId, body, idempotencyKey }: ReviewReflectRequest): Promise<ReviewReflectionOutput> {
      const input = parseBody(reviewReflectBody, body ?? {});
      const agent = await agentFor(caller, agentId);
      const fingerprint = requestFingerprint(['review.reflect', agent.id, input]);
      // A retry with the same key replays the first answer: the model is not asked (nor charged) twice.
      return idempotency.run<ReviewReflectionOutput>({ caller, idempotencyKey, fingerprint, what: 'reflection', status: 201 }, async () => {
        const reflected = await reflect(context, agent, input.max_proposals ?? DEFAULT_REFLECTION_PROPOSALS);
        const now = context.nowIso();
        return {
          agent_id: agent.id,
          model: context.model.id,
          memories_read: reflected.memoriesRead,
          credits: reflected.credits,
          proposals: presentProposed(reflected.proposed, now),
        };
      });
    },

    /**
     * `POST .../review/relearn`: a thread's (or every thread's) turns learned again under the current
     * writer and policy; each memory that now reads differently is proposed pending review (relearn.ts).
     */
    async relearn({ caller, agentId, body, idempotencyKey }: ReviewRelearnRequest): Promise<ReviewRelearningOutput> {
      const input = parseBody(reviewRelearnBody, body ?? {});
      const agent = await agentFor(caller, agentId);
      const fingerprint = requestFingerprint(['review.relearn', agent.id, input]);
      return idempotency.run<ReviewRelearningOutput>({ caller, idempotencyKey, fingerprint, what: 're-learning', status: 201 }, () => relearnNow(agent, input));
    },

    async undo({ caller, agentId, memoryId }: ReviewMemoryRequest): Promise<ReviewItemOutput> {

      const { record, mark } = await held(caller, agentId, memoryId);
      const last = mark.review.decisions.findLast((decision) => decision.action === 'approve' || decision.action === 'decline' || decision.action === 'undo');
      if (!last || last.action === 'undo' || mark.review.state === 'pending') throw new ServiceError('conflict', `Memory ${memoryId} is pending: there is no approval or decline to undo.`);
      const now = context.nowIso();
      const until = new Date(Date.parse(last.at) + context.lifecycle.restoreWindowMs).toISOString();
      if (until <= now) throw new ServiceError('conflict', `The ${last.action} of memory ${memoryId} can be undone until ${until} only.`);
      const next = decided(mark, caller, 'undo', { state: 'pending', superseded: [] });
      if (mark.review.state === 'approved') {
        // Hidden again, and what its approval superseded (still superseded by it) is current again;
        // the index first, so an undo retried after a failure finds the approval and repeats it.
        const olds = mark.review.superseded.length === 0 ? [] : await context.index.get({ agentId: record.agentId, ids: mark.review.superseded });
        const restore = olds.filter((old) => old.supersededBy === record.id).map((old) => ({ id: old.id, validTo: null, supersededBy: null }));
        await context.index.update({ agentId: record.agentId, patches: [{ id: record.id, expiresAt: mark.review.proposedAt }, ...restore] });
        await context.store.memoryMarks.put({ record: next });
        return presentReviewItem({ ...record, expiresAt: mark.review.proposedAt }, next);
      }
      await context.store.memoryMarks.put({ record: next });
      return presentReviewItem(record, next);
    },
  };
}

export type Review = ReturnType<typeof createReview>;
