import { randomUUID } from 'node:crypto';
import { mkdir, open, readFile, readdir, rename, rm, unlink, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { ServiceError } from '../errors/service-error.js';
import type { BlobStore } from '../ports/blob-store.js';

/** Options of {@link fileSystemBlobs}. */
export type FileSystemBlobsOptions = {
  /**
   * The directory that holds the blobs; created (with its parents) on first write. A relative path
   * is resolved against the working directory when the factory is called. Every file the store
   * writes stays inside it, whatever the key.
   */
  directory: string;
};

const optionsSchema = z.object({ directory: z.string().min(1) });

/** Start of every blob file, so foreign or truncated files are recognised instead of misread. */
const MAGIC = Buffer.from('MABLOB1\n', 'latin1');
const BLOB_EXTENSION = '.blob';
/** Temp files start with a dot, which an encoded key segment never does, so walks skip them. */
const TEMP_PREFIX = '.tmp-';
/** Leaves room for the extension within the 255-byte name limit of common file systems. */
const MAX_SEGMENT_BYTES = 240;

/**
 * A {@link BlobStore} on the local file system: one file per key under `directory`.
 *
 * Layout: the key is split on `/` and each segment is percent-encoded (everything except
 * `A-Z a-z 0-9 - _` becomes `%XX`), so `.`, `..`, `\` and NUL cannot reach the file system and a
 * key can never name a path outside `directory`. The last segment gets a `.blob` extension, so
 * the keys `a` and `a/b` can coexist. Keys with an empty segment (`''`, `/a`, `a//b`, `a/`) or a
 * segment longer than 240 bytes once encoded are rejected with a `TypeError`.
 *
 * Writes are atomic: the bytes go to a temp file in the target directory, are flushed, then
 * renamed over the final name, so a reader sees the old blob or the new one, never a part.
 * Failures of the file system reject with `ServiceError('service_unavailable')`, the cause set.
 *
 * Each file starts with a short header holding the media type, so one rename publishes bytes and
 * type together. Keys differing only in letter case collide on case-insensitive file systems.
 *
 * @example
 * ```ts
 * const blobs = fileSystemBlobs({ directory: './data/blobs' });
 * await blobs.put({ key: 'sha256/ab12', data: bytes, mediaType: 'application/pdf' });
 * const blob = await blobs.get({ key: 'sha256/ab12' }); // { data, mediaType } | null
 * ```
 */
export function fileSystemBlobs(options: FileSystemBlobsOptions): BlobStore {
  const { directory } = optionsSchema.parse(options);
  const root = path.resolve(directory);

  const fileFor = (key: string) => path.join(root, ...splitKey(key).map(encodeSegment)) + BLOB_EXTENSION;

  return {
    specificationVersion: 'v1',
    id: 'file-system-blobs',

    async init() {
      await wrap('init', () => mkdir(root, { recursive: true }));
    },

    async close() {},

    async put({ key, data, mediaType }) {
      const file = fileFor(key);
      if (/[\r\n]/.test(mediaType)) throw new TypeError('A media type cannot contain a line break.');
      const header = Buffer.concat([MAGIC, Buffer.from(`${mediaType}\n`, 'utf8')]);
      await wrap('put', async () => {
        // A concurrent `deletePrefix` may remove the directory between `mkdir` and `rename`;
        // retrying recreates it (the key was written after the delete, so it must survive).
        for (let attempt = 1; ; attempt += 1) {
          try {
            await writeAtomically(file, header, data);
            return;
          } catch (error) {
            if (!isMissing(error) || attempt >= 3) throw error;
          }
        }
      });
    },

    async putStream({ key, chunks, mediaType }) {
      const file = fileFor(key);
      if (/[\r\n]/.test(mediaType)) throw new TypeError('A media type cannot contain a line break.');
      const header = Buffer.concat([MAGIC, Buffer.from(`${mediaType}\n`, 'utf8')]);
      // One pass over the chunks (they cannot be read twice), so no retry as `put` has: a
      // concurrent `deletePrefix` of the directory fails the write instead.
      const failure: { error?: unknown } = {};
      const bytes = await wrap('putStream', () => writeAtomically(file, header, chunks, failure)).catch((error: unknown) => {
        throw 'error' in failure ? failure.error : error;
      });
      return { bytes };
    },

    async get({ key }) {
      const file = fileFor(key);
      const bytes = await wrap('get', async () => {
        try {
          return await readFile(file);
        } catch (error) {
          if (isMissing(error)) return null;
          throw error;
        }
      });
      return bytes === null ? null : parseBlobFile(bytes, file);
    },

    async getStream({ key }) {
      const file = fileFor(key);
      return wrap('getStream', async () => {
        let handle;
        try {
          handle = await open(file, 'r');
        } catch (error) {
          if (isMissing(error)) return null;
          throw error;
        }
        try {
          // The header is short: the magic and one line of media type.
          const head = Buffer.alloc(MAGIC.length + 256);
          const { bytesRead } = await handle.read(head, 0, head.length, 0);
          const end = head.subarray(0, bytesRead).indexOf(0x0a, MAGIC.length);
          if (!head.subarray(0, MAGIC.length).equals(MAGIC) || end < 0) {
            throw new ServiceError('service_unavailable', 'A stored blob is damaged.', { cause: new Error(`${file} is not a blob file`) });
          }
          const { size } = await handle.stat();
          const opened = handle;
          handle = undefined;
          return { mediaType: head.toString('utf8', MAGIC.length, end), bytes: size - end - 1, chunks: readChunks(opened, end + 1, size) };
        } finally {
          await handle?.close();
        }
      });
    },

    async delete({ key }) {
      const file = fileFor(key);
      await wrap('delete', () => rm(file, { force: true }));
    },

    async deletePrefix({ prefix }) {
      const segments = prefix.split('/');
      const partial = segments.pop() ?? '';
      // No valid key has an empty segment, so such a prefix matches nothing.
      if (segments.some((segment) => segment === '')) return;
      const parent = path.join(root, ...segments.map(encodeSegment));
      await wrap('deletePrefix', async () => {
        let entries;
        try {
          entries = await readdir(parent, { withFileTypes: true });
        } catch (error) {
          if (isMissing(error)) return;
          throw error;
        }
        await Promise.all(
          entries.map(async (entry) => {
            if (entry.name.startsWith('.')) return;
            const isBlob = entry.isFile() && entry.name.endsWith(BLOB_EXTENSION);
            if (!isBlob && !entry.isDirectory()) return;
            const encoded = isBlob ? entry.name.slice(0, -BLOB_EXTENSION.length) : entry.name;
            const segment = decodeSegment(encoded);
            // A directory whose name starts with the partial segment only holds matching keys.
            if (segment === null || !segment.startsWith(partial)) return;
            await rm(path.join(parent, entry.name), { recursive: true, force: true });
          }),
        );
      });
    },
  };
}

function splitKey(key: string): string[] {
  if (typeof key !== 'string' || key === '') throw new TypeError('A blob key must be a non-empty string.');
  const segments = key.split('/');
  if (segments.some((segment) => segment === '')) {
    throw new TypeError(`Blob key ${JSON.stringify(key)} has an empty path segment.`);
  }
  return segments;
}

function encodeSegment(segment: string): string {
  let encoded: string;
  try {
    // encodeURIComponent keeps `. ! ~ * ' ( )`; encode those too so `.`/`..` never survive.
    encoded = encodeURIComponent(segment).replace(
      /[.!~*'()]/g,
      (character) => `%${character.charCodeAt(0).toString(16).toUpperCase()}`,
    );
  } catch (error) {
    throw new TypeError('A blob key must be well-formed Unicode.', { cause: error });
  }
  if (encoded.length > MAX_SEGMENT_BYTES) {
    throw new TypeError(`A blob key segment may be at most ${MAX_SEGMENT_BYTES} bytes once encoded.`);
  }
  return encoded;
}

function decodeSegment(encoded: string): string | null {
  try {
    return decodeURIComponent(encoded);
  } catch {
    return null;
  }
}

/**
 * Writes header and data to a temp file, flushes it and renames it over `file`. `data` may be
 * chunks read as they come; an error they throw is kept in `failure` (so the caller rethrows it as
 * it was, not as a storage failure) and nothing is published. Resolves the data's bytes.
 */
async function writeAtomically(file: string, header: Uint8Array, data: Uint8Array | AsyncIterable<Uint8Array>, failure?: { error?: unknown }): Promise<number> {
  const directory = path.dirname(file);
  await mkdir(directory, { recursive: true });
  const temp = path.join(directory, `${TEMP_PREFIX}${randomUUID()}`);
  try {
    const handle = await open(temp, 'wx');
    let bytes = 0;
    try {
      // Consecutive writeFile calls on one handle append from the current position.
      await handle.writeFile(header);
      if (data instanceof Uint8Array) {
        await handle.writeFile(data);
        bytes = data.length;
      } else {
        const iterator = data[Symbol.asyncIterator]();
        for (;;) {
          let next: IteratorResult<Uint8Array>;
          try {
            next = await iterator.next();
          } catch (error) {
            failure!.error = error;
            throw error;
          }
          if (next.done) break;
          await handle.writeFile(next.value);
          bytes += next.value.length;
        }
      }
      await handle.datasync();
    } finally {
      await handle.close();
    }
    await rename(temp, file);
    return bytes;
  } catch (error) {
    await unlink(temp).catch(() => {});
    throw error;
  }
}

/** Reads [from, to) of an open blob file in 64 KiB chunks, closing it when done or abandoned. */
async function* readChunks(handle: FileHandle, from: number, to: number): AsyncIterable<Uint8Array> {
  try {
    for (let at = from; at < to; ) {
      const chunk = new Uint8Array(Math.min(READ_CHUNK_BYTES, to - at));
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, at);
      if (bytesRead === 0) throw new ServiceError('service_unavailable', 'A stored blob ended before its size (it changed while read).');
      at += bytesRead;
      yield bytesRead === chunk.length ? chunk : chunk.subarray(0, bytesRead);
    }
  } finally {
    await handle.close();
  }
}

const READ_CHUNK_BYTES = 64 * 1024;

function parseBlobFile(bytes: Buffer, file: string): { data: Uint8Array; mediaType: string } {
  const end = bytes.indexOf(0x0a, MAGIC.length);
  if (!bytes.subarray(0, MAGIC.length).equals(MAGIC) || end < 0) {
    throw new ServiceError('service_unavailable', 'A stored blob is damaged.', {
      cause: new Error(`${file} is not a blob file`),
    });
  }
  return {
    mediaType: bytes.toString('utf8', MAGIC.length, end),
    // A copy, as a plain Uint8Array: readFile may hand out a view of a shared pool.
    data: new Uint8Array(bytes.subarray(end + 1)),
  };
}

function isMissing(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | null)?.code === 'ENOENT';
}

async function wrap<T>(operation: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    throw new ServiceError('service_unavailable', `The file-system blob store failed (${operation}).`, {
      cause: error,
    });
  }
}
