import { describeError } from '../service/logger.js';
import { EmbedderMismatchError, type MemoryPatch, type MemoryRecord, type MemorySourceRef } from '../ports/memory-index.js';
import { LanguageModelError } from '../ports/language-model.js';
import { isServiceError } from '../errors/service-error.js';
import { learningThreadIds } from '../agents/memory-scope.js';
import { isDependencyUnavailable } from '../store/available-store.js';
import type { DraftRef, MemoryDraft, Supersession, TurnOutcome, WriterPolicy, WriterTurn } from '../ports/memory-writer.js';
import type { JobRecord, LearningReason, TurnRecord } from '../ports/store/index.js';
import type { ServiceContext } from '../service/context.js';
import { JobStopped, type JobRun } from './job-run.js';
import { meterBatch } from './model-usage.js';
import { applyMerges, planMerges } from './merge-duplicates.js';
import { applyMemoryPolicy, batchConfig, writerPolicyOf, type PolicyApplied } from './memory-policy.js';
import { holdForReview, recordHeld } from '../review/hold.js';
import { draftId } from './draft-id.js';
import { reviewModeOf } from '../review/proposals.js';

/** Index commits tried before a batch's turns are reported `memory_commit_shortfall`. */
const COMMIT_ATTEMPTS = 3;

/** A turn whose outcome is final for this run: committed to the index, or failed with a reason. */
export type TurnResult = { turnIndex: number; ok: true } | { turnIndex: number; ok: false; reason: LearningReason };

/**
 * Writes, embeds and commits the memories of one batch; never throws for a turn's failure. The
 * model tokens it used are recorded for the job's receipt (model-usage.ts).
 */
export async function learnBatch(run: JobRun, job: JobRecord, turns: TurnRecord[]): Promise<TurnResult[]> {
  const meter = meterBatch(run);
  const results = await learnMetered(meter.run, job, turns);
  await meter.record(job, turns);
  return results;
}

async function learnMetered(run: JobRun, job: JobRecord, turns: TurnRecord[]): Promise<TurnResult[]> {
  const { embedder, index } = run.context;
  // An index built by another embedder fails the turns before any model call (spec reason
  // `embedder_mismatch`); the writer's similarity lookups could not search it anyway.
  const recorded = await index.embedder();
  if (recorded && (recorded.id !== embedder.id || recorded.dimensions !== embedder.dimensions)) {
    return turns.map((turn) => ({ turnIndex: turn.turnIndex, ok: false, reason: 'embedder_mismatch' }));
  }
  // The agent's extraction policy (issue 44): what the writer is told, and what is kept of its
  // memories; its review mode (issue 43): which of them wait for a person's approval.
  const config = await batchConfig(run.context, job);
  const policy = config?.extraction_policy ?? null;
  // Vectors of texts this batch embedded: the writer's lookups embed a memory's text, and the commit
  // embeds the same text again (a sentence model spends ~10-20 ms of CPU on each).
  const vectors = new Map<string, Float32Array>();
  const written = await writeBatch(run, job, turns, writerPolicyOf(policy), vectors);
  if (!written.ok) return turns.map((turn) => ({ turnIndex: turn.turnIndex, ok: false, reason: written.reason }));
  const built = toRecords(run.context, job, turns, written.outcomes);
  const { results, committing } = built;
  if (committing.length === 0) return results;
  const applied = await applyMemoryPolicy(run.context, job, policy, turns, written.outcomes, built.records);
  const held = await holdForReview(run.context, job, config ? reviewModeOf(config) : 'off', turns, applied.records, written.supersedes);
  applied.drops.push(...held.drops);
  const records = held.records;
  // Memory ids are per job, turn and piece: a job that never ran before (not resumed) cannot have
  // any of its memories in the index yet, nor can a turn never read before (`pending` with billing
  // on). A resumed job's turns may have been committed before its process died: they merge.
  const newIds = job.resumedAt === null && turns.every((turn) => turn.state === 'pending');
  // Near-duplicates of stored memories (or of each other) are merged, not learned twice (issue 33).
  const plan = await planMerges(run.context, job, turns, records, held.supersedes);
  await recordHeld(run.context, job, held.reviews, plan.records, applied.marks);
  const committed = await commitRecords(run.context, job, plan.records, newIds, vectors);
  if (committed === true) await recordPolicy(run.context, job, applied, plan.records);
  if (committed === true) await applyMerges(run.context, job, plan);
  if (committed === true && held.supersedes.length > 0) await applySupersessions(run.context, job, turns, held.supersedes, plan.records);
  for (const turnIndex of committing) results.push(committed === true ? { turnIndex, ok: true } : { turnIndex, ok: false, reason: committed });
  return results.sort((a, b) => a.turnIndex - b.turnIndex);
}

