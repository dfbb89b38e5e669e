import { centroidsOf, keywordCategory, listedCategory, nearestCategory } from '../policy/categories.js';
import { memoryExclusionOf, policyVersionOf } from '../policy/extraction-policy.js';
import type { MemoryRecord } from '../ports/memory-index.js';
import type { TurnOutcome, WriterPolicy } from '../ports/memory-writer.js';
import type { AgentConfig, ExtractionPolicy, JobPolicyDrop, JobRecord, LearnedMark, TurnRecord } from '../ports/store/index.js';
import type { ServiceContext } from '../service/context.js';
import { draftId } from './draft-id.js';

/**
 * What an agent's extraction policy (issue 44) does to the memories a learning batch wrote, before
 * they are merged and committed: each gets at most one category of the policy's closed list
 * (`policy/categories.ts`), a memory an exclude rule names by its category (or that include rules
 * or `only_categories` do not keep) is dropped, and every memory kept records the policy version
 * and its category in its mark (store area `memoryMarks`). With no policy it changes nothing.
 */

/** The agent's config as learning reads it once per batch (its policy, its review mode); null when the agent is gone. */
export async function batchConfig(context: ServiceContext, job: JobRecord): Promise<AgentConfig | null> {
  const agent = await context.store.agents.get({ organizationId: job.organizationId, agentId: job.agentId });
  return agent?.config ?? null;
}

/** What the writer is told of the policy; undefined when the policy asks nothing of it. */
export function writerPolicyOf(policy: ExtractionPolicy | null): WriterPolicy | undefined {
  if (!policy || (!policy.categories?.length && policy.instructions === undefined && (policy.language ?? 'speaker') === 'speaker')) return undefined;
  return { categories: policy.categories ?? [], instructions: policy.instructions ?? null, language: policy.language ?? 'speaker' };
}

export type PolicyApplied = {
  /** The records to merge and commit (those dropped left out). */
  records: MemoryRecord[];
  /** What to record in the marks once the records are committed (empty without a policy). */
  marks: LearnedMark[];
  /** The memories dropped, for the receipt. */
  drops: JobPolicyDrop[];
};

/**
 * Categorizes and filters `records` (built by learning from `outcomes`, ids `mem_<job>_<turn>_<piece>`)
 * by the policy. Categorizing by meaning embeds the records here (their vectors are then set, and
 * the commit does not embed them again).
 */
export async function applyMemoryPolicy(
  context: ServiceContext,
  job: JobRecord,
  policy: ExtractionPolicy | null,
  turns: readonly TurnRecord[],
  outcomes: readonly TurnOutcome[],
  records: MemoryRecord[],
): Promise<PolicyApplied> {
  const version = policy ? policyVersionOf({ extraction_policy: policy } as AgentConfig) : 0;
  if (!policy || records.length === 0 || version === 0) return { records, marks: [], drops: [] };
  const categories = policy.categories ?? [];
  const proposed = new Map<string, string | null | undefined>();
  for (const outcome of outcomes) {
    if (outcome.ok) outcome.memories.forEach((memory, piece) => proposed.set(draftId(job.id, { turnIndex: outcome.turnIndex, piece }), memory.category));
  }
  const category = new Map<string, string | null>();
  const byMeaning: MemoryRecord[] = [];
  for (const record of records) {
    const fromWriter = proposed.get(record.id);
    const given = categories.length === 0 ? null : fromWriter !== undefined ? listedCategory(categories, fromWriter) : keywordCategory(categories, record.text);
    category.set(record.id, given);
    if (given === null && fromWriter === undefined && categories.length > 0 && context.embedder.meaning === true) byMeaning.push(record);
  }
  if (byMeaning.length > 0) {
    const [centroids, { vectors }] = await Promise.all([centroidsOf(context.embedder, categories), context.embedder.embed({ texts: records.map((record) => record.text) })]);
    records.forEach((record, i) => (record.vector = vectors[i]!));
    for (const record of byMeaning) category.set(record.id, nearestCategory(categories, centroids, record.vector));
  }
  const turnOf = new Map(turns.map((turn) => [turn.turnIndex, turn]));
  const kept: MemoryRecord[] = [];
  const drops: JobPolicyDrop[] = [];
  for (const record of records) {
    const turn = turnOf.get(record.source.turnIndex);
    const given = category.get(record.id) ?? null;
    const rule = turn ? memoryExclusionOf(policy, { speaker: turn.speaker, text: turn.text, document: turn.details.sourceId !== undefined }, given) : null;
    if (rule === null) kept.push(record);
    else drops.push({ turnIndex: record.source.turnIndex, category: given, rule });
  }
  const marks = kept.map(
    (record): LearnedMark => ({
      memoryId: record.id,
      threadId: record.source.threadId,
      observationId: record.source.observationId,
      sourceId: record.source.kind === 'document' ? record.source.sourceId : null,
      category: category.get(record.id) ?? null,
      policyVersion: version,
    }),
  );
  return { records: kept, marks, drops };
}
