import type { BlobStore } from '../ports/blob-store.js';

/** Writes `chunks` under `key`: streamed where the store can, else collected and `put` whole. */
export async function putBlobChunks(blobs: BlobStore, request: { key: string; chunks: AsyncIterable<Uint8Array>; mediaType: string }): Promise<{ bytes: number }> {
  if (blobs.putStream) return blobs.putStream(request);
  const parts: Uint8Array[] = [];
  let bytes = 0;
  for await (const part of request.chunks) {
    parts.push(part);
    bytes += part.length;
  }
  const data = new Uint8Array(bytes);
  let at = 0;
  for (const part of parts) {
    data.set(part, at);
    at += part.length;
  }
  await blobs.put({ key: request.key, data, mediaType: request.mediaType });
  return { bytes };
}

/** A blob as chunks: streamed where the store can, else read whole and handed out as one chunk. */
export async function getBlobChunks(blobs: BlobStore, request: { key: string }): Promise<{ chunks: AsyncIterable<Uint8Array>; mediaType: string; bytes: number } | null> {
  if (blobs.getStream) return blobs.getStream(request);
  const blob = await blobs.get(request);
  if (!blob) return null;
  return {
    mediaType: blob.mediaType,
    bytes: blob.data.length,
    chunks: (async function* () {
      yield blob.data;
    })(),
  };
}
