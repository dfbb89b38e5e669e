import { billedWords } from '../credits/pricing.js';
import { sameSource } from '../observations/merge-duplicates.js';
import { blankMark, marksOf } from '../memories/find.js';
import type { MemoryHitRecord, MemoryPatch, MemorySourceRef } from '../ports/memory-index.js';
import type { MaintenanceChange, MaintenanceRunRecord, MemoryMarkRecord } from '../ports/store/index.js';
import type { MaintenanceRunOutput } from '../schemas/maintenance.js';
import type { ServiceContext } from '../service/context.js';
import { stateOf } from './plan.js';
import { applyPolicyChange, existing, redactedTexts, undoPolicyChange } from './repolicy.js';

/** Changes applied (or undone) per index update and progress write. */
const BATCH = 100;

/** The agent's records a run names (memories and keepers), by id, without vectors. */
async function recordsOf(context: ServiceContext, run: MaintenanceRunRecord): Promise<Map<string, MemoryHitRecord>> {
  const ids = [...new Set(run.changes.flatMap((change) => (change.keepId === null ? [change.memoryId] : [change.memoryId, change.keepId])))];
  const found = new Map<string, MemoryHitRecord>();
  for (let start = 0; start < ids.length; start += 500) {
    for (const { vector: _vector, ...record } of await context.index.get({ agentId: run.agentId, ids: ids.slice(start, start + 500) })) found.set(record.id, record);
  }
  return found;
}

