/**
 * The agent export format (docs/export-format.md): JSON Lines, one record per line, a header first
 * and an `end` trailer with counts last. Version rule: a reader of version N refuses any other
 * version with a sentence; within a version, fields and record types are only ever added, and a
 * reader ignores the ones it does not know.
 */
import type { JobMerge, JobModelUsage, JobSupersession } from '../ports/store/index.js';

export const EXPORT_FORMAT = 'memory-agents-export';
export const EXPORT_VERSION = 1;

/** Raw bytes per `source_chunk` line (base64 makes it ~256 KiB of text). */
export const SOURCE_CHUNK_BYTES = 192 * 1024;

/** The record types of version 1, in the order an export writes them. */
export const EXPORT_RECORD_TYPES = ['agent', 'thread', 'message', 'source', 'source_chunk', 'job', 'turn', 'job_learning', 'not_learned', 'upload', 'memory', 'ledger'] as const;
export type ExportRecordType = (typeof EXPORT_RECORD_TYPES)[number];

/**
 * Record types added within version 1 after its first files were written: the `end` line of an
 * older file has no count for them, which reads as 0.
 */
export const LATER_RECORD_TYPES: readonly ExportRecordType[] = ['job_learning'];

/**
 * A `job_learning` line: what learning recorded for the job in `store.receipts` that its receipt reads
 * (turns merged into memories, memories superseded, model tokens per batch). Written after the
 * job's turns, only when one of them is not empty.
 */
export type JobLearningLine = {
  type: 'job_learning';
  jobId: string;
  merges: JobMerge[];
  supersessions: JobSupersession[];
  modelUsage: JobModelUsage[];
};

export type ExportHeader = {
  type: typeof EXPORT_FORMAT;
  version: number;
  exportedAt: string;
  organizationId: string;
  agentId: string;
  /** The embedder fingerprint the memories' vectors were made with, or null without memories. */
  embedder: { id: string; dimensions: number } | null;
  /** False when written with `--no-vectors`: memories carry no `vector`. */
  vectors: boolean;
};

export type ExportTrailer = { type: 'end'; counts: Record<ExportRecordType, number> };

/** A refusal of an import file, naming its line (1-based). */
export class ExportFormatError extends Error {
  constructor(
    readonly line: number,
    message: string,
  ) {
    super(`line ${line}: ${message}`);
    this.name = 'ExportFormatError';
  }
}

export const emptyCounts = (): Record<ExportRecordType, number> =>
  Object.fromEntries(EXPORT_RECORD_TYPES.map((type) => [type, 0])) as Record<ExportRecordType, number>;

/** A Float32Array as base64 of its little-endian bytes. */
export function encodeVector(vector: Float32Array): string {
  const copy = new Float32Array(vector);
  const bytes = new Uint8Array(copy.buffer);
  if (!littleEndian) for (let i = 0; i < bytes.length; i += 4) bytes.subarray(i, i + 4).reverse();
  return Buffer.from(bytes).toString('base64');
}

export function decodeVector(text: string): Float32Array {
  const bytes = new Uint8Array(Buffer.from(text, 'base64'));
  if (bytes.length % 4 !== 0) throw new Error('a vector is base64 of 4-byte floats');
  if (!littleEndian) for (let i = 0; i < bytes.length; i += 4) bytes.subarray(i, i + 4).reverse();
  return new Float32Array(bytes.buffer, 0, bytes.length / 4);
}

const littleEndian = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/** Splits a stream of text chunks (or Buffers) into lines, without their line ends. */
export async function* splitLines(chunks: AsyncIterable<string | Uint8Array> | Iterable<string | Uint8Array>): AsyncIterable<string> {
  const decoder = new TextDecoder();
  let rest = '';
  for await (const chunk of chunks) {
    rest += typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
    let at: number;
    while ((at = rest.indexOf('\n')) >= 0) {
      yield rest.slice(0, at).replace(/\r$/, '');
      rest = rest.slice(at + 1);
    }
  }
  rest += decoder.decode();
  if (rest !== '') yield rest;
}
