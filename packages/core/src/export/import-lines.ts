import { ServiceError } from '../errors/index.js';
import { resolveLimits } from '../limits/index.js';
import type { MemoryHitRecord, MemoryRecord } from '../ports/memory-index.js';
import type { AgentRecord, JobRecord, MemoryMarkRecord, MessageRecord, NotLearnedRecord, OrganizationRecord, ThreadRecord, TurnRecord, UploadRecord } from '../ports/store/index.js';
import { sourceBlobKey } from '../sources/read-document.js';
import { decodeVector, type ExportRecordType, type JobLearningLine } from './format.js';
import type { ImportContext, ImportProgress } from './agent-import.js';
import type { Rekey } from './import-rekey.js';

/** One line of an export file after its header, as parsed (the file was checked whole before). */
export type ImportLine = Record<string, unknown> & { type: ExportRecordType };

/** A memory's mark as an export line carries it (issue 42): without the ids the import gives it. */
type ExportedMark = Pick<MemoryMarkRecord, 'pinned' | 'forgotten' | 'edited' | 'citedAt' | 'citedCount' | 'category' | 'policyVersion' | 'review'>;

type LinesOptions = {
  organization: OrganizationRecord;
  agentId: string;
  rekey: Rekey;
  /** Embed memories again (the file's vectors are absent or another embedder's). */
  reembed: boolean;
  embedder: { id: string; dimensions: number };
  totalMemories: number;
  onProgress?: (progress: ImportProgress) => void;
};

/** Where an import's writing stands: what `importAgent` undoes on failure and settles at the end. */
export type ImportLines = {
  /** Writes one line (after its header), in file order. */
  write(line: ImportLine): Promise<void>;
  /** Writes what the last lines left buffered. */
  finish(): Promise<void>;
  agentInserted(): boolean;
  /** The status the agent takes once every line is written. */
  finalStatus(): AgentRecord['status'];
  /** Blob keys this import stored (absent before it). */
  addedBlobs(): readonly string[];
};

/**
 * The writer of an import's lines: one function per line kind (`LINE_KINDS`), each re-keying its
 * record into the new agent. Jobs are buffered until their last turn (a job and its turns are one
 * insert), memories and messages in batches; a line of another kind writes what is buffered first,
 * so the store sees the file's order.
 */
