/**
 * Bytes by key: original documents, figure crops, uploaded images.
 *
 * Contract:
 * - `put` of an existing key MUST leave one copy (keys are content hashes, so the bytes are equal).
 * - `get` of a missing key MUST resolve `null`, not throw.
 * - `delete` of a missing key MUST succeed silently.
 * - Failures of the backing storage MUST reject; callers decide whether that is fatal.
 */
export type BlobStore = {
  readonly specificationVersion: 'v1';
  readonly id: string;
  init?(): Promise<void>;
  close?(): Promise<void>;
  put(request: { key: string; data: Uint8Array; mediaType: string }): Promise<void>;
  get(request: { key: string }): Promise<{ data: Uint8Array; mediaType: string } | null>;
  delete(request: { key: string }): Promise<void>;
  /** Deletes every key starting with `prefix`. */
  deletePrefix(request: { prefix: string }): Promise<void>;
  /**
   * Optional: writes a blob from chunks as they come, so a large value (an export file) is never
   * held whole. As atomic as `put`: the key holds the old blob or the whole new one, never a part;
   * when `chunks` throws, nothing is written and the rejection is the iterable's. Resolves the bytes
   * written. Without it, core collects the chunks and calls `put` (`blobs/chunks.ts`).
   */
  putStream?(request: { key: string; chunks: AsyncIterable<Uint8Array>; mediaType: string }): Promise<{ bytes: number }>;
  /**
   * Optional: a blob's bytes as chunks read as they are consumed (a large export downloaded), with
   * its size and media type; `null` when the key is missing. Stopping the iteration early releases
   * what the read holds. Without it, core reads the blob whole with `get` (`blobs/chunks.ts`).
   */
  getStream?(request: { key: string }): Promise<{ chunks: AsyncIterable<Uint8Array>; mediaType: string; bytes: number } | null>;
};

