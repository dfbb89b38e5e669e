import { centroidsOf, keywordCategory, nearestCategory } from '../policy/categories.js';
import { exclusionOf, memoryExclusionOf, policyVersionOf, redactForAgent, redactionPolicyOf } from '../policy/extraction-policy.js';
import { blankMark, marksOf } from '../memories/find.js';
import type { MemoryHitRecord, MemoryRecord } from '../ports/memory-index.js';
import type { AgentRecord, MaintenanceChange, MaintenanceRunRecord, MemoryMarkRecord } from '../ports/store/index.js';
import type { ServiceContext } from '../service/context.js';
import { ServiceError } from '../errors/index.js';
import { listAll, stateOf } from './plan.js';

/**
 * `reapply_policy` (issue 44): the agent's current extraction policy applied to memories kept under
 * an older version (their mark records the version that kept them; none: before any policy). Each
 * such conversation memory is judged on its own text as learning would judge a turn saying it:
 * - dropped (`forget`) when an exclude rule, the include rules or `only_categories` would not keep
 *   it now (restorable for the restore window, then erased);
 * - redacted (`redact`) when the policy's redaction changes its text: a new memory (its id planned
 *   now, written on apply) holds the redacted text, keywords and vector; the old one is superseded
 *   by it and forgotten, so its personal data is erased once the window ends;
 * - re-categorised (`recategorise`) when its category under the current list differs.
 * A memory the current policy keeps as it is has no change (its mark keeps its old version).
 */
export async function planRepolicy(context: ServiceContext, agent: AgentRecord): Promise<MaintenanceChange[]> {
  const policy = agent.config.extraction_policy;
  const version = policyVersionOf(agent.config);
  if (!policy || version === 0) return [];
  const now = context.nowIso();
  const current = (await listAll(context, agent.id, { now })).filter((record) => record.source.kind === 'turn');
  const marks = await marksOf(context, agent.id, current);
  const stale = current.filter((record) => marks.get(record.id)?.forgotten == null && (marks.get(record.id)?.policyVersion ?? 0) < version);
  const categories = policy.categories ?? [];
  const texts = new Map(stale.map((record) => [record.id, redactForAgent(context, agent.config, record.text)]));
  const category = new Map(stale.map((record) => [record.id, categories.length === 0 ? null : keywordCategory(categories, texts.get(record.id)!)]));
  const byMeaning = stale.filter((record) => category.get(record.id) === null && categories.length > 0);
  if (byMeaning.length > 0 && context.embedder.meaning === true) {
    const centroids = await centroidsOf(context.embedder, categories);
    const { vectors } = await context.embedder.embed({ texts: byMeaning.map((record) => texts.get(record.id)!) });
    byMeaning.forEach((record, i) => category.set(record.id, nearestCategory(categories, centroids, vectors[i]!)));
  }
  const changes: MaintenanceChange[] = [];
  for (const record of stale) {
    const mark = marks.get(record.id);
    const text = texts.get(record.id)!;
    const to = category.get(record.id) ?? null;
    const from = mark?.category ?? null;
    const speaker = record.speaker ?? '';
    const rule = exclusionOf(agent.config, { speaker, text }) ?? memoryExclusionOf(policy, { speaker, text, document: false }, to);
    const base = { validTo: null, added: [], before: { memory: stateOf(record), keep: null }, category: { from, to }, policyVersion: { from: mark?.policyVersion ?? null, to: version } };
    if (rule !== null) changes.push({ ...base, action: 'forget', memoryId: record.id, keepId: null, reason: `Policy version ${version} does not keep it: ${rule}.` });
    else if (text !== record.text) {
      const kinds = redactionPolicyOf(agent.config)!.kinds.join(', ');
      changes.push({ ...base, action: 'redact', memoryId: record.id, keepId: context.ids('mem_'), validTo: now, reason: `Policy version ${version} redacts it (${kinds}); the redacted memory replaces it.` });
    } else if (to !== from) {
      changes.push({ ...base, action: 'recategorise', memoryId: record.id, keepId: null, reason: `Policy version ${version} gives it ${to === null ? 'no category' : `category ${to}`} (was ${from ?? 'none'}).` });
    }
  }
  return changes;
}

/** 409 when the agent's policy is not the version the run was planned under (its diff would be stale). */
export async function checkPolicyVersion(context: ServiceContext, run: MaintenanceRunRecord): Promise<void> {
  const planned = run.changes.find((change) => change.policyVersion !== undefined)?.policyVersion?.to;
  if (planned === undefined) return;
  const agent = await context.store.agents.get({ organizationId: run.organizationId, agentId: run.agentId });
  const version = agent ? policyVersionOf(agent.config) : 0;
  if (version !== planned) throw new ServiceError('conflict', `The agent's extraction policy is version ${version}, the run was planned under version ${planned}; plan a new run.`);
}

