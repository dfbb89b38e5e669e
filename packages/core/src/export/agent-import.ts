import { randomUUID } from 'node:crypto';
import { ServiceError } from '../errors/index.js';
import { resolveLimits } from '../limits/index.js';
import type { MemoryHitRecord, MemoryRecord, MemorySourceRef } from '../ports/memory-index.js';
import type {
  AgentRecord,
  JobRecord,
  MessageRecord,
  NotLearnedRecord,
  ThreadRecord,
  MemoryMarkRecord,
  TurnRecord,
  UploadRecord,
} from '../ports/store/index.js';

/** A memory's mark as an export line carries it (issue 42): without the ids the import gives it. */
type ExportedMark = Pick<MemoryMarkRecord, 'pinned' | 'forgotten' | 'edited' | 'citedAt' | 'citedCount' | 'category' | 'policyVersion'>;
import { sourceBlobKey } from '../sources/read-document.js';
import { checkFile, type Checked } from './check-file.js';
import { ExportFormatError, decodeVector, type ExportRecordType, type JobLearningLine } from './format.js';
import type { ServiceContext } from '../service/context.js';

/** What `importAgent` writes through. */
export type ImportContext = Pick<ServiceContext, 'store' | 'index' | 'blobs' | 'embedder' | 'ids' | 'defaultLimits' | 'logger' | 'nowIso' | 'instanceId' | 'clock'>;

/**
 * The lease an import holds while it writes agent `agentId` (status `importing`): an `importing`
 * agent whose lease nobody holds any more is left from a killed import (`abandonedImports`).
 */
export const importLeaseName = (agentId: string) => `agent-import:${agentId}`;
/** How long an import's lease lasts without renewal; it is renewed every third of that. */
export const IMPORT_LEASE_MS = 60_000;
/**
 * The holder of an import that keeps ids (`memory-agents migrate`): the same in every run, so a run
 * after an interrupted one (the same agent id again) takes the lease over at once.
 */
const KEEPING_IDS_HOLDER = 'import:keeping-ids';

/**
 * Agents left `importing` by an import that no longer runs: its lease is gone or lapsed, or (on a
 * store only one process opens) it was held by an earlier process. Removed by a start
 * (`agents.resume`) and by the next import into the same organization.
 */
export async function abandonedImports(context: Pick<ServiceContext, 'store' | 'clock' | 'instanceId'>, organizationId?: string): Promise<AgentRecord[]> {
  const abandoned: AgentRecord[] = [];
  for (const agent of await context.store.agents.listByStatus({ statuses: ['importing'] })) {
    if (organizationId !== undefined && agent.organizationId !== organizationId) continue;
    const lease = await context.store.leases.get({ name: importLeaseName(agent.id) });
    const running =
      lease !== null &&
      lease.expiresAt > context.clock.now() &&
      (context.store.capabilities.shared || lease.holder.startsWith(`${context.instanceId}:`) || lease.holder === KEEPING_IDS_HOLDER);
    if (!running) abandoned.push(agent);
  }
  return abandoned;
}

/** How far an import has come: the agent it writes (hidden until done), memories written of the file's. */
export type ImportProgress = { agentId: string; memories: number; totalMemories: number };

export type ImportAgentOptions = {
  /** The organization the agent is imported into (any: ids are re-keyed). */
  organizationId: string;
  /**
   * Opens the file's lines (without line ends). Called twice: once to check the whole file, once
   * to write it, so nothing is written from a file that turns out bad.
   */
  open: () => AsyncIterable<string>;
  /**
   * Keep the file's ids (agent, threads, jobs, memories) instead of re-keying: only into the
   * organization the file came from, and only where they do not exist yet (moving a whole store,
   * `memory-agents migrate`). @default false
   */
  keepIds?: boolean;
  /** Store the file's vectors with the file's embedder fingerprint, never re-embedding. @default false */
  keepVectors?: boolean;
  /** Called after each batch of memories is written (the CLI prints it for a long import). */
  onProgress?: (progress: ImportProgress) => void;
};

