import { createHash } from 'node:crypto';
import { ServiceError } from '../errors/index.js';
import { resolveLimits } from '../limits/index.js';
import type { MemoryHitRecord, MemoryRecord, MemorySourceRef } from '../ports/memory-index.js';
import type {
  AgentRecord,
  JobRecord,
  MessageRecord,
  NotLearnedRecord,
  ThreadRecord,
  TurnRecord,
  UploadRecord,
} from '../ports/store/index.js';
import { sourceBlobKey } from '../sources/read-document.js';
import {
  EXPORT_FORMAT,
  EXPORT_RECORD_TYPES,
  EXPORT_VERSION,
  ExportFormatError,
  decodeVector,
  emptyCounts,
  type ExportHeader,
  type ExportRecordType,
} from './format.js';
import type { ServiceContext } from '../service/context.js';

/** What `importAgent` writes through. */
export type ImportContext = Pick<ServiceContext, 'store' | 'index' | 'blobs' | 'embedder' | 'ids' | 'defaultLimits' | 'logger' | 'nowIso'>;

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

type Checked = { header: ExportHeader; counts: Record<ExportRecordType, number>; sourceIds: Map<string, string>; memoryIds: string[] };

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Reads the whole file once and refuses it (`ExportFormatError`, with the line) when it is not a
 * complete export of one agent of this version: malformed JSON, no header, another version, a
 * record of another organization or agent than the header's or naming a thread or job the file did
 * not declare, a source whose chunks are missing, no `end` line (truncated) or counts that differ.
 */