/** A value as JSON with sorted keys and instants in one form (a store's jsonb reorders keys, an index may write dates its own way). */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.keys(value).sort().map((key) => `${JSON.stringify(key)}:${canonical((value as Record<string, unknown>)[key])}`).join(',')}}`;
  }
  if (typeof value === 'string' && /^\d{4}-\d{2}-\d{2}T/.test(value) && !Number.isNaN(Date.parse(value))) return JSON.stringify(new Date(value).toISOString());
  return JSON.stringify(value);
}
const sameState = (a: unknown, b: unknown) => canonical(a) === canonical(b);
const sameInstant = (a: string | null, b: string | null) => a === b || (a !== null && b !== null && Date.parse(a) === Date.parse(b));
const isApplied = (change: MaintenanceChange, record: MemoryHitRecord) => sameInstant(record.validTo, change.validTo) && record.supersededBy === change.keepId;
const forgottenBy = (run: MaintenanceRunRecord, mark: MemoryMarkRecord | undefined) => mark?.forgotten?.reason === reasonOf(run);
const reasonOf = (run: MaintenanceRunRecord) => `maintenance run ${run.id} (${run.kind})`;

/**
 * The memories (ids) of the run whose state differs from the dry run's: a memory or keeper erased,
 * edited, superseded, merged into, forgotten or re-expired since. Applying is refused then.
 */
export async function readStates(context: ServiceContext, run: MaintenanceRunRecord): Promise<string[]> {
  const records = await recordsOf(context, run);
  const marks = await marksOf(context, run.agentId, [...records.values()]);
  const changed = new Set<string>();
  for (const change of run.changes) {
    const memory = records.get(change.memoryId);
    if (!memory || !sameState(stateOf(memory), change.before.memory) || marks.get(memory.id)?.forgotten != null) changed.add(change.memoryId);
    if (change.keepId === null || !change.before.keep) continue;
    const keep = records.get(change.keepId);
    // A keeper's alsoFrom grows with the run's own merges: its validity and text are what count.
    const { alsoFrom: _a, ...was } = change.before.keep;
    const { alsoFrom: _b, ...is } = keep ? stateOf(keep) : { alsoFrom: [] };
    if (!keep || !sameState(was, is) || marks.get(keep.id)?.forgotten != null) changed.add(change.keepId);
  }
  return [...changed];
}

/**
 * Applies the run's changes, replaying safely: a change already applied (a resumed run) is left as
 * it is, a memory in neither state (changed by someone else after the intent) is skipped (logged).
 * Keepers' `alsoFrom` only ever grows by the run's sources (a union), so a replay writes the same.
 */
export async function applyChanges(context: ServiceContext, run: MaintenanceRunRecord, progress: (done: number) => Promise<void>): Promise<void> {
  const records = await recordsOf(context, run);
  const marks = await marksOf(context, run.agentId, [...records.values()]);
  const texts = await redactedTexts(context, run, records);
  const written = await existing(context, run.agentId, run.changes.filter((change) => change.action === 'redact').map((change) => change.keepId!));
  const now = context.nowIso();
  const alsoFrom = new Map<string, MemorySourceRef[]>();
  // Forgotten as `POST .../forget` does: the mark first (with the expiry to give back), then hidden by
  // expiring it at that instant; a replay finds the mark and only makes sure of the expiry.
  const forget = async (memory: MemoryHitRecord, patches: Map<string, MemoryPatch>) => {
    let mark = marks.get(memory.id);
    if (mark?.forgotten != null && !forgottenBy(run, mark)) return;
    if (!forgottenBy(run, mark)) {
      const forgotten = { at: now, reason: reasonOf(run), by: run.createdBy, restoreUntil: new Date(Date.parse(now) + context.lifecycle.restoreWindowMs).toISOString(), expiresAtBefore: memory.expiresAt };
      mark = { ...(mark ?? blankMark(memory, now)), forgotten, updatedAt: now };
      await context.store.memoryMarks.put({ record: mark });
      marks.set(memory.id, mark);
    }
    const at = mark!.forgotten!.at;
    if (memory.expiresAt === null || Date.parse(memory.expiresAt) > Date.parse(at)) patches.set(memory.id, { ...patches.get(memory.id), id: memory.id, expiresAt: at });
  };
  for (let start = 0; start < run.changes.length; start += BATCH) {
    const patches = new Map<string, MemoryPatch>();
    const forgetting: MemoryHitRecord[] = [];
    for (const change of run.changes.slice(start, start + BATCH)) {
      const memory = records.get(change.memoryId);
      if (!memory) continue;
      if (change.action === 'forget') {
        await forget(memory, patches);
        continue;
      }
      if (!isApplied(change, memory) && !sameState(stateOf(memory), change.before.memory)) {
        context.logger.warn('a memory changed after the maintenance run started; its change is skipped', { runId: run.id, memoryId: memory.id });
        continue;
      }
      if (change.action === 'recategorise' || change.action === 'redact') await applyPolicyChange(context, run, change, memory, marks, texts, written);
      if (change.action === 'recategorise') continue;
      patches.set(memory.id, { ...patches.get(memory.id), id: memory.id, validTo: change.validTo, supersededBy: change.keepId });
      if (change.action === 'redact') forgetting.push(memory);
      const keep = change.keepId === null ? undefined : records.get(change.keepId);
      if (keep && change.added.length > 0) {
        const union = alsoFrom.get(keep.id) ?? keep.alsoFrom.map((source) => ({ ...source }));
        for (const source of change.added) if (!union.some((known) => sameSource(known, source as MemorySourceRef))) union.push({ ...(source as MemorySourceRef) });
        alsoFrom.set(keep.id, union);
        patches.set(keep.id, { ...patches.get(keep.id), id: keep.id, alsoFrom: union });
      }
    }
    if (patches.size > 0) await context.index.update({ agentId: run.agentId, patches: [...patches.values()] });
    // A redacted memory's old text: forgotten once superseded, so the sweep erases it after the window.
    const hiding = new Map<string, MemoryPatch>();
    for (const memory of forgetting) await forget(memory, hiding);
    if (hiding.size > 0) await context.index.update({ agentId: run.agentId, patches: [...hiding.values()] });
    await progress(Math.min(run.changes.length, start + BATCH));
  }
}

/**
 * Reverses every change still as the run left it, newest first: validity given back, the sources
 * the run added taken out of keepers' `alsoFrom` (never anything else), forgetting undone.
 */
export async function undoChanges(context: ServiceContext, run: MaintenanceRunRecord): Promise<void> {
  const records = await recordsOf(context, run);
  const marks = await marksOf(context, run.agentId, [...records.values()]);
  const now = context.nowIso();
  const changes = [...run.changes].reverse();
  const unforget = async (memory: MemoryHitRecord, patches: Map<string, MemoryPatch>) => {
    const mark = marks.get(memory.id);
    if (!mark || !forgottenBy(run, mark)) return;
    const next = { ...mark, forgotten: null, updatedAt: now };
    if (!next.pinned && next.edited === null && next.citedCount === 0 && next.category == null && next.policyVersion == null) await context.store.memoryMarks.delete({ agentId: run.agentId, memoryIds: [memory.id] });
    else await context.store.memoryMarks.put({ record: next });
    if (memory.expiresAt !== mark.forgotten!.expiresAtBefore) patches.set(memory.id, { ...patches.get(memory.id), id: memory.id, expiresAt: mark.forgotten!.expiresAtBefore });
  };
  const redactions: { change: MaintenanceChange; memory: MemoryHitRecord }[] = [];
  for (let start = 0; start < changes.length; start += BATCH) {
    const patches = new Map<string, MemoryPatch>();
    for (const change of changes.slice(start, start + BATCH)) {
      const memory = records.get(change.memoryId);
      if (!memory) continue;
      if (change.action === 'forget') {
        await unforget(memory, patches);
        continue;
      }
      if (change.action === 'recategorise') {
        await undoPolicyChange(context, change, memory, marks);
        continue;
      }
      if (change.action === 'redact') {
        await unforget(memory, patches);
        // Its new memory goes once the old one is current again (below), even when a kill left the old one unsuperseded.
        redactions.push({ change, memory });
      }
      if (!isApplied(change, memory)) continue;
      patches.set(memory.id, { ...patches.get(memory.id), id: memory.id, validTo: change.before.memory.validTo, supersededBy: change.before.memory.supersededBy });
      const keep = change.keepId === null ? undefined : records.get(change.keepId);
      if (keep && change.added.length > 0) {
        const left = keep.alsoFrom.filter((source) => !change.added.some((added) => sameSource(added as MemorySourceRef, source)));
        keep.alsoFrom = left;
        patches.set(keep.id, { ...patches.get(keep.id), id: keep.id, alsoFrom: left });
      }
    }
    if (patches.size > 0) await context.index.update({ agentId: run.agentId, patches: [...patches.values()] });
    for (const { change, memory } of redactions.splice(0)) await undoPolicyChange(context, change, memory, marks);
    await context.store.maintenanceRuns.update({ runId: run.id, patch: { done: Math.min(changes.length, start + BATCH) }, updatedAt: context.nowIso() });
  }
}

type Guard = MaintenanceRunOutput['guard'];

/** The guard over a run's diff, given the texts of its keepers. */
function guardWith(run: MaintenanceRunRecord, keepText: (id: string) => string | null): Guard {
  // A redaction replaces a memory and a re-categorisation keeps it: neither takes one out of search.
  const taken = new Set(run.changes.filter((change) => change.action !== 'redact' && change.action !== 'recategorise').map((change) => change.memoryId)).size;
  const share = run.currentMemories === 0 ? 0 : taken / run.currentMemories;
  const base = { max_share: run.maxShare, share: Math.round(share * 10_000) / 10_000, current_memories: run.currentMemories };
  const empty = run.changes.find((change) => change.keepId !== null && (keepText(change.keepId) ?? 'erased').trim() === '');
  if (empty) return { ...base, allowed: false, reason: `Applying would leave memory ${empty.keepId} with empty text as the one kept in place of ${empty.memoryId}; the guard refuses it.` };
  if (share > run.maxShare) {
    return { ...base, allowed: false, reason: `Applying would take ${taken} of the agent's ${run.currentMemories} current memories (${(share * 100).toFixed(1)}%) out of current search, more than the guard's ${(run.maxShare * 100).toFixed(1)}%; plan again with a larger max_share if that is meant.` };
  }
  return { ...base, allowed: true, reason: null };
}

/** The words of the memories the run changes, each once: what applying it is charged for (credits). */
export async function wordsOf(context: ServiceContext, run: MaintenanceRunRecord): Promise<number> {
  const records = await recordsOf(context, run);
  return [...new Set(run.changes.map((change) => change.memoryId))].reduce((sum, id) => sum + billedWords(records.get(id)?.text ?? ''), 0);
}

/** The guard of a run (reads its keepers' texts). */
export async function guardOf(context: ServiceContext, run: MaintenanceRunRecord): Promise<Guard> {
  const records = await recordsOf(context, run);
  return guardWith(run, (id) => records.get(id)?.text ?? null);
}

/** A run as the API shows it: the diff with the memories' texts (null once erased), the guard, the receipt. */
export async function presentRun(context: ServiceContext, run: MaintenanceRunRecord, withChanges: boolean): Promise<MaintenanceRunOutput> {
  const records = withChanges || run.changes.some((change) => change.keepId !== null) ? await recordsOf(context, run) : new Map<string, MemoryHitRecord>();
  // A redaction's new memory is written on apply: until then its text is what the policy would write.
  const previews = withChanges && run.kind === 'reapply_policy' ? await redactedTexts(context, run, records) : new Map<string, string>();
  const text = (id: string | null) => (id === null ? null : (records.get(id)?.text ?? previews.get(id) ?? null));
  const applied = run.appliedAt !== null || run.status === 'applying' || (run.status === 'failed' && run.done > 0);
  const count = (action: MaintenanceChange['action']) => (applied ? run.changes.filter((change) => change.action === action).length : 0);
  return {
    run_id: run.id,
    agent_id: run.agentId,
    kind: run.kind,
    status: run.status,
    progress: { done: run.done, total: run.changes.length },
    guard: guardWith(run, text),
    receipt: { merged: count('merge'), superseded: count('supersede'), forgotten: count('forget'), redacted: count('redact'), recategorised: count('recategorise') },
    changes: withChanges
      ? run.changes.map((change) => ({ action: change.action, memory_id: change.memoryId, memory_text: text(change.memoryId), keep_id: change.keepId, keep_text: text(change.keepId), reason: change.reason, category: change.category ?? null }))
      : [],
    error: run.error,
    created_by: run.createdBy,
    created_at: run.createdAt,
    updated_at: run.updatedAt,
    applied_at: run.appliedAt,
    undo_until: run.undoUntil,
    undone_at: run.undoneAt,
  };
}
