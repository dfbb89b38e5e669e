import { createHash } from 'node:crypto';
import { duplicateKey } from '../memory/duplicates.js';
import { memoryScopeOf } from '../agents/memory-scope.js';
import { SUPERSESSION_CANDIDATES } from '../memory/default-memory-writer.js';
import { canSupersede, extractClaims, supersedesClaim, type FactClaim } from '../memory/fact-updates.js';
import { cosineSimilarity } from '../memory-index/memory-index-helpers.js';
import { sameSource } from '../observations/merge-duplicates.js';
import type { MemoryHitRecord, MemorySourceRef } from '../ports/memory-index.js';
import type { AgentRecord, MaintenanceChange, MaintenanceKind, MaintenanceMemoryState, MaintenanceSourceRef } from '../ports/store/index.js';
import type { ServiceContext } from '../service/context.js';
import { marksOf } from '../memories/find.js';

/**
 * Cosine similarity from which two memories of one speaker, with no fact between them that the
 * current-truth rules tell apart and the same numbers, say the same thing (only with an embedder
 * that has meaning, `Embedder.meaning`). Measured on the repository's fixtures (docs/benchmarks.md,
 * "Maintenance"): restatements of one fact by the local sentence model score above it, different
 * facts of one speaker below.
 */
export const MEANING_MERGE_THRESHOLD = 0.9;

/** Most memories compared pairwise by meaning per speaker (beyond: the exact-words rule alone). */
const MEANING_MAX_PER_SPEAKER = 2000;
const PAGE = 1000;

/** A memory's state as a run records and re-checks it. */
export function stateOf(record: MemoryHitRecord): MaintenanceMemoryState {
  return {
    validTo: record.validTo,
    supersededBy: record.supersededBy,
    alsoFrom: record.alsoFrom.map((source) => ({ ...source }) as MaintenanceSourceRef),
    expiresAt: record.expiresAt,
    textHash: createHash('sha256').update(`${record.speaker ?? ''}\n${record.text}`).digest('base64url'),
  };
}

/** Every memory of the agent the filters select, all pages. */
export async function listAll(context: ServiceContext, agentId: string, filters: { now?: string; expiredBefore?: string }): Promise<MemoryHitRecord[]> {
  const records: MemoryHitRecord[] = [];
  let cursor: string | null = null;
  do {
    const page = await context.index.list({ agentId, limit: PAGE, cursor, ...filters });
    records.push(...page.records);
    cursor = page.nextCursor;
  } while (cursor !== null);
  return records;
}

/** The agent's current memories (not superseded; expired ones included): the guard's base. */
export async function countCurrent(context: ServiceContext, agentId: string): Promise<number> {
  return (await listAll(context, agentId, {})).length;
}

const said = (record: MemoryHitRecord) => record.occurredAt ?? record.createdAt;
const oldestFirst = (a: MemoryHitRecord, b: MemoryHitRecord) => (a.createdAt === b.createdAt ? (a.id < b.id ? -1 : 1) : a.createdAt < b.createdAt ? -1 : 1);

/** The person a thread belongs to ('' for none), read once per thread. */
function personOf(context: ServiceContext, agentId: string) {
  const known = new Map<string, Promise<string>>();
  return (threadId: string) => {
    let person = known.get(threadId);
    if (!person) known.set(threadId, (person = context.store.threads.get({ agentId, threadId }).then((thread) => thread?.endUserId ?? '')));
    return person;
  };
}

/** The changes a run of `kind` makes to the agent's memories now (a dry run: nothing is written). */
export async function planChanges(context: ServiceContext, agent: AgentRecord, kind: MaintenanceKind): Promise<MaintenanceChange[]> {
  const now = context.nowIso();
  if (kind === 'sweep_expired') return planSweep(context, agent.id, now);
  const current = (await listAll(context, agent.id, { now })).filter((record) => record.source.kind === 'turn').sort(oldestFirst);
  return kind === 'merge_duplicates' ? planMerges(context, agent.id, current, now) : planSupersessions(context, agent, current, now);
}

