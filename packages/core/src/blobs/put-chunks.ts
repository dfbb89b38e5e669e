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