async function checkFile(lines: AsyncIterable<string>, organizationId: string): Promise<Checked> {
  let header: ExportHeader | null = null;
  let ended = false;
  let number = 0;
  const counts = emptyCounts();
  const threads = new Set<string>();
  const jobs = new Set<string>();
  const sources = new Map<string, { chunks: number; next: number; bytes: number; size: number; hash: ReturnType<typeof createHash> }>();
  const sourceIds = new Map<string, string>();
  const memoryIds: string[] = [];
  for await (const text of lines) {
    number++;
    if (ended) throw new ExportFormatError(number, 'a line follows the end line; the file was damaged or joined to another.');
    if (text.trim() === '') throw new ExportFormatError(number, 'an empty line; every line of an export is one JSON record.');
    let record: unknown;
    try {
      record = JSON.parse(text);
    } catch {
      throw new ExportFormatError(number, 'not valid JSON; every line of an export is one JSON record.');
    }
    if (!isObject(record) || typeof record.type !== 'string') throw new ExportFormatError(number, 'a record without a "type".');
    if (header === null) {
      if (record.type !== EXPORT_FORMAT) throw new ExportFormatError(number, `the first line is not a ${EXPORT_FORMAT} header; this is not an agent export.`);
      if (record.version !== EXPORT_VERSION) {
        throw new ExportFormatError(number, `the file is export format version ${JSON.stringify(record.version)}; this build reads version ${EXPORT_VERSION} only (use a build that reads it, or export again with this one).`);
      }
      if (typeof record.organizationId !== 'string' || typeof record.agentId !== 'string') throw new ExportFormatError(number, 'the header names no organizationId and agentId.');
      header = record as unknown as ExportHeader;
      continue;
    }
    const h = header;
    const ownedBy = (value: Record<string, unknown> | undefined, what: string, fields: ('organizationId' | 'agentId')[]) => {
      if (!isObject(value)) throw new ExportFormatError(number, `a ${record.type} line without its "${what}" object.`);
      for (const field of fields) {
        if (value[field] !== h[field]) throw new ExportFormatError(number, `this ${what} names ${field} ${JSON.stringify(value[field])}, not the header's ${h[field]}; an export holds one agent of one organization.`);
      }
      return value;
    };
    const known = (set: Set<string>, id: unknown, what: string) => {
      if (typeof id !== 'string' || !set.has(id)) throw new ExportFormatError(number, `names ${what} ${JSON.stringify(id)}, which the file did not declare before.`);
    };
    const type = record.type;
    switch (type) {
      case 'end': {
        if (!isObject(record.counts)) throw new ExportFormatError(number, 'the end line has no counts.');
        for (const name of EXPORT_RECORD_TYPES) {
          if (record.counts[name] !== counts[name]) throw new ExportFormatError(number, `the end line counts ${String(record.counts[name])} ${name} records but the file holds ${counts[name]}; lines are missing or were added.`);
        }
        for (const [id, source] of sources) {
          if (source.next !== source.chunks || source.size !== source.bytes) throw new ExportFormatError(number, `source ${id} has ${source.next} of its ${source.chunks} chunks.`);
        }
        ended = true;
        continue;
      }
      case 'agent': {
        const agent = ownedBy(record.agent as Record<string, unknown>, 'agent', ['organizationId']);
        if (agent.id !== h.agentId) throw new ExportFormatError(number, `the agent record is ${JSON.stringify(agent.id)}, not the header's ${h.agentId}.`);
        if (counts.agent > 0) throw new ExportFormatError(number, 'a second agent record; an export holds one agent.');
        break;
      }
      case 'thread': {
        const thread = ownedBy(record.thread as Record<string, unknown>, 'thread', ['organizationId', 'agentId']);
        if (typeof thread.id !== 'string') throw new ExportFormatError(number, 'a thread without an id.');
        threads.add(thread.id);
        break;
      }
      case 'message': {
        const message = ownedBy(record.message as Record<string, unknown>, 'message', ['agentId']);
        known(threads, message.threadId, 'thread');
        break;
      }
      case 'source': {
        if (typeof record.sourceId !== 'string' || typeof record.chunks !== 'number' || typeof record.bytes !== 'number' || typeof record.mediaType !== 'string') {
          throw new ExportFormatError(number, 'a source line needs sourceId, mediaType, bytes and chunks.');
        }
        const hash = createHash('sha256').update(organizationId).update('\0');
        sources.set(record.sourceId, { chunks: record.chunks, next: 0, bytes: record.bytes, size: 0, hash });
        if (record.chunks === 0) sourceIds.set(record.sourceId, `src_${hash.digest('hex').slice(0, 32)}`);
        break;
      }
      case 'source_chunk': {
        const source = typeof record.sourceId === 'string' ? sources.get(record.sourceId) : undefined;
        if (!source) throw new ExportFormatError(number, `a chunk of source ${JSON.stringify(record.sourceId)}, which the file did not declare before.`);
        if (record.index !== source.next || typeof record.data !== 'string') throw new ExportFormatError(number, `chunk ${String(record.index)} of ${String(record.sourceId)} is out of order (expected ${source.next}).`);
        const data = Buffer.from(record.data, 'base64');
        source.hash.update(data);
        source.size += data.length;
        source.next++;
        if (source.next === source.chunks) sourceIds.set(String(record.sourceId), `src_${source.hash.digest('hex').slice(0, 32)}`);
        break;
      }
      case 'job': {
        const job = ownedBy(record.job as Record<string, unknown>, 'job', ['organizationId', 'agentId']);
        known(threads, job.threadId, 'thread');
        if (typeof job.id !== 'string') throw new ExportFormatError(number, 'a job without an id.');
        jobs.add(job.id);
        break;
      }
      case 'turn': {
        if (!isObject(record.turn)) throw new ExportFormatError(number, 'a turn line without its "turn" object.');
        known(jobs, record.turn.jobId, 'job');
        break;
      }
      case 'not_learned': {
        const report = ownedBy(record.record as Record<string, unknown>, 'record', ['organizationId', 'agentId']);
        known(jobs, report.jobId, 'job');
        known(threads, report.threadId, 'thread');
        break;
      }
      case 'upload': {
        const upload = ownedBy(record.upload as Record<string, unknown>, 'upload', ['organizationId', 'agentId']);
        known(jobs, upload.jobId, 'job');
        break;
      }
      case 'memory': {
        const memory = ownedBy(record.memory as Record<string, unknown>, 'memory', ['organizationId', 'agentId']);
        if (typeof memory.id !== 'string' || typeof memory.text !== 'string' || !isObject(memory.source)) throw new ExportFormatError(number, 'a memory needs id, text and source.');
        memoryIds.push(memory.id);
        if (h.vectors && memory.vector !== undefined && typeof memory.vector !== 'string') throw new ExportFormatError(number, 'a memory vector is base64 text.');
        break;
      }
      case 'ledger': {
        ownedBy(record.entry as Record<string, unknown>, 'entry', ['organizationId']);
        break;
      }
      default:
        // Version rule: record types added later within version 1 are skipped.
        continue;
    }
    counts[type]++;
  }
  if (header === null) throw new ExportFormatError(1, 'the file is empty; an export starts with its header line.');
  if (!ended) throw new ExportFormatError(number + 1, `the file ends after line ${number} without its end line; it was cut short (truncated), and nothing was imported.`);
  return { header, counts, sourceIds, memoryIds };
}