/** The text a `redact` change writes: the memory's text under the agent's current redaction. */
export async function redactedTexts(context: ServiceContext, run: MaintenanceRunRecord, records: ReadonlyMap<string, MemoryHitRecord>): Promise<Map<string, string>> {
  const redacting = run.changes.filter((change) => change.action === 'redact');
  const texts = new Map<string, string>();
  if (redacting.length === 0) return texts;
  const agent = await context.store.agents.get({ organizationId: run.organizationId, agentId: run.agentId });
  for (const change of redacting) {
    const record = records.get(change.memoryId);
    if (record && agent) texts.set(change.keepId!, redactForAgent(context, agent.config, record.text));
  }
  return texts;
}

/**
 * Writes a `redact` change's new memory (once: a replay finds it written) and the marks of a
 * `redact` or `recategorise` change (target states, so a replay writes the same). The old memory
 * of a `redact` is superseded and forgotten by the caller's usual paths.
 */
export async function applyPolicyChange(context: ServiceContext, run: MaintenanceRunRecord, change: MaintenanceChange, memory: MemoryHitRecord, marks: Map<string, MemoryMarkRecord>, texts: Map<string, string>, written: ReadonlySet<string>): Promise<void> {
  const now = context.nowIso();
  const version = change.policyVersion!.to;
  if (change.action === 'recategorise') {
    const mark = marks.get(memory.id) ?? blankMark(memory, now);
    await context.store.memoryMarks.put({ record: { ...mark, category: change.category!.to, policyVersion: version, updatedAt: now } });
    return;
  }
  const id = change.keepId!;
  if (!written.has(id)) {
    const text = texts.get(id) ?? memory.text;
    const agent = await context.store.agents.get({ organizationId: run.organizationId, agentId: run.agentId });
    const keywords = agent ? redactedKeywords(redactForAgent(context, agent.config, memory.keywords), memory.text, text) : '';
    const { vectors } = await context.embedder.embed({ texts: [text] });
    const record: MemoryRecord = { ...memory, id, text, keywords, vector: vectors[0]!, createdAt: now, validTo: null, supersededBy: null, alsoFrom: memory.alsoFrom.map((source) => ({ ...source })) };
    await context.index.upsert({ records: [record], embedder: { id: context.embedder.id, dimensions: context.embedder.dimensions } });
  }
  await context.store.memoryMarks.put({ record: { ...blankMark({ ...memory, id }, now), category: change.category!.to, policyVersion: version } });
}

const wordsOf = (text: string) => text.split(/[\s,.;:!?()"'\[\]]+/u).filter((word) => word !== '');

/**
 * A memory's keywords with what its redaction took out: the keywords redacted as text, then every
 * word of the text the redaction removed (the digit groups of a card number the keywords list one
 * by one, an address split by the writer's entity rule) taken out wherever it occurs.
 */
function redactedKeywords(keywords: string, before: string, after: string): string {
  const kept = new Set(wordsOf(after).map((word) => word.toLowerCase()));
  const removed = new Set(wordsOf(before).map((word) => word.toLowerCase()).filter((word) => !kept.has(word)));
  return keywords
    .split(/(\s+)/u)
    .filter((token) => !wordsOf(token).some((word) => removed.has(word.toLowerCase())))
    .join('')
    .replace(/\s+/gu, ' ')
    .trim();
}

/** Reverses what {@link applyPolicyChange} wrote: the mark's category and version back; a redaction's new memory removed. */
export async function undoPolicyChange(context: ServiceContext, change: MaintenanceChange, memory: MemoryHitRecord, marks: Map<string, MemoryMarkRecord>): Promise<void> {
  const now = context.nowIso();
  if (change.action === 'recategorise') {
    const mark = marks.get(memory.id);
    if (!mark || mark.category !== change.category!.to) return;
    await context.store.memoryMarks.put({ record: { ...mark, category: change.category!.from, policyVersion: change.policyVersion!.from, updatedAt: now } });
    return;
  }
  await context.index.deleteBy({ agentId: memory.agentId, ids: [change.keepId!] });
  await context.store.memoryMarks.delete({ agentId: memory.agentId, memoryIds: [change.keepId!] });
}

/** Whether the records of `ids` exist in the index (a redaction's new memory already written). */
export async function existing(context: ServiceContext, agentId: string, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  return new Set((await context.index.get({ agentId, ids })).map((record) => record.id));
}
