import { openAsBlob } from 'node:fs';
import { basename, extname } from 'node:path';

/** Media types by extension; the server judges the format by the bytes, this only labels the part. */
const MEDIA_TYPES: Record<string, string> = {
  '.md': 'text/markdown',
  '.markdown': 'text/markdown',
  '.txt': 'text/plain',
  '.csv': 'text/csv',
  '.json': 'application/json',
  '.html': 'text/html',
  '.htm': 'text/html',
  '.pdf': 'application/pdf',
  '.docx': 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.webp': 'image/webp',
};

/**
 * A `File` for a path on disk (Node only), named after the path, to pass to `observeFile` or
 * `images.upload`. The bytes are read from disk when the request is sent.
 *
 * @example
 * import { fileFromPath } from '@memory-agents/client/node';
 * await client.threads.observeFile(agentId, threadId, await fileFromPath('notes.md'));
 */
export async function fileFromPath(path: string, options: { filename?: string; mediaType?: string } = {}): Promise<File> {
  const type = options.mediaType ?? MEDIA_TYPES[extname(path).toLowerCase()] ?? 'application/octet-stream';
  const blob = await openAsBlob(path, { type });
  return new File([blob], options.filename ?? basename(path), { type });
}