type Written = { ok: true; outcomes: TurnOutcome[]; supersedes: readonly Supersession[] } | { ok: false; reason: LearningReason };

/** The memory writer's outcomes for the batch, or the reason every turn of it fails. */
async function writeBatch(run: JobRun, job: JobRecord, turns: TurnRecord[], policy: WriterPolicy | undefined, vectors: Map<string, Float32Array>): Promise<Written> {
  const { writer, embedder, index } = run.context;
  // A turn the extraction policy excludes (issue 44) is learned as nothing: the writer never sees it.
  const excluded = turns.filter((turn) => turn.details.excludedBy !== undefined);
  const nothing: TurnOutcome[] = excluded.map((turn) => ({ turnIndex: turn.turnIndex, ok: true, memories: [] }));
  if (excluded.length === turns.length) return { ok: true, outcomes: nothing, supersedes: [] };
  const writerTurns: WriterTurn[] = turns.filter((turn) => turn.details.excludedBy === undefined).map((turn) => ({
    turnIndex: turn.turnIndex,
    speaker: turn.speaker,
    text: turn.text,
    timestamp: turn.timestamp,
    tags: turn.tags,
    source: sourceOf(job, turn),
  }));
  // With `memory_scope: "end_user"`, the writer compares a turn only with the same person's memories (memory-scope.ts).
  let lookupScope: Promise<string[] | undefined> | undefined;
  try {
    const written = await writer.write({
      agentId: job.agentId,
      turns: writerTurns,
      // Stopping the service aborts a writer mid-call; its turns stay resumable.
      signal: run.signal,
      ...(policy === undefined ? {} : { policy }),
      searchSimilar: async (text, limit) => {
        let vector = vectors.get(text);
        if (!vector) {
          [vector] = (await embedder.embed({ texts: [text] })).vectors;
          if (vector) vectors.set(text, vector);
        }
        const threadIds = await (lookupScope ??= learningThreadIds(run.context, job));
        const { lexical, semantic } = await index.search({ agentId: job.agentId, text, vector: vector ?? null, limit, ...(threadIds === undefined ? {} : { threadIds }) });
        return [...semantic, ...lexical].map((hit) => hit.record).slice(0, limit);
      },
    });
    return { ok: true, outcomes: [...written.outcomes, ...nothing], supersedes: written.supersedes ?? [] };
  } catch (error) {
    if (run.signal.aborted) throw new JobStopped();
    // The store or the index went away under the writer (its searchSimilar): the job stays resumable.
    if (isServiceError(error) && error.code === 'service_unavailable') throw error;
    run.context.logger.warn('memory writer failed', { jobId: job.id, error: describeError(error) });
    return { ok: false, reason: writerFailureReason(error) };
  }
}

/** The index records of the turns the writer learned, and the results of those it did not. */
function toRecords(context: ServiceContext, job: JobRecord, turns: TurnRecord[], outcomes: TurnOutcome[]) {
  const byTurn = new Map(outcomes.map((outcome) => [outcome.turnIndex, outcome]));
  const results: TurnResult[] = [];
  const records: MemoryRecord[] = [];
  const committing: number[] = [];
  for (const turn of turns) {
    const outcome = byTurn.get(turn.turnIndex);
    if (!outcome) {
      results.push({ turnIndex: turn.turnIndex, ok: false, reason: 'generation_failed' });
      continue;
    }
    if (!outcome.ok) {
      results.push({ turnIndex: turn.turnIndex, ok: false, reason: outcome.reason });
      continue;
    }
    committing.push(turn.turnIndex);
    outcome.memories.forEach((memory, piece) => records.push(draftRecord(context, job, turn, memory, piece, context.nowIso())));
  }
  return { results, records, committing };
}

