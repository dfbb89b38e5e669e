import { createHash } from 'node:crypto';
import { z } from 'zod';
import { EXPORT_FORMAT, EXPORT_RECORD_TYPES, EXPORT_VERSION, ExportFormatError, LATER_RECORD_TYPES, decodeVector, emptyCounts, type ExportHeader, type ExportRecordType } from './format.js';

/** What the check found: the header, the counts, the target organization's source ids, the job and memory ids. */
export type Checked = { header: ExportHeader; counts: Record<ExportRecordType, number>; sourceIds: Map<string, string>; jobIds: string[]; memoryIds: string[] };

const count = z.number().int().min(0);
/** What a `job_learning` line must hold to be written (its job is checked apart). */
const jobLearningShape = z.object({
  merges: z.array(z.object({ turnIndex: count, memoryId: z.string() })),
  supersessions: z.array(z.object({ turnIndex: count.nullable(), memoryIds: z.array(z.string()) })),
  modelUsage: z.array(z.object({ turnIndexes: z.array(count), usage: z.array(z.object({ model: z.string(), inputTokens: count, outputTokens: count })) })),
});

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const SHA256_HEX = /^[0-9a-f]{64}$/;

/** Why a memory's `vector` cannot be stored as the header's embedder's vector, or null when it can. */
function vectorProblem(vector: string, embedder: ExportHeader['embedder']): string | null {
  if (!BASE64.test(vector)) return 'its vector is not base64 text.';
  const bytes = (vector.length / 4) * 3 - (vector.endsWith('==') ? 2 : vector.endsWith('=') ? 1 : 0);
  if (bytes % 4 !== 0) return `its vector is ${bytes} bytes, not a whole number of 4-byte floats.`;
  if (embedder === null) return 'it has a vector but the header names no embedder (embedder: null).';
  if (bytes / 4 !== embedder.dimensions) return `its vector has ${bytes / 4} dimensions, but the header's embedder ${embedder.id} makes ${embedder.dimensions}.`;
  const floats = decodeVector(vector);
  for (let i = 0; i < floats.length; i++) {
    if (!Number.isFinite(floats[i]!)) return `its vector holds a value that is not a finite number (at dimension ${i}).`;
  }
  return null;
}

/**
 * Reads the whole file once and refuses it (`ExportFormatError`, with the line) when it is not a
 * complete export of one agent of this version: malformed JSON, no header, another version, a
 * record of another organization or agent than the header's or naming a thread or job the file did
 * not declare, a source whose chunks are missing, no `end` line (truncated) or counts that differ.
 */
