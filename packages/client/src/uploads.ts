/** What an upload accepts: a `Blob` or `File`, bytes, or a web `ReadableStream` of bytes. */
export type UploadInput = Blob | Uint8Array | ArrayBuffer | ReadableStream<Uint8Array>;

/**
 * The upload as a `Blob`: a stream is read to the end first, so the form has a length and a
 * retry can send it again (uploads are at most `max_upload_bytes`, 10 MB by default).
 */
export async function toUploadBlob(input: UploadInput, mediaType?: string): Promise<Blob> {
  if (input instanceof Blob) return mediaType === undefined || mediaType === input.type ? input : new Blob([input], { type: mediaType });
  const type = mediaType ?? 'application/octet-stream';
  if (input instanceof Uint8Array) return new Blob([input.slice()], { type });
  if (input instanceof ArrayBuffer) return new Blob([input], { type });
  const bytes = await new Response(input).arrayBuffer();
  return new Blob([bytes], { type });
}