export type ImportAgentResult = {
  agentId: string;
  organizationId: string;
  /** The exported agent's id. */
  fromAgentId: string;
  counts: Record<ExportRecordType, number>;
  /** True when memories were embedded again (no vectors in the file, or another embedder). */
  reembedded: boolean;
  /** Ledger entries in the file, not applied: billing belongs to the target organization. */
  ledgerEntriesSkipped: number;
  /** Old id -> new id of the threads, observation jobs and stored sources (memories are left out). */
  ids: { threads: Record<string, string>; observations: Record<string, string>; sources: Record<string, string> };
};

/**
 * Imports an export file into `organizationId` as a NEW agent: every agent, thread, job and memory
 * id is re-keyed (always, so an import never collides, also into the organization it came from);
 * `src_` ids are content ids of the organization, so they are computed again for the target
 * organization. Memories are embedded again when the file has no vectors or they were made by
 * another embedder than this service's. Each job's learning records (`job_learning`: merges,
 * supersessions, model tokens) are recorded again with re-keyed ids, so its receipt says what the
 * original's did. Ledger entries are not applied (the target organization's billing is its own);
 * they are counted in the result.
 *
 * Nothing is half-imported: the whole file is checked first (`invalid_request` 422 naming the
 * line, nothing written); the agent is written `importing` (hidden: not listed, 404, not exported)
 * and takes its status only after its last line, so a process killed part-way leaves no agent
 * anyone sees, and the next start removes it (on a shared store, once the import's lease
 * `importLeaseName` has lapsed). When writing fails part-way, everything written (the new agent with
 * its threads, jobs and uploads, its memories, blobs this import added) is deleted before the error
 * is rethrown.
 */
