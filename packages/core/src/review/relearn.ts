import { createHash, randomUUID } from 'node:crypto';
import { requireIndexEmbedder } from '../reembed/reembedder.js';
import { countWords } from '../credits/pricing.js';
import { ServiceError } from '../errors/index.js';
import { marksOf, markSourceOf } from '../memories/find.js';
import { applyMemoryPolicy, writerPolicyOf } from '../observations/memory-policy.js';
import { draftRecord, sourceOf } from '../observations/learn-batch.js';
import { isUnexpiredAt } from '../memory-index/memory-index-helpers.js';
import { TURN_BATCH } from '../observations/learning-job.js';
import { policyVersionOf } from '../policy/extraction-policy.js';
import type { MemoryHitRecord, MemoryRecord } from '../ports/memory-index.js';
import type { AgentRecord, JobRecord, LearnedMark, MemoryReview, TurnRecord } from '../ports/store/index.js';
import type { ServiceContext } from '../service/context.js';
import { reviewFingerprint } from './proposals.js';

/** Most turns one re-learning call reads, and the default (`max_turns`). */
export const MAX_RELEARN_TURNS = 2000;
export const DEFAULT_RELEARN_TURNS = 500;

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/**
 * The id a re-learned memory gets: the same draft (job, turn, piece), writer and policy version give
 * the same id, so a second call proposes nothing twice (`mem_` and 26 characters, like a ULID).
 */
function relearnedId(draft: string, writer: string, policyVersion: number): string {
  const digest = createHash('sha256').update(`relearn\n${draft}\n${writer}\n${policyVersion}`).digest();
  let id = 'mem_';
  for (let i = 0; i < 26; i++) id += CROCKFORD[digest[i]! % 32];
  return id;
}

export type Relearned = { turnsRead: number; unchanged: number; credits: string; proposed: { record: MemoryHitRecord; review: MemoryReview }[]; nextCursor: string | null };

/** The jobs to re-learn, in order (threads by id, jobs by sequence), from `cursor` (a job id). */
async function jobsOf(context: ServiceContext, agent: AgentRecord, threadId: string | undefined, cursor: string | undefined): Promise<JobRecord[]> {
  const threads = threadId === undefined ? (await context.store.threads.list({ agentId: agent.id })).map((thread) => thread.id).sort() : [threadId];
  const jobs: JobRecord[] = [];
  for (const id of threads) jobs.push(...(await context.store.jobs.allForThread({ threadId: id })).filter((job) => job.status === 'committed').sort((a, b) => a.seq - b.seq));
  if (cursor === undefined) return jobs;
  const at = jobs.findIndex((job) => job.id === cursor);
  if (at === -1) throw new ServiceError('invalid_request', `cursor ${cursor} is not a next_cursor of this re-learning; start again without one.`, { status: 422 });
  return jobs.slice(at);
}

/** The jobs' turns, whole jobs, until `maxTurns` are read (at least one job); where the next call continues. */
async function readTurns(context: ServiceContext, jobs: readonly JobRecord[], maxTurns: number): Promise<{ reads: { job: JobRecord; turns: TurnRecord[] }[]; nextCursor: string | null }> {
  const reads: { job: JobRecord; turns: TurnRecord[] }[] = [];
  let read = 0;
  for (const [i, job] of jobs.entries()) {
    const turns: TurnRecord[] = [];
    for (let from = 0; ; from += TURN_BATCH) {
      const page = await context.store.turns.list({ jobId: job.id, fromIndex: from, limit: TURN_BATCH });
      turns.push(...page);
      if (page.length < TURN_BATCH) break;
    }
    if (reads.length > 0 && read + turns.length > maxTurns) return { reads, nextCursor: job.id };
    reads.push({ job, turns });
    read += turns.length;
    if (read >= maxTurns && i + 1 < jobs.length) return { reads, nextCursor: jobs[i + 1]!.id };
  }
  return { reads, nextCursor: null };
}

/**
 * A job's memories as they are now: the current ones (what a proposal replaces), the words of every
 * one not superseded, hidden ones too (forgotten, expired, waiting in the queue under the words first
 * proposed), which a re-learning that says the same must not propose again, and the turns a person
 * forgot a memory of (forgetting is not undone by a re-learning).
 */
async function jobMemories(context: ServiceContext, agentId: string, jobId: string, now: string) {
  const current: MemoryHitRecord[] = [];
  const said: { turnIndex: number; fingerprint: string }[] = [];
  const forgotten = new Set<number>();
  for (let cursor: string | null = null; ; ) {
    const page = await context.index.list({ agentId, limit: 500, cursor, observationId: jobId });
    const live = page.records.filter((record) => record.validTo === null);
    const marks = await marksOf(context, agentId, live.filter((record) => !isUnexpiredAt(record, now)));
    for (const record of live) {
      if (isUnexpiredAt(record, now)) current.push(record);
      if (marks.get(record.id)?.forgotten) forgotten.add(record.source.turnIndex);
      said.push({ turnIndex: record.source.turnIndex, fingerprint: marks.get(record.id)?.review?.fingerprint ?? reviewFingerprint(record) });
    }
    if (page.nextCursor === null) return { current, said, forgotten };
    cursor = page.nextCursor;
  }
}

/**
 * Re-learning (issue 43): the turns of a thread (or every thread of the agent) learned again under
 * the current writer and extraction policy, as if new (no lookups of stored memories). Where a
 * turn's memories now read differently, each new memory is **proposed**, pending review, replacing
 * (`supersedes`) the turn's current memories it does not repeat; nothing current changes until a
 * person approves. A turn whose memories read the same is unchanged; one that now yields nothing is
 * left to `reapply_policy`. At most `maxTurns` turns a call, whole jobs; `nextCursor` continues.
 */