/**
 * The index record of one memory the writer drafted for a turn of a job (no vector yet), under the
 * id learning gives it: deterministic per job, turn and piece, so a resumed turn replaces, never
 * duplicates.
 */
export function draftRecord(context: ServiceContext, job: JobRecord, turn: TurnRecord, memory: MemoryDraft, piece: number, createdAt: string): MemoryRecord {
  return {
    id: draftId(job.id, { turnIndex: turn.turnIndex, piece }),
    organizationId: job.organizationId,
    agentId: job.agentId,
    text: memory.text,
    keywords: memory.keywords,
    vector: new Float32Array(0),
    speaker: memory.speaker,
    occurredAt: memory.occurredAt,
    source: memory.source,
    createdAt,
    provenance: { writer: context.writer.id, jobId: job.id, span: memory.span ? { start: memory.span.start, end: memory.span.end } : null },
    alsoFrom: [],
    validFrom: memory.validFrom ?? memory.occurredAt ?? createdAt,
    validTo: null,
    supersededBy: null,
    suspicious: memory.suspicious ?? false,
    // The observe body's expiry wins over one the writer read from the words.
    expiresAt: turn.details.expiresAt ?? memory.expiresAt ?? null,
  };
}

/**
 * Stores the marks of the committed memories (their category and policy version) and the memories
 * the policy dropped (for the receipt); a failure is logged: the memories are committed.
 */
async function recordPolicy(context: ServiceContext, job: JobRecord, applied: PolicyApplied, committed: readonly MemoryRecord[]): Promise<void> {
  if (applied.marks.length === 0 && applied.drops.length === 0) return;
  const ids = new Set(committed.map((record) => record.id));
  try {
    // Memories merged into an existing one were not written: they keep no mark.
    const memories = applied.marks.filter((mark) => ids.has(mark.memoryId));
    if (memories.length > 0) await context.store.memoryMarks.recordLearned({ organizationId: job.organizationId, agentId: job.agentId, memories, at: context.nowIso() });
    if (applied.drops.length > 0) await context.store.receipts.recordPolicyDrops({ jobId: job.id, drops: applied.drops });
  } catch (error) {
    context.logger.warn('recording what the extraction policy did failed', { jobId: job.id, error: describeError(error) });
  }
}

/** Embeds and upserts; resolves true, or the learning reason the batch's turns fail with. */
async function commitRecords(context: ServiceContext, job: JobRecord, records: MemoryRecord[], newIds: boolean, vectors: ReadonlyMap<string, Float32Array>): Promise<true | LearningReason> {
  const { embedder, index } = context;
  if (records.length === 0) return true;
  for (let attempt = 1; ; attempt++) {
    try {
      // Vectors the extraction policy (categories by meaning) or the writer's lookups already
      // embedded are not embedded again.
      for (const record of records) {
        const known = record.vector.length === embedder.dimensions ? undefined : vectors.get(record.text);
        if (known && known.length === embedder.dimensions) record.vector = known;
      }
      const missing = records.filter((record) => record.vector.length !== embedder.dimensions);
      if (missing.length > 0) {
        const embedded = (await embedder.embed({ texts: missing.map((record) => record.text) })).vectors;
        missing.forEach((record, i) => {
          record.vector = embedded[i]!;
        });
      }
      // A retry may follow an attempt that wrote some rows before failing: only a first attempt
      // can promise new ids.
      await index.upsert({ records, embedder: { id: embedder.id, dimensions: embedder.dimensions }, newIds: newIds && attempt === 1 });
      return true;
    } catch (error) {
      if (error instanceof EmbedderMismatchError) return 'embedder_mismatch';
      context.logger.warn('memory commit failed', { jobId: job.id, attempt, error: describeError(error) });
      // The database under the index went away: the turns are not failed, the job resumes when it returns.
      if (attempt >= COMMIT_ATTEMPTS && isDependencyUnavailable(error)) throw error;
      if (attempt >= COMMIT_ATTEMPTS) return 'memory_commit_shortfall';
    }
  }
}