export function importLines(context: ImportContext, options: LinesOptions): ImportLines {
  const { organization, agentId, rekey, reembed, embedder } = options;
  const organizationId = organization.id;
  const { thread, job, memory, source, ref } = rekey;
  const added: string[] = [];
  let inserted = false;
  let finalStatus: AgentRecord['status'] = 'ready';
  let memoriesWritten = 0;
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
    options.onProgress?.({ agentId, memories: memoriesWritten, totalMemories: options.totalMemories });
  };
  const putSource = async () => {
    const s = pendingSource!;
    pendingSource = null;
    const key = sourceBlobKey(organizationId, source(s.id));
    if ((await context.blobs.get({ key })) === null) {
      await context.blobs.put({ key, data: new Uint8Array(Buffer.concat(s.parts)), mediaType: s.mediaType });
      added.push(key);
    }
  };

  const LINE_KINDS: Record<ExportRecordType, (line: ImportLine) => Promise<void>> = {
    async agent(line) {
      const agent = line.agent as AgentRecord;
      finalStatus = agent.status === 'initializing' || agent.status === 'failed' ? agent.status : 'ready';
      // Hidden until the last line is written (`importAgent`).
      const stored = await context.store.agents.insert({
        agent: { ...agent, id: agentId, organizationId, status: 'importing', restoreFrom: null, updatedAt: context.nowIso() },
        maxLive: resolveLimits(organization.limits, context.defaultLimits).maxAgents,
      });
      if (!stored) throw new ServiceError('agent_quota_exceeded', `The organization already owns its maximum of agents; delete one before importing.`);
      inserted = true;
    },
    async thread(line) {
      const t = line.thread as ThreadRecord;
      await context.store.threads.insert({ thread: { ...t, id: thread(t.id), agentId, organizationId } });
    },
    async message(line) {
      const m = line.message as MessageRecord;
      messages.push({ ...m, threadId: thread(m.threadId), agentId, sourceIds: m.sourceIds.map(source) });
      if (messages.length >= 500) await flushMessages();
    },
    async source(line) {
      pendingSource = { id: String(line.sourceId), mediaType: String(line.mediaType), chunks: Number(line.chunks), parts: [] };
      if (line.chunks === 0) await putSource();
    },
    async source_chunk(line) {
      pendingSource!.parts.push(Buffer.from(String(line.data), 'base64'));
      if (pendingSource!.parts.length === pendingSource!.chunks) await putSource();
    },
    async job(line) {
      const j = line.job as JobRecord;
      const details = j.kind === 'document' ? { ...j.details, sourceId: source(j.details.sourceId) } : j.details;
      pendingJob = { job: { ...j, details, id: job(j.id), organizationId, agentId, threadId: thread(j.threadId) } as JobRecord, turns: [] };
    },
    async turn(line) {
      const t = line.turn as TurnRecord;
      const details = t.details.sourceId === undefined ? t.details : { ...t.details, sourceId: source(t.details.sourceId) };
      pendingJob!.turns.push({ ...t, jobId: job(t.jobId), details });
    },
    async job_learning(line) {
      const { jobId, merges, supersessions, modelUsage } = line as unknown as JobLearningLine;
      const id = job(jobId);
      await context.store.receipts.recordMerges({ jobId: id, merges: merges.map((merge) => ({ turnIndex: merge.turnIndex, memoryId: memory(merge.memoryId) })) });
      await context.store.receipts.recordSupersessions({ jobId: id, supersessions: supersessions.map((entry) => ({ turnIndex: entry.turnIndex, memoryIds: entry.memoryIds.map(memory) })) });
      for (const batch of modelUsage) await context.store.receipts.recordModelUsage({ jobId: id, batch });
    },
    async not_learned(line) {
      const { id: _id, reported: _reported, ...r } = line.record as NotLearnedRecord;
      await context.store.notLearned.insert({ record: { ...r, organizationId, agentId, threadId: thread(r.threadId), jobId: job(r.jobId) } });
    },
    async upload(line) {
      const u = line.upload as UploadRecord;
      await context.store.uploads.insert({
        record: { ...u, jobId: job(u.jobId), organizationId, agentId, threadId: thread(u.threadId), sourceId: source(u.sourceId), resumes: u.resumes === null ? null : job(u.resumes) },
      });
    },
    async memory(line) {
      const { vector, mark, ...m } = line.memory as MemoryHitRecord & { vector?: string; mark?: ExportedMark };
      if (mark) {
        const from = ref(m.source);
        marks.push({
          ...mark,
          organizationId,
          agentId,
          memoryId: memory(m.id),
          threadId: from.threadId,
          observationId: from.observationId,
          sourceId: from.kind === 'document' ? from.sourceId : null,
          edited: mark.edited === null ? null : { ...mark.edited, fromMemoryId: memory(mark.edited.fromMemoryId) },
          review: mark.review ? { ...mark.review, supersedes: mark.review.supersedes.map(memory), superseded: mark.review.superseded.map(memory) } : null,
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
        provenance: { ...m.provenance, jobId: m.provenance?.jobId && rekey.knownJob(m.provenance.jobId) ? job(m.provenance.jobId) : (m.provenance?.jobId ?? null) },
        supersededBy: m.supersededBy ? memory(m.supersededBy) : null,
        // Files written before expiry (issue 42) have none: never expires.
        expiresAt: typeof m.expiresAt === 'string' ? new Date(m.expiresAt).toISOString() : null,
        vector: !reembed && typeof vector === 'string' ? decodeVector(vector) : new Float32Array(0),
      } as MemoryRecord);
      if (memories.length >= 200) await flushMemories();
    },
    // Billing belongs to the target organization: ledger lines are counted, not applied.
    async ledger() {},
  };

  return {
    async write(line) {
      if (line.type !== 'turn') await flushJob();
      if (line.type !== 'memory') await flushMemories();
      if (line.type !== 'message') await flushMessages();
      await LINE_KINDS[line.type]?.(line);
    },
    async finish() {
      await flushJob();
      await flushMemories();
      await flushMessages();
    },
    agentInserted: () => inserted,
    finalStatus: () => finalStatus,
    addedBlobs: () => added,
  };
}