export async function relearn(context: ServiceContext, agent: AgentRecord, options: { threadId?: string; maxTurns: number; cursor?: string }): Promise<Relearned> {
  await requireIndexEmbedder(context, 're-learn');
  if (options.threadId !== undefined && !(await context.store.threads.get({ agentId: agent.id, threadId: options.threadId }))) {
    throw new ServiceError('thread_not_found', `Thread ${options.threadId} was not found.`);
  }
  const jobs = await jobsOf(context, agent, options.threadId, options.cursor);
  const policy = agent.config.extraction_policy ?? null;
  const version = policyVersionOf(agent.config);
  const now = context.nowIso();
  const result: Relearned = { turnsRead: 0, unchanged: 0, credits: '0', proposed: [], nextCursor: null };
  const { reads, nextCursor } = await readTurns(context, jobs, options.maxTurns);
  result.nextCursor = nextCursor;
  result.turnsRead = reads.reduce((sum, read) => sum + read.turns.length, 0);
  if (reads.length === 0) return result;
  result.credits = await context.credits.chargeWork({
    organizationId: agent.organizationId,
    route: 'relearn',
    reference: `relearn:${randomUUID()}`,
    words: reads.reduce((sum, read) => sum + read.turns.reduce((words, turn) => words + countWords(turn.text), 0), 0),
    refused: 'nothing was re-learned',
  });
  const proposals: { record: MemoryRecord; review: MemoryReview; category: string | null }[] = [];
  const writerPolicy = writerPolicyOf(policy);
  for (const { job, turns } of reads) {
    const learnable = turns.filter((turn) => turn.state === 'committed' && turn.details.excludedBy === undefined);
    if (learnable.length === 0) continue;
    const written = await context.writer.write({
      agentId: agent.id,
      turns: learnable.map((turn) => ({ turnIndex: turn.turnIndex, speaker: turn.speaker, text: turn.text, timestamp: turn.timestamp, tags: turn.tags, source: sourceOf(job, turn) })),
      // As if new: the turn's own memories (what re-learning replaces) are not looked at.
      searchSimilar: async () => [],
      ...(writerPolicy === undefined ? {} : { policy: writerPolicy }),
    });
    const drafts: MemoryRecord[] = [];
    for (const outcome of written.outcomes) {
      if (!outcome.ok) continue;
      const turn = learnable.find((candidate) => candidate.turnIndex === outcome.turnIndex);
      if (!turn) continue;
      outcome.memories.forEach((memory, piece) => drafts.push(draftRecord(context, job, turn, memory, piece, now)));
    }
    const applied = await applyMemoryPolicy(context, job, policy, learnable, written.outcomes, drafts);
    const kept = applied.records;
    const categories = new Map(applied.marks.map((mark) => [mark.memoryId, mark.category]));
    const { current, said, forgotten } = await jobMemories(context, agent.id, job.id, now);
    for (const turn of learnable) {
      if (forgotten.has(turn.turnIndex)) continue;
      const fresh = kept.filter((record) => record.source.turnIndex === turn.turnIndex);
      const old = current.filter((record) => record.source.turnIndex === turn.turnIndex);
      const oldPrints = new Set([...old.map((record) => reviewFingerprint(record)), ...said.filter((entry) => entry.turnIndex === turn.turnIndex).map((entry) => entry.fingerprint)]);
      const newPrints = new Set(fresh.map((record) => reviewFingerprint(record)));
      // A memory whose own expiry has passed (the observe body's, or read from its words) is not worth proposing.
      const changed = fresh.filter((record) => !oldPrints.has(reviewFingerprint(record)) && isUnexpiredAt(record, now));
      if (changed.length === 0) {
        result.unchanged += 1;
        continue;
      }
      const replaced = old.filter((record) => !newPrints.has(reviewFingerprint(record))).map((record) => record.id);
      for (const record of changed) {
        const category = categories.get(record.id) ?? null;
        record.id = relearnedId(record.id, context.writer.id, version);
        const review: MemoryReview = { state: 'pending', heldAs: 'relearn', proposedAt: now, fingerprint: reviewFingerprint(record), expiresAtBefore: record.expiresAt, supersedes: replaced, superseded: [], decisions: [] };
        record.expiresAt = now;
        proposals.push({ record, review, category });
      }
    }
  }
  // Proposed before (by an earlier call with the same writer and policy: the memory exists; a call
  // cut off between a mark and its memory proposes it again), or declined words: not again.
  const known = new Set((await context.index.get({ agentId: agent.id, ids: proposals.map((proposal) => proposal.record.id) })).map((record) => record.id));
  const declined = new Set(await context.store.memoryMarks.declinedFingerprints({ agentId: agent.id, fingerprints: proposals.map((proposal) => proposal.review.fingerprint) }));
  const fresh = proposals.filter((proposal) => !known.has(proposal.record.id) && !declined.has(proposal.review.fingerprint));
  if (fresh.length > 0) {
    const { vectors } = await context.embedder.embed({ texts: fresh.map((proposal) => proposal.record.text) });
    fresh.forEach((proposal, i) => (proposal.record.vector = vectors[i]!));
    const marks: LearnedMark[] = fresh.map(({ record, review, category }) => ({ ...markSourceOf(record), category, policyVersion: version === 0 ? null : version, review }));
    // The marks first: a hidden memory never exists without the mark that lists it in the queue.
    await context.store.memoryMarks.recordLearned({ organizationId: agent.organizationId, agentId: agent.id, memories: marks, at: now });
    await context.index.upsert({ records: fresh.map((proposal) => proposal.record), embedder: { id: context.embedder.id, dimensions: context.embedder.dimensions } });
  }
  result.proposed = fresh.map(({ record: { vector: _vector, ...hit }, review }) => ({ record: hit, review }));
  return result;
}
