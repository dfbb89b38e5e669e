import { createHash } from 'node:crypto';
import { isHiddenAgent } from '../agents/lookup.js';
import { ServiceError } from '../errors/index.js';
import type { JobRecord } from '../ports/store/index.js';
import type { ServiceContext } from '../service/context.js';
import { sourceBlobKey } from '../sources/read-document.js';
import {
  EXPORT_FORMAT,
  EXPORT_VERSION,
  SOURCE_CHUNK_BYTES,
  emptyCounts,
  encodeVector,
  type ExportHeader,
  type ExportRecordType,
  type ExportTrailer,
} from './format.js';

/** What `exportAgent` reads: the ports of the service. */
export type ExportContext = Pick<ServiceContext, 'store' | 'index' | 'blobs' | 'nowIso'>;
export type ExportAgentOptions = {
  organizationId: string;
  agentId: string;
  /** @default true; false writes memories without their vectors (an import re-embeds them). */
  vectors?: boolean;
};

const MEMORY_PAGE = 500;
const line = (record: unknown) => `${JSON.stringify(record)}\n`;

/**
 * The agent as export lines (each ends with `\n`), read one area at a time so a large agent is
 * never held whole: header, agent, threads and their messages, stored originals (base64 chunks),
 * jobs with their turns and learning records (merges, supersessions, model tokens: what receipts
 * read), not-learned reports and uploads, memories (v2 records, with vectors unless
 * `vectors: false`), the ledger entries of its jobs, and an `end` line with the counts.
 * 404 `not_found` when the organization has no such agent.
 */
export async function* exportAgent(context: ExportContext, { organizationId, agentId, vectors = true }: ExportAgentOptions): AsyncIterable<string> {
  const agent = await context.store.agents.get({ organizationId, agentId });
  if (!agent || isHiddenAgent(agent)) throw new ServiceError('not_found', `No agent ${agentId} in organization ${organizationId}.`);
  const counts = emptyCounts();
  const emit = (type: ExportRecordType, body: Record<string, unknown>) => {
    counts[type]++;
    return line({ type, ...body });
  };
  const header: ExportHeader = { type: EXPORT_FORMAT, version: EXPORT_VERSION, exportedAt: context.nowIso(), organizationId, agentId, embedder: await context.index.embedder(), vectors };
  yield line(header);
  yield emit('agent', { agent });
  const threads = await context.store.threads.list({ agentId });
  for (const thread of threads) {
    yield emit('thread', { thread });
    for (const message of await context.store.messages.listRecent({ threadId: thread.id, limit: Number.MAX_SAFE_INTEGER })) yield emit('message', { message });
  }
  // Stored originals first, so an import knows every source before the jobs that name it.
  const jobsByThread = new Map<string, JobRecord[]>();
  const sources = new Set<string>();
  for (const thread of threads) {
    jobsByThread.set(thread.id, await context.store.jobs.allForThread({ threadId: thread.id }));
    for (const upload of await context.store.uploads.listByThread({ agentId, threadId: thread.id })) {
      if (!upload.stored || sources.has(upload.sourceId)) continue;
      sources.add(upload.sourceId);
      const blob = await context.blobs.get({ key: sourceBlobKey(organizationId, upload.sourceId) });
      if (!blob) continue;
      const chunks = Math.ceil(blob.data.length / SOURCE_CHUNK_BYTES);
      // sha256 of the bytes (added within version 1): an import refuses a file whose chunks differ.
      const sha256 = createHash('sha256').update(blob.data).digest('hex');
      yield emit('source', { sourceId: upload.sourceId, mediaType: blob.mediaType, bytes: blob.data.length, chunks, sha256 });
      for (let index = 0; index < chunks; index++) {
        const part = blob.data.subarray(index * SOURCE_CHUNK_BYTES, (index + 1) * SOURCE_CHUNK_BYTES);
        yield emit('source_chunk', { sourceId: upload.sourceId, index, data: Buffer.from(part).toString('base64') });
      }
    }
  }
  const ledgerJobs: string[] = [];
  for (const thread of threads) {
    for (const job of jobsByThread.get(thread.id) ?? []) {
      yield emit('job', { job });
      for (let from = 0; ; from += 1000) {
        const turns = await context.store.turns.list({ jobId: job.id, fromIndex: from, limit: 1000 });
        for (const turn of turns) yield emit('turn', { turn });
        if (turns.length < 1000) break;
      }
      // What its receipt reads beyond turns and memories, so the copy's receipt says the same.
      const [merges, supersessions, modelUsage] = await Promise.all([
        context.store.receipts.merges({ jobId: job.id }),
        context.store.receipts.supersessions({ jobId: job.id }),
        context.store.receipts.modelUsage({ jobId: job.id }),
      ]);
      if (merges.length + supersessions.length + modelUsage.length > 0) yield emit('job_learning', { jobId: job.id, merges, supersessions, modelUsage });
      ledgerJobs.push(job.id);
    }
    for (let beforeId: number | undefined; ; ) {
      const page = await context.store.notLearned.list({ threadId: thread.id, limit: 500, ...(beforeId === undefined ? {} : { beforeId }) });
      for (const record of page) yield emit('not_learned', { record });
      if (page.length < 500) break;
      beforeId = page[page.length - 1]!.id;
    }
    // Oldest first, so a resume comes after the upload it resumes.
    for (const upload of (await context.store.uploads.listByThread({ agentId, threadId: thread.id })).reverse()) yield emit('upload', { upload });
  }
  for (let cursor: string | null = null; ; ) {
    const page = await context.index.list({ agentId, limit: MEMORY_PAGE, cursor, includeHistory: true });
    const withVectors = vectors ? new Map((await context.index.get({ agentId, ids: page.records.map((r) => r.id) })).map((r) => [r.id, r.vector])) : null;
    // What people did to each memory (issue 42): pinned, forgotten, edited, cited; and its category
    // and policy version (issue 44); its review (issue 43); ids left out.
    const marks = page.records.length === 0 ? [] : await context.store.memoryMarks.get({ agentId, memoryIds: page.records.map((r) => r.id) });
    const markOf = new Map(
      marks.map(({ pinned, forgotten, edited, citedAt, citedCount, category, policyVersion, review, memoryId }) => [
        memoryId,
        // Its place in the review queue (issue 43) only when it has one: files of memories never held stay as they were.
        { pinned, forgotten, edited, citedAt, citedCount, category: category ?? null, policyVersion: policyVersion ?? null, ...(review ? { review } : {}) },
      ]),
    );
    for (const record of page.records) {
      const vector = withVectors?.get(record.id);
      const mark = markOf.get(record.id);
      yield emit('memory', { memory: { ...record, ...(vector ? { vector: encodeVector(vector) } : {}), ...(mark ? { mark } : {}) } });
    }
    if (page.nextCursor === null) break;
    cursor = page.nextCursor;
  }
  for (const jobId of ledgerJobs) {
    for (const entry of await context.store.ledger.listForJob({ organizationId, jobId })) yield emit('ledger', { entry });
  }
  const trailer: ExportTrailer = { type: 'end', counts };
  yield line(trailer);
}
