import type { MemoryRecord } from '../ports/memory-index.js';
import type { DraftRef, Supersession } from '../ports/memory-writer.js';
import type { JobPolicyDrop, JobRecord, LearnedMark, MemoryReview, TurnRecord } from '../ports/store/index.js';
import type { ServiceContext } from '../service/context.js';
import { markSourceOf } from '../memories/find.js';
import { draftId } from '../observations/draft-id.js';
import { heldAs, reviewFingerprint, type ReviewMode } from './proposals.js';

/** The drop rule a receipt shows for a memory whose words a person declined before. */
export const DECLINED_RULE = 'declined in review: the same words were declined before';

export type HeldBatch = {
  /** The records to merge and commit: those declined before left out; those held expire at the proposal instant. */
  records: MemoryRecord[];
  /** The review of each held record, by memory id. */
  reviews: Map<string, MemoryReview>;
  /** The writer's supersessions but those a held memory makes: those wait for its approval. */
  supersedes: readonly Supersession[];
  /** The memories left out because their words were declined before, for the receipt. */
  drops: JobPolicyDrop[];
};

/**
 * Holds a learning batch's new memories for review as the agent's `review_mode` says (issue 43):
 * each held one is hidden (it expires at the instant it is proposed; its own expiry waits in its
 * review), the older memories it would supersede wait for its approval, and one whose words were
 * declined before is not written at all. With the mode `off` nothing changes.
 */
export async function holdForReview(
  context: ServiceContext,
  job: JobRecord,
  mode: ReviewMode,
  turns: readonly TurnRecord[],
  records: MemoryRecord[],
  supersedes: readonly Supersession[],
): Promise<HeldBatch> {
  const reviews = new Map<string, MemoryReview>();
  if (mode === 'off' || records.length === 0) return { records, reviews, supersedes, drops: [] };
  const sourceText = new Map(turns.map((turn) => [turn.turnIndex, turn.text]));
  const now = context.nowIso();
  const candidates = records.flatMap((record) => {
    const as = heldAs(mode, record.text, sourceText.get(record.source.turnIndex));
    return as === null ? [] : [{ record, as, fingerprint: reviewFingerprint(record) }];
  });
  const declined = new Set(candidates.length === 0 ? [] : await context.store.memoryMarks.declinedFingerprints({ agentId: job.agentId, fingerprints: candidates.map((c) => c.fingerprint) }));
  const dropped = new Set<string>();
  const drops: JobPolicyDrop[] = [];
  for (const { record, as, fingerprint } of candidates) {
    if (declined.has(fingerprint)) {
      dropped.add(record.id);
      drops.push({ turnIndex: record.source.turnIndex, category: null, rule: DECLINED_RULE });
      continue;
    }
    reviews.set(record.id, { state: 'pending', heldAs: as, proposedAt: now, fingerprint, expiresAtBefore: record.expiresAt, supersedes: [], superseded: [], decisions: [] });
    record.expiresAt = now;
  }
  const draft = (ref: DraftRef) => draftId(job.id, ref);
  const kept: Supersession[] = [];
  for (const supersession of supersedes) {
    const review = supersession.by ? reviews.get(draft(supersession.by)) : undefined;
    if (!review) {
      kept.push(supersession);
      continue;
    }
    const oldId = 'id' in supersession.old ? supersession.old.id : draft(supersession.old);
    if (!review.supersedes.includes(oldId)) review.supersedes.push(oldId);
  }
  return { records: records.filter((record) => !dropped.has(record.id)), reviews, supersedes: kept, drops };
}

/**
 * Writes the review marks of the held records about to be committed, before the commit: a memory
 * hidden for review never exists without the mark that lists it in the queue (a mark whose memory
 * never got written is left out of the queue).
 */
export async function recordHeld(context: ServiceContext, job: JobRecord, reviews: ReadonlyMap<string, MemoryReview>, committing: readonly MemoryRecord[], learned: readonly LearnedMark[]): Promise<void> {
  if (reviews.size === 0) return;
  const policy = new Map(learned.map((mark) => [mark.memoryId, mark]));
  const memories: LearnedMark[] = committing.flatMap((record) => {
    const review = reviews.get(record.id);
    if (!review) return [];
    const mark = policy.get(record.id);
    return [{ ...markSourceOf(record), category: mark?.category ?? null, policyVersion: mark?.policyVersion ?? null, review }];
  });
  if (memories.length > 0) await context.store.memoryMarks.recordLearned({ organizationId: job.organizationId, agentId: job.agentId, memories, at: context.nowIso() });
}
