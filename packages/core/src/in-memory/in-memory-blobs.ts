import type { BlobStore } from '../ports/blob-store.js';

/**
 * A {@link BlobStore} held in a `Map`: the reference adapter for tests and single-process demos.
 *
 * Bytes are copied on `put` and on `get`, so a caller mutating its buffer never changes what is
 * stored, and two readers never share a buffer. Everything is lost when the process exits.
 *
 * @example
 * ```ts
 * const blobs = inMemoryBlobs();
 * await blobs.put({ key: 'sha256/ab12', data: bytes, mediaType: 'application/pdf' });
 * const blob = await blobs.get({ key: 'sha256/ab12' }); // { data, mediaType } | null
 * ```
 */
export function inMemoryBlobs(): BlobStore {
  const entries = new Map<string, { data: Uint8Array; mediaType: string }>();

  return {
    specificationVersion: 'v1',
    id: 'in-memory-blobs',
    async init() {},
    async close() {},
    async put({ key, data, mediaType }) {
      entries.set(key, { data: data.slice(), mediaType });
    },
    async putStream({ key, chunks, mediaType }) {
      // Held whole anyway: collected, then stored at once (nothing is stored when the chunks fail).
      const parts: Uint8Array[] = [];
      for await (const part of chunks) parts.push(part.slice());
      const data = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
      let at = 0;
      for (const part of parts) {
        data.set(part, at);
        at += part.length;
      }
      entries.set(key, { data, mediaType });
      return { bytes: data.length };
    },
    async get({ key }) {
      const entry = entries.get(key);
      return entry === undefined ? null : { data: entry.data.slice(), mediaType: entry.mediaType };
    },
    async getStream({ key }) {
      const entry = entries.get(key);
      if (entry === undefined) return null;
      const data = entry.data.slice();
      return {
        mediaType: entry.mediaType,
        bytes: data.length,
        chunks: (async function* () {
          for (let at = 0; at < data.length; at += 64 * 1024) yield data.subarray(at, at + 64 * 1024);
        })(),
      };
    },
    async delete({ key }) {
      entries.delete(key);
    },
    async deletePrefix({ prefix }) {
      // Deleting while iterating a Map is safe: entries not yet visited are still visited.
      for (const key of entries.keys()) {
        if (key.startsWith(prefix)) entries.delete(key);
      }
    },
  };
}
