import { describeError } from '../service/logger.js';
import { duplicateKey } from '../memory/duplicates.js';
import { isUnexpiredAt } from '../memory-index/memory-index-helpers.js';
import type { MemoryHitRecord, MemoryRecord, MemorySourceRef } from '../ports/memory-index.js';
import type { Supersession } from '../ports/memory-writer.js';
import type { JobRecord, TurnRecord } from '../ports/store/index.js';
import type { ServiceContext } from '../service/context.js';

/** Tries of recording a batch's merges (store, then index) before giving up (logged). */
const MERGE_ATTEMPTS = 3;

/** A turn of the batch merged into a memory: it writes none, its source joins the memory's `alsoFrom`. */
export type PlannedMerge = { turnIndex: number; memoryId: string; source: MemorySourceRef };

export type MergePlan = {
  /** The batch's records to commit: those of merged turns left out. */
  records: MemoryRecord[];
  merges: PlannedMerge[];
  /** Each merge target's `alsoFrom` as it will be once the batch is committed. */
  alsoFrom: Map<string, MemorySourceRef[]>;
};

/** Whether two source references name the same turn. */
export const sameSource = (a: MemorySourceRef, b: MemorySourceRef) => a.kind === b.kind && a.observationId === b.observationId && a.turnIndex === b.turnIndex && a.threadId === b.threadId;

/**
 * Near-duplicate turns of a batch merged instead of learned twice (issue 33), decided with one
 * `findDuplicates` lookup per batch. A turn merges when it is a conversation turn learned as one
 * memory holding its whole text, with a {@link duplicateKey} (same speaker, same normalised text,
 * enough words), into the oldest current memory of the agent with that key and the same
 * `suspicious` flag that is verbatim itself (a span) and was said in a thread of the same end user
 * (or of none, as this one); else into the first such turn of the batch.
 * Never merged: memories the writer's supersessions name (successor or replaced draft), memories
 * superseded, and a resumed turn's own memory (it is rewritten, keeping the `alsoFrom` it had).
 * An index without `findDuplicates`, or a lookup that fails (logged), merges nothing.
 */
export async function planMerges(context: ServiceContext, job: JobRecord, turns: TurnRecord[], records: MemoryRecord[], supersedes: readonly Supersession[]): Promise<MergePlan> {
  const none: MergePlan = { records, merges: [], alsoFrom: new Map() };
  const { index } = context;
  if (!index.findDuplicates || records.length === 0) return none;
  const named = new Set<string>();
  for (const { old, by } of supersedes) {
    named.add('id' in old ? old.id : `${old.turnIndex}:${old.piece}`);
    if (by) named.add(`${by.turnIndex}:${by.piece}`);
  }
  const textOf = new Map(turns.map((turn) => [turn.turnIndex, turn.text.trim()]));
  const piecesOf = new Map<number, number>();
  for (const record of records) piecesOf.set(record.source.turnIndex, (piecesOf.get(record.source.turnIndex) ?? 0) + 1);
  const keyOf = new Map<MemoryRecord, string>();
  for (const record of records) {
    const turnIndex = record.source.turnIndex;
    if (piecesOf.get(turnIndex) !== 1 || record.text !== textOf.get(turnIndex) || named.has(`${turnIndex}:0`)) continue;
    const key = duplicateKey(record);
    if (key !== null) keyOf.set(record, key);
  }
  if (keyOf.size === 0) return none;
  let found: MemoryHitRecord[];
  try {
    // Never into an expired memory (issue 42): what is learned again would stay hidden with it.
    const now = context.nowIso();
    found = (await index.findDuplicates({ agentId: job.agentId, keys: [...new Set(keyOf.values())] })).filter((record) => isUnexpiredAt(record, now));
  } catch (error) {
    context.logger.warn('looking up duplicate memories failed; the batch merges nothing', { jobId: job.id, error: describeError(error) });
    return none;
  }
  const batchIds = new Map(records.map((record) => [record.id, record]));
  const targets = new Map<string, MemoryHitRecord>();
  for (const hit of found.sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.id < b.id ? -1 : 1))) {
    const own = batchIds.get(hit.id);
    // A resumed turn's memory stored by the run before: rewritten as it was, merges included.
    if (own) own.alsoFrom = hit.alsoFrom.filter((source) => !sameSource(source, own.source)).map((source) => ({ ...source }));
    if (own || hit.validTo !== null || hit.supersededBy !== null || hit.provenance.span === null || named.has(hit.id)) continue;
    const key = duplicateKey(hit);
    if (key !== null && !targets.has(`${hit.suspicious}:${key}`)) targets.set(`${hit.suspicious}:${key}`, hit);
  }
  await keepSamePerson(context, job, targets);
  const plan: MergePlan = { records: [], merges: [], alsoFrom: new Map() };
  const firstInBatch = new Map<string, MemoryRecord>();
  const stored = new Set(found.map((hit) => hit.id));
  for (const record of records) {
    const key = keyOf.get(record);
    const slot = `${record.suspicious}:${key}`;
    // A turn whose own memory is stored (a resumed turn) is never merged, not even into itself.
    const target = key === undefined || stored.has(record.id) ? undefined : (targets.get(slot) ?? firstInBatch.get(slot));
    if (key !== undefined && !target && !firstInBatch.has(slot)) firstInBatch.set(slot, record);
    if (!target) {
      plan.records.push(record);
      continue;
    }
    const alsoFrom = plan.alsoFrom.get(target.id) ?? target.alsoFrom.map((source) => ({ ...source }));
    if (!sameSource(target.source, record.source) && !alsoFrom.some((source) => sameSource(source, record.source))) alsoFrom.push({ ...record.source });
    plan.alsoFrom.set(target.id, alsoFrom);
    plan.merges.push({ turnIndex: record.source.turnIndex, memoryId: target.id, source: record.source });
  }
  return plan;
}