export async function checkFile(lines: AsyncIterable<string>, organizationId: string): Promise<Checked> {
  let header: ExportHeader | null = null;
  let ended = false;
  let number = 0;
  const counts = emptyCounts();
  const threads = new Set<string>();
  const jobs = new Set<string>();
  // `hash` makes the content id in the target organization; `sha256` and `plain` check the bytes (files
  // written before the checksum existed have no `sha256`: their bytes are taken as they are).
  const sources = new Map<string, { line: number; chunks: number; next: number; bytes: number; size: number; hash: ReturnType<typeof createHash>; sha256: string | null; plain: ReturnType<typeof createHash> }>();
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
          const said = record.counts[name] ?? (LATER_RECORD_TYPES.includes(name) ? 0 : undefined);
          if (said !== counts[name]) throw new ExportFormatError(number, `the end line counts ${String(said)} ${name} records but the file holds ${counts[name]}; lines are missing or were added.`);
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
        if (record.sha256 !== undefined && (typeof record.sha256 !== 'string' || !SHA256_HEX.test(record.sha256))) {
          throw new ExportFormatError(number, `the sha256 of source ${record.sourceId} is not 64 lower-case hex digits.`);
        }
        const hash = createHash('sha256').update(organizationId).update('\0');
        const source = { line: number, chunks: record.chunks, next: 0, bytes: record.bytes, size: 0, hash, sha256: record.sha256 ?? null, plain: createHash('sha256') };
        sources.set(record.sourceId, source);
        if (record.chunks === 0) {
          checkSum(record.sourceId, source);
          sourceIds.set(record.sourceId, `src_${hash.digest('hex').slice(0, 32)}`);
        }
        break;
      }
      case 'source_chunk': {
        const source = typeof record.sourceId === 'string' ? sources.get(record.sourceId) : undefined;
        if (!source) throw new ExportFormatError(number, `a chunk of source ${JSON.stringify(record.sourceId)}, which the file did not declare before.`);
        if (record.index !== source.next || typeof record.data !== 'string') throw new ExportFormatError(number, `chunk ${String(record.index)} of ${String(record.sourceId)} is out of order (expected ${source.next}).`);
        if (!BASE64.test(record.data)) throw new ExportFormatError(number, `chunk ${record.index} of source ${String(record.sourceId)} is not base64 text.`);
        const data = Buffer.from(record.data, 'base64');
        source.hash.update(data);
        source.plain.update(data);
        source.size += data.length;
        source.next++;
        if (source.next === source.chunks) {
          checkSum(String(record.sourceId), source);
          sourceIds.set(String(record.sourceId), `src_${source.hash.digest('hex').slice(0, 32)}`);
        }
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
      case 'job_learning': {
        known(jobs, record.jobId, 'job');
        if (!jobLearningShape.safeParse(record).success) {
          throw new ExportFormatError(number, 'a job_learning line needs merges [{turnIndex, memoryId}], supersessions [{turnIndex, memoryIds}] and modelUsage [{turnIndexes, usage: [{model, inputTokens, outputTokens}]}].');
        }
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
        if (h.vectors && memory.vector !== undefined) {
          if (typeof memory.vector !== 'string') throw new ExportFormatError(number, 'a memory vector is base64 text.');
          const problem = vectorProblem(memory.vector, h.embedder);
          if (problem !== null) throw new ExportFormatError(number, `memory ${memory.id}: ${problem}`);
        }
        // Added within version 1 (issue 42): absent or null never expires.
        if (memory.expiresAt !== undefined && memory.expiresAt !== null && (typeof memory.expiresAt !== 'string' || Number.isNaN(Date.parse(memory.expiresAt)))) {
          throw new ExportFormatError(number, 'a memory expiresAt is an ISO date-time or null.');
        }
        // Added within version 1 (issue 42): absent means no mark.
        if (memory.mark !== undefined) {
          const problem = markProblem(memory.mark);
          if (problem !== null) throw new ExportFormatError(number, `memory ${memory.id}: its mark ${problem}`);
        }
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

  /** At a source's last chunk: its bytes against the `sha256` of its source line, when it has one. */
  function checkSum(id: string, source: { line: number; chunks: number; sha256: string | null; plain: ReturnType<typeof createHash> }) {
    if (source.sha256 === null) return;
    const actual = source.plain.digest('hex');
    if (actual !== source.sha256) {
      const where = source.chunks === 0 ? 'it has no chunks' : `its chunks on lines ${source.line + 1}-${number} give ${actual}`;
      throw new ExportFormatError(number, `the stored original ${id} does not match its checksum: its source line (line ${source.line}) says sha256 ${source.sha256}, but ${where}; the file was changed or damaged, and nothing was imported.`);
    }
  }
  if (header === null) throw new ExportFormatError(1, 'the file is empty; an export starts with its header line.');
  if (!ended) throw new ExportFormatError(number + 1, `the file ends after line ${number} without its end line; it was cut short (truncated), and nothing was imported.`);
  return { header, counts, sourceIds, jobIds: [...jobs], memoryIds };
}


const isIso = (value: unknown): boolean => typeof value === 'string' && !Number.isNaN(Date.parse(value));

/** What is wrong with a memory line's `mark` (issue 42), or null. */
function markProblem(mark: unknown): string | null {
  if (!isObject(mark)) return 'is not an object';
  if (typeof mark.pinned !== 'boolean') return 'needs pinned, true or false';
  if (!(mark.citedAt === null || isIso(mark.citedAt))) return 'has a citedAt that is no ISO date-time or null';
  if (!(Number.isInteger(mark.citedCount) && (mark.citedCount as number) >= 0)) return 'has a citedCount that is no whole number from 0';
  const forgotten = mark.forgotten;
  if (forgotten !== null) {
    if (!isObject(forgotten) || !isIso(forgotten.at) || !isIso(forgotten.restoreUntil) || typeof forgotten.reason !== 'string' || typeof forgotten.by !== 'string' || !(forgotten.expiresAtBefore === null || isIso(forgotten.expiresAtBefore))) {
      return 'has a forgotten that is not null or { at, reason, by, restoreUntil, expiresAtBefore }';
    }
  }
  const edited = mark.edited;
  if (edited !== null && (!isObject(edited) || !isIso(edited.at) || typeof edited.by !== 'string' || typeof edited.fromMemoryId !== 'string')) {
    return 'has an edited that is not null or { at, by, fromMemoryId }';
  }
  const review = mark.review;
  if (review !== undefined && review !== null) {
    const ids = (value: unknown) => Array.isArray(value) && value.every((id) => typeof id === 'string');
    if (
      !isObject(review) || !['pending', 'approved', 'declined'].includes(review.state as string) || !['inferred', 'all', 'relearn'].includes(review.heldAs as string) ||
      !isIso(review.proposedAt) || typeof review.fingerprint !== 'string' || !(review.expiresAtBefore === null || isIso(review.expiresAtBefore)) ||
      !ids(review.supersedes) || !ids(review.superseded) || !Array.isArray(review.decisions)
    ) {
      return 'has a review that is not null or { state, heldAs, proposedAt, fingerprint, expiresAtBefore, supersedes, superseded, decisions }';
    }
  }
  return null;
}