export async function importAgent(context: ImportContext, { organizationId, open, keepIds = false, keepVectors = false, onProgress }: ImportAgentOptions): Promise<ImportAgentResult> {
  const organization = await context.store.organizations.get({ id: organizationId });
  if (!organization) throw new ServiceError('not_found', `No organization ${organizationId}.`);
  let checked: Checked;
  try {
    checked = await checkFile(open(), organizationId);
  } catch (error) {
    if (error instanceof ExportFormatError) throw new ServiceError('invalid_request', `The export file was refused at ${error.message}`, { status: 422, cause: error });
    throw error;
  }
  const { header } = checked;
  if (keepIds && header.organizationId !== organizationId) {
    throw new ServiceError('invalid_request', `Keeping ids needs the organization the file came from (${header.organizationId}), not ${organizationId}.`, { status: 422 });
  }
  const keep = keepVectors && header.vectors && header.embedder !== null;
  const embedder = keep ? header.embedder! : { id: context.embedder.id, dimensions: context.embedder.dimensions };
  const reembed = !keep && (!header.vectors || header.embedder === null || header.embedder.id !== embedder.id || header.embedder.dimensions !== embedder.dimensions);
  const agentId = keepIds ? header.agentId : context.ids('agent_');
  const maps = { thread_: new Map<string, string>(), obs_: new Map<string, string>(), mem_: new Map<string, string>() };
  const remap = (prefix: 'thread_' | 'obs_' | 'mem_') => {
    const map = maps[prefix];
    return (id: string) => {
      let next = map.get(id);
      if (next === undefined) map.set(id, (next = keepIds ? id : context.ids(prefix)));
      return next;
    };
  };
  const thread = remap('thread_');
  const job = remap('obs_');
  const fresh = remap('mem_');
  // A memory id learning made, `mem_<job>_<turn>_<piece>`, follows its job's new id: a receipt lists
  // the turn's memories in the same (piece) order and learning resumed on the copy writes the ids
  // it would have. Other memory ids are made anew.
  const memory = (id: string) => {
    const learned = keepIds || maps.mem_.has(id) ? null : /^mem_(.+)_(\d+)_(\d+)$/.exec(id);
    const newJob = learned ? maps.obs_.get(`obs_${learned[1]}`) : undefined;
    if (learned && newJob !== undefined) maps.mem_.set(id, `mem_${newJob.slice(4)}_${learned[2]}_${learned[3]}`);
    return fresh(id);
  };
  // New job and memory ids are made in the order of the old ones, so ties that retrieval breaks by
  // id fall the same way in the copy (the file lists memories newest first).
  for (const id of checked.jobIds.sort()) job(id);
  for (const id of checked.memoryIds.sort()) memory(id);
  const knownJobs = new Set<string>();
  // A source whose bytes are in the file gets its content id in the target organization; one
  // exported without bytes (never stored) keeps its id.
  const source = (id: string) => checked.sourceIds.get(id) ?? id;
  const ref = (r: MemorySourceRef): MemorySourceRef => (r.kind === 'document' ? { ...r, threadId: thread(r.threadId), observationId: job(r.observationId), sourceId: source(r.sourceId) } : { ...r, threadId: thread(r.threadId), observationId: job(r.observationId) });
  // What a killed import left in this organization goes first (it holds a place in the quota).
  for (const left of await abandonedImports(context, organizationId)) {
    context.logger.warn('import: removing an agent a stopped import left half-written', { agentId: left.id });
    await context.index.deleteBy({ agentId: left.id });
    await context.store.agents.delete({ organizationId, agentId: left.id });
  }
  const addedBlobs: string[] = [];
  let agentInserted = false;
  let finalStatus: AgentRecord['status'] = 'ready';
  let memoriesWritten = 0;
  // A lease says the import is alive (renewed while it writes): see `abandonedImports`.
  const holder = keepIds ? KEEPING_IDS_HOLDER : `${context.instanceId}:import:${randomUUID()}`;
  const lease = { name: importLeaseName(agentId), holder, ttlMs: IMPORT_LEASE_MS };
  if (!(await context.store.leases.acquire({ ...lease, now: context.clock.now() }))) {
    throw new ServiceError(
      'conflict',
      `Agent ${agentId} is being imported by another process (or was, by one stopped less than ${IMPORT_LEASE_MS / 1000} s ago); run the import again once that one has ended.`,
    );
  }
  let leaseLost = false;
  const leaseLostError = () =>
    new ServiceError('service_unavailable', `The import of agent ${agentId} lost its lease (not renewed within ${IMPORT_LEASE_MS / 1000} s, as when the database does not answer), so another process may have removed it as abandoned; what it wrote was removed. Run the import again.`);
  const renewal = setInterval(() => {
    context.store.leases.renew({ ...lease, now: context.clock.now() }).then(
      (held) => void (leaseLost ||= !held),
      () => undefined,
    );
  }, IMPORT_LEASE_MS / 3);
  renewal.unref?.();
  let pendingJob: { job: JobRecord; turns: TurnRecord[] } | null = null;
  let memories: MemoryRecord[] = [];
  let marks: MemoryMarkRecord[] = [];
  let messages: MessageRecord[] = [];
  let pendingSource: { id: string; mediaType: string; chunks: number; parts: Buffer[] } | null = null;

  const flushJob = async () => {
    if (!pendingJob) return;
    const { job: record, turns } = pendingJob;
    pendingJob = null;
    const { seq: _seq, ...rest } = record;
    await context.store.jobs.insert({ job: rest, turns, onlyIfIdle: false });
  };
  // Messages of a thread are appended in batches, in file order (oldest first).
  const flushMessages = async () => {
    if (messages.length === 0) return;
    const batch = messages;
    messages = [];
    await context.store.messages.append({ messages: batch });
  };
  const flushMemories = async () => {
    if (memories.length === 0) return;
    const batch = memories;
    memories = [];
    const batchMarks = marks;
    marks = [];
    if (reembed) {
      const { vectors } = await context.embedder.embed({ texts: batch.map((r) => r.text) });
      batch.forEach((r, i) => (r.vector = vectors[i]!));
    }
    await context.index.upsert({ records: batch, embedder, newIds: true });
    for (const record of batchMarks) await context.store.memoryMarks.put({ record });
    memoriesWritten += batch.length;
    onProgress?.({ agentId, memories: memoriesWritten, totalMemories: checked.counts.memory });
  };

  try {
    let number = 0;
    for await (const text of open()) {
      number++;
      if (number === 1) continue;
      if (leaseLost) throw leaseLostError();
      const record = JSON.parse(text) as Record<string, unknown> & { type: string };
      if (record.type !== 'turn') await flushJob();
      if (record.type !== 'memory') await flushMemories();
      if (record.type !== 'message') await flushMessages();
      switch (record.type) {
        case 'agent': {
          const agent = record.agent as AgentRecord;
          const now = context.nowIso();
          finalStatus = agent.status === 'initializing' || agent.status === 'failed' ? agent.status : 'ready';
          // Hidden until the last line is written (see above).
          const inserted = await context.store.agents.insert({
            agent: { ...agent, id: agentId, organizationId, status: 'importing', restoreFrom: null, updatedAt: now },
            maxLive: resolveLimits(organization.limits, context.defaultLimits).maxAgents,
          });
          if (!inserted) throw new ServiceError('agent_quota_exceeded', `The organization already owns its maximum of agents; delete one before importing.`);
          agentInserted = true;
          break;
        }
        case 'thread': {
          const t = record.thread as ThreadRecord;
          await context.store.threads.insert({ thread: { ...t, id: thread(t.id), agentId, organizationId } });
          break;
        }
        case 'message': {
          const m = record.message as MessageRecord;
          messages.push({ ...m, threadId: thread(m.threadId), agentId, sourceIds: m.sourceIds.map(source) });
          if (messages.length >= 500) await flushMessages();
          break;
        }
        case 'source': {
          pendingSource = { id: String(record.sourceId), mediaType: String(record.mediaType), chunks: Number(record.chunks), parts: [] };
          if (record.chunks === 0) await putSource();
          break;
        }
        case 'source_chunk': {
          pendingSource!.parts.push(Buffer.from(String(record.data), 'base64'));
          if (pendingSource!.parts.length === pendingSource!.chunks) await putSource();
          break;
        }
        case 'job': {
          const j = record.job as JobRecord;
          knownJobs.add(j.id);
          const details = j.kind === 'document' ? { ...j.details, sourceId: source(j.details.sourceId) } : j.details;
          pendingJob = { job: { ...j, details, id: job(j.id), organizationId, agentId, threadId: thread(j.threadId) } as JobRecord, turns: [] };
          break;
        }
        case 'turn': {
          const t = record.turn as TurnRecord;
          const details = t.details.sourceId === undefined ? t.details : { ...t.details, sourceId: source(t.details.sourceId) };
          pendingJob!.turns.push({ ...t, jobId: job(t.jobId), details });
          break;
        }
        case 'job_learning': {
          const { jobId, merges, supersessions, modelUsage } = record as unknown as JobLearningLine;
          const id = job(jobId);
          await context.store.receipts.recordMerges({ jobId: id, merges: merges.map((merge) => ({ turnIndex: merge.turnIndex, memoryId: memory(merge.memoryId) })) });
          await context.store.receipts.recordSupersessions({ jobId: id, supersessions: supersessions.map((entry) => ({ turnIndex: entry.turnIndex, memoryIds: entry.memoryIds.map(memory) })) });
          for (const batch of modelUsage) await context.store.receipts.recordModelUsage({ jobId: id, batch });
          break;
        }
        case 'not_learned': {
          const { id: _id, reported: _reported, ...r } = record.record as NotLearnedRecord;
          await context.store.notLearned.insert({ record: { ...r, organizationId, agentId, threadId: thread(r.threadId), jobId: job(r.jobId) } });
          break;
        }
        case 'upload': {
          const u = record.upload as UploadRecord;
          await context.store.uploads.insert({
            record: { ...u, jobId: job(u.jobId), organizationId, agentId, threadId: thread(u.threadId), sourceId: source(u.sourceId), resumes: u.resumes === null ? null : job(u.resumes) },
          });
          break;
        }
        case 'memory': {
          const { vector, mark, ...m } = record.memory as MemoryHitRecord & { vector?: string; mark?: ExportedMark };
          if (mark) {
            const source = ref(m.source);
            marks.push({
              ...mark,
              organizationId,
              agentId,
              memoryId: memory(m.id),
              threadId: source.threadId,
              observationId: source.observationId,
              sourceId: source.kind === 'document' ? source.sourceId : null,
              edited: mark.edited === null ? null : { ...mark.edited, fromMemoryId: memory(mark.edited.fromMemoryId) },
              updatedAt: context.nowIso(),
            });
          }
          memories.push({
            ...m,
            id: memory(m.id),
            organizationId,
            agentId,
            source: ref(m.source),
            alsoFrom: (m.alsoFrom ?? []).map(ref),
            provenance: { ...m.provenance, jobId: m.provenance?.jobId && knownJobs.has(m.provenance.jobId) ? job(m.provenance.jobId) : (m.provenance?.jobId ?? null) },
            supersededBy: m.supersededBy ? memory(m.supersededBy) : null,
            // Files written before expiry (issue 42) have none: never expires.
            expiresAt: typeof m.expiresAt === 'string' ? new Date(m.expiresAt).toISOString() : null,
            vector: !reembed && typeof vector === 'string' ? decodeVector(vector) : new Float32Array(0),
          } as MemoryRecord);
          if (memories.length >= 200) await flushMemories();
          break;
        }
        default:
          break;
      }
    }
    await flushJob();
    await flushMemories();
    await flushMessages();
    if (leaseLost) throw leaseLostError();
    // Every line is written: the agent appears (unless another process removed it as abandoned).
    if (agentInserted && !(await context.store.agents.update({ organizationId, agentId, patch: { status: finalStatus }, updatedAt: context.nowIso() }))) throw leaseLostError();
  } catch (error) {
    // Undo: the new agent (its threads, messages, jobs, turns, reports and uploads go with it), its
    // memories and the blobs this import added.
    const undo = async (what: string, fn: () => Promise<unknown>) =>
      fn().catch((cause: unknown) => context.logger.error(`import: undoing ${what} failed: ${String(cause)}`));
    await undo('the memories', () => context.index.deleteBy({ agentId }));
    if (agentInserted) await undo('the agent', () => context.store.agents.delete({ organizationId, agentId }));
    for (const key of addedBlobs) await undo(`blob ${key}`, () => context.blobs.delete({ key }));
    throw error;
  } finally {
    clearInterval(renewal);
    await context.store.leases.release(lease).catch(() => undefined);
  }
  return {
    agentId,
    organizationId,
    fromAgentId: header.agentId,
    counts: checked.counts,
    reembedded: reembed,
    ledgerEntriesSkipped: checked.counts.ledger,
    ids: { threads: Object.fromEntries(maps.thread_), observations: Object.fromEntries(maps.obs_), sources: Object.fromEntries(checked.sourceIds) },
  };

  async function putSource() {
    const s = pendingSource!;
    pendingSource = null;
    const key = sourceBlobKey(organizationId, source(s.id));
    if ((await context.blobs.get({ key })) === null) {
      await context.blobs.put({ key, data: new Uint8Array(Buffer.concat(s.parts)), mediaType: s.mediaType });
      addedBlobs.push(key);
    }
  }
}