/**
 * Marks the memories the writer said the batch supersedes (issue 32), after the batch committed:
 * a failed commit never ends the old fact. The old memory is kept as history: `validTo` is the
 * successor's `validFrom` (else the batch's last turn's timestamp) and `supersededBy` its id. A
 * memory rewritten under the same id in this batch (a resumed turn) is left as written. If the
 * update keeps failing, both stay current (logged): retrieval prefers the newer of near-duplicates.
 */
async function applySupersessions(context: ServiceContext, job: JobRecord, turns: TurnRecord[], supersedes: readonly Supersession[], written: MemoryRecord[]): Promise<void> {
  const byId = new Map(written.map((record) => [record.id, record]));
  const ended = turns.reduce((latest, turn) => (turn.timestamp > latest ? turn.timestamp : latest), turns[0]?.timestamp ?? context.nowIso());
  const patches = new Map<string, MemoryPatch>();
  // The turn whose memory replaced each old one (null: "no longer true"), for the job's receipt.
  const turnOf = new Map<string, number | null>();
  for (const { old, by } of supersedes) {
    const oldId = 'id' in old ? old.id : draftId(job.id, old);
    const successor = by ? byId.get(draftId(job.id, by)) : undefined;
    // A successor that was not committed (its turn failed) supersedes nothing.
    if ((by && !successor) || successor?.id === oldId || patches.has(oldId)) continue;
    // An existing memory rewritten by this batch (a resumed turn) is not the old fact.
    if ('id' in old && byId.has(oldId)) continue;
    if (!('id' in old) && !byId.has(oldId)) continue;
    patches.set(oldId, { id: oldId, validTo: successor?.validFrom ?? ended, supersededBy: successor?.id ?? null });
    turnOf.set(oldId, by && successor ? by.turnIndex : null);
  }
  if (patches.size === 0) return;
  for (let attempt = 1; attempt <= COMMIT_ATTEMPTS; attempt++) {
    try {
      await context.index.update({ agentId: job.agentId, patches: [...patches.values()] });
      await recordSupersessions(context, job, turnOf);
      return;
    } catch (error) {
      context.logger.warn('marking superseded memories failed', { jobId: job.id, attempt, error: describeError(error) });
    }
  }
}

/** Records what the batch superseded for the job's receipt; a failure is logged (the index already changed). */
async function recordSupersessions(context: ServiceContext, job: JobRecord, turnOf: Map<string, number | null>): Promise<void> {
  const byTurn = new Map<number | null, string[]>();
  for (const [memoryId, turnIndex] of turnOf) byTurn.set(turnIndex, [...(byTurn.get(turnIndex) ?? []), memoryId]);
  try {
    await context.store.receipts.recordSupersessions({ jobId: job.id, supersessions: [...byTurn].map(([turnIndex, memoryIds]) => ({ turnIndex, memoryIds })) });
  } catch (error) {
    context.logger.warn('recording superseded memories failed', { jobId: job.id, error: describeError(error) });
  }
}

/**
 * The learning reason of a writer that threw for a whole batch: a `LanguageModelError` names its
 * kind (port "LanguageModel": unavailable -> model_unavailable, timeout -> generation_timeout,
 * unparseable -> generation_unparseable); anything else is generation_failed.
 */
function writerFailureReason(error: unknown): LearningReason {
  if (error instanceof LanguageModelError || (error instanceof Error && error.name === 'LanguageModelError')) {
    const kind = (error as LanguageModelError).kind;
    if (kind === 'unavailable') return 'model_unavailable';
    if (kind === 'timeout') return 'generation_timeout';
    if (kind === 'unparseable') return 'generation_unparseable';
  }
  return 'generation_failed';
}

/** Where a turn of a job came from, as its memories cite it. */
export function sourceOf(job: JobRecord, turn: TurnRecord): MemorySourceRef {
  const details = turn.details;
  if (job.kind === 'document' && details.sourceId !== undefined) {
    return {
      kind: 'document',
      threadId: job.threadId,
      observationId: job.id,
      turnIndex: turn.turnIndex,
      sourceId: details.sourceId,
      page: details.page,
      filename: details.filename ?? turn.speaker,
    };
  }
  return { kind: 'turn', threadId: job.threadId, observationId: job.id, turnIndex: turn.turnIndex };
}