/**
 * Imports an export file into `organizationId` as a NEW agent: every agent, thread, job and memory
 * id is re-keyed (always, so an import never collides, also into the organization it came from);
 * `src_` ids are content ids of the organization, so they are computed again for the target
 * organization. Memories are embedded again when the file has no vectors or they were made by
 * another embedder than this service's. Ledger entries are not applied (the target organization's
 * billing is its own); they are counted in the result.
 *
 * Nothing is half-imported: the whole file is checked first (`invalid_request` 422 naming the
 * line, nothing written), and when writing fails part-way, everything written (the new agent with
 * its threads, jobs and uploads, its memories, blobs this import added) is deleted before the error
 * is rethrown.
 */
export async function importAgent(context: ImportContext, { organizationId, open, keepIds = false, keepVectors = false }: ImportAgentOptions): Promise<ImportAgentResult> {
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
  const memory = remap('mem_');
  // New memory ids are made in the order of the old ones, so ties that retrieval breaks by id fall
  // the same way in the copy (the file lists memories newest first).
  for (const id of checked.memoryIds.sort()) memory(id);
  const knownJobs = new Set<string>();
  // A source whose bytes are in the file gets its content id in the target organization; one
  // exported without bytes (never stored) keeps its id.
  const source = (id: string) => checked.sourceIds.get(id) ?? id;
  const ref = (r: MemorySourceRef): MemorySourceRef => (r.kind === 'document' ? { ...r, threadId: thread(r.threadId), observationId: job(r.observationId), sourceId: source(r.sourceId) } : { ...r, threadId: thread(r.threadId), observationId: job(r.observationId) });
  const addedBlobs: string[] = [];
  let agentInserted = false;
  let pendingJob: { job: JobRecord; turns: TurnRecord[] } | null = null;
  let memories: MemoryRecord[] = [];
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
    if (reembed) {
      const { vectors } = await context.embedder.embed({ texts: batch.map((r) => r.text) });
      batch.forEach((r, i) => (r.vector = vectors[i]!));
    }
    await context.index.upsert({ records: batch, embedder, newIds: true });
  };

  try {
    let number = 0;
    for await (const text of open()) {
      number++;
      if (number === 1) continue;
      const record = JSON.parse(text) as Record<string, unknown> & { type: string };
      if (record.type !== 'turn') await flushJob();
      if (record.type !== 'memory') await flushMemories();
      if (record.type !== 'message') await flushMessages();
      switch (record.type) {
        case 'agent': {
          const agent = record.agent as AgentRecord;
          const now = context.nowIso();
          const inserted = await context.store.agents.insert({
            agent: { ...agent, id: agentId, organizationId, status: agent.status === 'initializing' || agent.status === 'failed' ? agent.status : 'ready', restoreFrom: null, updatedAt: now },
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
          const { vector, ...m } = record.memory as MemoryHitRecord & { vector?: string };
          memories.push({
            ...m,
            id: memory(m.id),
            organizationId,
            agentId,
            source: ref(m.source),
            alsoFrom: (m.alsoFrom ?? []).map(ref),
            provenance: { ...m.provenance, jobId: m.provenance?.jobId && knownJobs.has(m.provenance.jobId) ? job(m.provenance.jobId) : (m.provenance?.jobId ?? null) },
            supersededBy: m.supersededBy ? memory(m.supersededBy) : null,
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
  } catch (error) {
    // Undo: the new agent (its threads, messages, jobs, turns, reports and uploads go with it), its
    // memories and the blobs this import added.
    const undo = async (what: string, fn: () => Promise<unknown>) =>
      fn().catch((cause: unknown) => context.logger.error(`import: undoing ${what} failed: ${String(cause)}`));
    await undo('the memories', () => context.index.deleteBy({ agentId }));
    if (agentInserted) await undo('the agent', () => context.store.agents.delete({ organizationId, agentId }));
    for (const key of addedBlobs) await undo(`blob ${key}`, () => context.blobs.delete({ key }));
    throw error;
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