/**
 * Drops targets learned in a thread of another end user (or of none, for a person's thread, and
 * the reverse): a person's recall is narrowed to their threads by the memory's own source, so a
 * turn merged into another person's memory would vanish from theirs. One thread read per distinct
 * other thread of a target (merges are rare).
 */
async function keepSamePerson(context: ServiceContext, job: JobRecord, targets: Map<string, MemoryHitRecord>): Promise<void> {
  const others = new Set([...targets.values()].map((hit) => hit.source.threadId).filter((threadId) => threadId !== job.threadId));
  if (others.size === 0) return;
  const personOf = async (threadId: string) => (await context.store.threads.get({ agentId: job.agentId, threadId }))?.endUserId;
  const own = await personOf(job.threadId);
  const same = new Set<string>();
  for (const threadId of others) {
    const person = await personOf(threadId);
    if (person !== undefined && person === own) same.add(threadId);
  }
  for (const [slot, hit] of targets) if (hit.source.threadId !== job.threadId && !same.has(hit.source.threadId)) targets.delete(slot);
}

/**
 * After the batch committed: records its merges for the receipt and erasure (`store.jobs`), then
 * adds the merged turns to their memories' `alsoFrom` (one `index.update`). The store is written
 * first, so an erasure always finds a memory that cites an erased turn. Retried; a lasting
 * failure is logged (the merged turns are then cited by their receipts only).
 */
export async function applyMerges(context: ServiceContext, job: JobRecord, plan: MergePlan): Promise<void> {
  if (plan.merges.length === 0) return;
  for (let attempt = 1; attempt <= MERGE_ATTEMPTS; attempt++) {
    try {
      await context.store.receipts.recordMerges({ jobId: job.id, merges: plan.merges.map(({ turnIndex, memoryId }) => ({ turnIndex, memoryId })) });
      // A job cancelled meanwhile (its thread erased) cites nothing: erasure could not find it.
      const current = await context.store.jobs.get({ agentId: job.agentId, jobId: job.id });
      if (!current || current.status === 'cancelled') return;
      await context.index.update({ agentId: job.agentId, patches: [...plan.alsoFrom].map(([id, alsoFrom]) => ({ id, alsoFrom })) });
      return;
    } catch (error) {
      context.logger.warn('merging duplicate memories failed', { jobId: job.id, attempt, error: describeError(error) });
    }
  }
}