async function planSweep(context: ServiceContext, agentId: string, now: string): Promise<MaintenanceChange[]> {
  const expired = await listAll(context, agentId, { expiredBefore: now });
  const marks = await marksOf(context, agentId, expired);
  return expired
    // A memory waiting in the review queue, or declined there (issue 43), is hidden by expiry, not expired.
    .filter((record) => marks.get(record.id)?.forgotten == null && marks.get(record.id)?.pinned !== true && marks.get(record.id)?.review?.state !== 'pending' && marks.get(record.id)?.review?.state !== 'declined')
    .sort(oldestFirst)
    .map((record) => ({ action: 'forget', memoryId: record.id, keepId: null, reason: `Expired at ${record.expiresAt}.`, validTo: null, added: [], before: { memory: stateOf(record), keep: null } }));
}

/** The numbers a text states: two memories stating different numbers never merge by meaning. */
const numbersOf = (text: string) => (text.match(/\d+(?:[.,:]\d+)*/g) ?? []).sort().join(' ');

async function planMerges(context: ServiceContext, agentId: string, current: MemoryHitRecord[], now: string): Promise<MaintenanceChange[]> {
  const person = personOf(context, agentId);
  // Groups of one speaker and person (and suspicious flag): only these may merge.
  const groups = new Map<string, MemoryHitRecord[]>();
  for (const record of current) {
    const slot = `${record.suspicious}\u0000${record.speaker ?? ''}\u0000${await person(record.source.threadId)}`;
    groups.set(slot, [...(groups.get(slot) ?? []), record]);
  }
  const changes: MaintenanceChange[] = [];
  const meaning = context.embedder.meaning === true;
  for (const members of groups.values()) {
    // Union-find by "says the same": exact normalised words, or (with meaning) close vectors.
    const keeperOf = new Map<string, MemoryHitRecord>();
    const reasonOf = new Map<string, string>();
    const byKey = new Map<string, MemoryHitRecord>();
    for (const record of members) {
      const key = duplicateKey(record);
      if (key === null) continue;
      const keeper = byKey.get(key);
      if (keeper) {
        keeperOf.set(record.id, keeper);
        reasonOf.set(record.id, 'Same speaker, same words (the write-time duplicate rule).');
      } else byKey.set(key, record);
    }
    if (meaning && members.length > 1 && members.length <= MEANING_MAX_PER_SPEAKER) {
      const left = members.filter((record) => !keeperOf.has(record.id) && duplicateKey(record) !== null);
      const vectors = new Map((await context.index.get({ agentId, ids: left.map((record) => record.id) })).map((record) => [record.id, record.vector]));
      const claims = new Map(left.map((record) => [record.id, extractClaims(record.text)]));
      for (const [position, record] of left.entries()) {
        if (keeperOf.has(record.id)) continue;
        for (const earlier of left.slice(0, position)) {
          if (keeperOf.has(earlier.id)) continue;
          const a = vectors.get(earlier.id);
          const b = vectors.get(record.id);
          if (!a || !b || numbersOf(earlier.text) !== numbersOf(record.text) || conflicting(claims.get(earlier.id)!, claims.get(record.id)!)) continue;
          const similarity = cosineSimilarity(a, b);
          if (similarity < MEANING_MERGE_THRESHOLD) continue;
          keeperOf.set(record.id, earlier);
          reasonOf.set(record.id, `Same speaker, same meaning (cosine ${similarity.toFixed(3)} >= ${MEANING_MERGE_THRESHOLD}).`);
          break;
        }
      }
    }
    const alsoFrom = new Map<string, MemorySourceRef[]>();
    for (const record of members) {
      const keeper = keeperOf.get(record.id);
      if (!keeper) continue;
      const union = alsoFrom.get(keeper.id) ?? keeper.alsoFrom.map((source) => ({ ...source }));
      const added: MaintenanceSourceRef[] = [];
      for (const source of [record.source, ...record.alsoFrom]) {
        if (sameSource(source, keeper.source) || union.some((known) => sameSource(known, source))) continue;
        union.push({ ...source });
        added.push({ ...source } as MaintenanceSourceRef);
      }
      alsoFrom.set(keeper.id, union);
      changes.push({ action: 'merge', memoryId: record.id, keepId: keeper.id, reason: reasonOf.get(record.id)!, validTo: now, added, before: { memory: stateOf(record), keep: stateOf(keeper) } });
    }
  }
  return changes;
}

/** Two claim lists stating the same attribute of the same subject with values the rules tell apart. */
function conflicting(a: readonly FactClaim[], b: readonly FactClaim[]): boolean {
  return a.some((claim) => b.some((other) => supersedesClaim(claim, other) || supersedesClaim(other, claim)));
}

