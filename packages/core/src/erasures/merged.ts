import { dateKeywords } from '../memory/relative-dates.js';
import type { MemoryHitRecord, MemoryPatch, MemoryRecord, MemorySourceRef } from '../ports/memory-index.js';
import type { JobRepoint } from '../ports/store/index.js';
import { markSourceOf } from '../memories/find.js';
import type { ServiceContext } from '../service/context.js';

/** Page size of the index list this step makes. */
const PAGE = 1000;

/**
 * Erasure of near-duplicates merged when learned (issue 33), run before the erased jobs'
 * memories are deleted, so no memory keeps a reference to an erased turn nor its words:
 * - a memory another job's turn was merged into loses the erased turns from `alsoFrom` (found
 *   through the erased jobs' merges in `store.jobs`, which learning records before the index);
 * - a memory learned from an erased turn that other turns were merged into is re-pointed to the
 *   first of those still kept: same id, that turn's own text (read from the store) re-embedded,
 *   its timestamp, keywords its speaker, date and words (the erased turn's neighbours are not
 *   kept), the rest of `alsoFrom`. With none left it is deleted with the job as before.
 * Crash-safe: a re-pointing is deleted then written anew, so its intent (ids, dates and flags,
 * never text: `store.repoints.record`) is stored first; a resumed erasure writes again every
 * intent left and only then looks for memories still to re-point (docs/decisions.md).
 * Idempotent: run again (a resumed erasure) it finds nothing left to change.
 */
export async function detachMerged(context: ServiceContext, agentId: string, jobIds: readonly string[]): Promise<void> {
  if (jobIds.length === 0) return;
  const erased = new Set(jobIds);
  const kept = (source: MemorySourceRef) => !erased.has(source.observationId);
  const targets = new Set<string>();
  for (const jobId of erased) for (const merge of await context.store.receipts.merges({ jobId })) targets.add(merge.memoryId);
  const patches: MemoryPatch[] = [];
  for (const record of targets.size === 0 ? [] : await context.index.get({ agentId, ids: [...targets] })) {
    if (erased.has(record.source.observationId) || record.alsoFrom.every(kept)) continue;
    patches.push({ id: record.id, alsoFrom: record.alsoFrom.filter(kept) });
  }
  if (patches.length > 0) await context.index.update({ agentId, patches });
  // Re-pointings a stopped process left half done (the old record perhaps deleted already).
  for (const jobId of erased) {
    for (const intent of await context.store.repoints.list({ jobId })) {
      await rewrite(context, jobId, intent, await repointed(context, { ...intent, remaining: intent.remaining.filter(kept) }));
    }
  }
  for (const jobId of erased) {
    for (const record of await mergedMemoriesOf(context, agentId, jobId)) {
      const intent: JobRepoint = {
        memoryId: record.id,
        organizationId: record.organizationId,
        agentId: record.agentId,
        createdAt: record.createdAt,
        writer: record.provenance.writer,
        validTo: record.validTo,
        supersededBy: record.supersededBy,
        suspicious: record.suspicious,
        expiresAt: record.expiresAt,
        remaining: record.alsoFrom.filter(kept),
      };
      const rewritten = await repointed(context, intent);
      if (!rewritten) continue;
      await context.store.repoints.record({ jobId, repoint: intent });
      await rewrite(context, jobId, intent, rewritten);
    }
  }
}

/**
 * Replaces the memory by its re-pointed version (none: it is only removed), then forgets the
 * intent. Deleted first, then written anew: a delete is what leaves no byte of the old text behind
 * (a columnar index drops its old versions on delete, not on a replacing upsert).
 */
async function rewrite(context: ServiceContext, jobId: string, intent: JobRepoint, rewritten: MemoryRecord | null): Promise<void> {
  await context.index.deleteBy({ agentId: intent.agentId, ids: [intent.memoryId] });
  if (rewritten) await context.index.upsert({ records: [rewritten], embedder: { id: context.embedder.id, dimensions: context.embedder.dimensions } });
  await repointMark(context, intent.agentId, intent.memoryId, rewritten);
  await context.store.repoints.clear({ jobId, memoryId: intent.memoryId });
}

/** The memory's mark (issue 42) follows it: gone with it, or moved to the source it now has. */
async function repointMark(context: ServiceContext, agentId: string, memoryId: string, rewritten: MemoryRecord | null): Promise<void> {
  const [mark] = await context.store.memoryMarks.get({ agentId, memoryIds: [memoryId] });
  if (!mark) return;
  if (rewritten === null) return context.store.memoryMarks.delete({ agentId, memoryIds: [memoryId] });
  await context.store.memoryMarks.put({ record: { ...mark, ...markSourceOf(rewritten), memoryId: mark.memoryId } });
}

/** The job's memories that other turns were merged into. */
async function mergedMemoriesOf(context: ServiceContext, agentId: string, jobId: string): Promise<MemoryHitRecord[]> {
  const found: MemoryHitRecord[] = [];
  let cursor: string | null = null;
  do {
    const page = await context.index.list({ agentId, observationId: jobId, includeHistory: true, limit: PAGE, cursor });
    found.push(...page.records.filter((record) => record.alsoFrom.length > 0));
    cursor = page.nextCursor;
  } while (cursor);
  return found;
}

/**
 * The memory of `intent` learned again from the first of its remaining turns still stored, or null
 * when none is. Only the intent's ids, dates and flags carry over: nothing of the erased turn.
 */
async function repointed(context: ServiceContext, intent: JobRepoint): Promise<MemoryRecord | null> {
  const { remaining } = intent;
  for (const [position, source] of remaining.entries()) {
    const [turn] = await context.store.turns.get({ refs: [{ jobId: source.observationId, turnIndex: source.turnIndex }] });
    const text = turn?.text.trim() ?? '';
    if (!turn || text === '') continue;
    const [vector] = (await context.embedder.embed({ texts: [text] })).vectors;
    const start = turn.text.indexOf(text);
    return {
      id: intent.memoryId,
      organizationId: intent.organizationId,
      agentId: intent.agentId,
      text,
      keywords: [turn.speaker, dateKeywords(turn.timestamp), ...turn.tags, text].filter((word) => word !== '').join(' '),
      vector: vector!,
      speaker: turn.speaker,
      occurredAt: turn.timestamp,
      source: { ...source },
      createdAt: intent.createdAt,
      provenance: { writer: intent.writer, jobId: source.observationId, span: { start, end: start + text.length } },
      alsoFrom: remaining.slice(position + 1).map((other) => ({ ...other })),
      validFrom: turn.timestamp,
      validTo: intent.validTo,
      supersededBy: intent.supersededBy,
      suspicious: intent.suspicious,
      expiresAt: intent.expiresAt ?? null,
    };
  }
  return null;
}