/**
 * Supersession across history, judged as the writer judges a new turn (`default-memory-writer.ts`):
 * each memory stating a fact that could replace another looks at its {@link SUPERSESSION_CANDIDATES}
 * nearest memories by the index (semantic hits first, then full-text ones, as the writer's
 * `searchSimilar` gives them), counting only those said no later than it (the ones that existed
 * when it was learned), and supersedes those its claims replace. Comparing every earlier memory
 * instead cost LoCoMo recall (docs/benchmarks.md "Maintenance runs (issue 43)").
 */
async function planSupersessions(context: ServiceContext, agent: AgentRecord, current: MemoryHitRecord[], now: string): Promise<MaintenanceChange[]> {
  const person = personOf(context, agent.id);
  const threadsOf = await personThreads(context, agent);
  const stating = current
    .map((record) => ({ record, claims: extractClaims(record.text) }))
    .filter(({ claims }) => claims.some(canSupersede))
    .sort((a, b) => (said(a.record) === said(b.record) ? oldestFirst(a.record, b.record) : said(a.record) < said(b.record) ? -1 : 1));
  const changes: MaintenanceChange[] = [];
  const taken = new Set<string>();
  const known = new Map<string, FactClaim[]>();
  const claimsOf = (record: MemoryHitRecord) => {
    let claims = known.get(record.id);
    if (!claims) known.set(record.id, (claims = extractClaims(record.text)));
    return claims;
  };
  for (const { record: next, claims } of stating) {
    for (const old of await candidatesOf(context, agent.id, next, now, threadsOf === undefined ? undefined : threadsOf(await person(next.source.threadId)))) {
      if (taken.has(old.id)) continue;
      const replaces = claims.some((claim) =>
        claimsOf(old).some((before) => supersedesClaim(claim, before) && (claim.subject === 'self' ? old.speaker === next.speaker : old.source.threadId === next.source.threadId)),
      );
      if (!replaces || (await person(old.source.threadId)) !== (await person(next.source.threadId))) continue;
      taken.add(old.id);
      changes.push({
        action: 'supersede',
        memoryId: old.id,
        keepId: next.id,
        reason: 'A later memory of the same speaker states a new value of the same fact (the current-truth rules, over the candidates the writer would look at).',
        validTo: next.validFrom ?? said(next),
        added: [],
        before: { memory: stateOf(old), keep: stateOf(next) },
      });
    }
  }
  return changes;
}

/**
 * The memories the writer's candidate search would have shown for `next` when it was learned: its
 * `SUPERSESSION_CANDIDATES` nearest conversation memories said no later than it (not itself, not
 * its own turn's pieces), semantic hits first. The search asks for more than that so memories said
 * later (absent at write time) do not take the earlier ones' places.
 */
async function candidatesOf(context: ServiceContext, agentId: string, next: MemoryHitRecord, now: string, threadIds: string[] | undefined): Promise<MemoryHitRecord[]> {
  const [vector] = (await context.embedder.embed({ texts: [next.text] })).vectors;
  const { semantic, lexical } = await context.index.search({ agentId, text: next.text, vector: vector ?? null, limit: SUPERSESSION_CANDIDATES * 3, now, ...(threadIds === undefined ? {} : { threadIds }) });
  const earlier = (record: MemoryHitRecord) =>
    record.id !== next.id &&
    record.source.kind === 'turn' &&
    !(record.source.observationId === next.source.observationId && record.source.turnIndex === next.source.turnIndex) &&
    !(Date.parse(said(record)) > Date.parse(said(next)));
  const pick = (hits: typeof semantic) => hits.map((hit) => hit.record).filter(earlier).slice(0, SUPERSESSION_CANDIDATES);
  return [...pick(semantic), ...pick(lexical)].slice(0, SUPERSESSION_CANDIDATES);
}

/** With `memory_scope: "end_user"`, the thread ids of each person (the writer looks only at the same person's memories). */
async function personThreads(context: ServiceContext, agent: AgentRecord): Promise<((person: string) => string[]) | undefined> {
  if (memoryScopeOf(agent) !== 'end_user') return undefined;
  const byPerson = new Map<string, string[]>();
  for (const thread of await context.store.threads.list({ agentId: agent.id })) {
    const person = thread.endUserId ?? '';
    byPerson.set(person, [...(byPerson.get(person) ?? []), thread.id]);
  }
  return (person) => byPerson.get(person) ?? [];
}
