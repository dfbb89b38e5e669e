import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { BlobStore } from '../../../ports/blob-store.js';

/** What `create()` of {@link describeBlobStoreConformance} returns: one fresh, empty backend. */
export type BlobStoreConformanceTarget = {
  /** The store under test. The suite calls `init()` before a test and `close()` after it. */
  port: BlobStore;
  /** Releases the backend (temp dir, database); runs after `close()`, even when a test fails. */
  cleanup?: () => Promise<void>;
  /**
   * Opens a second, independent store on the same backend as `port` (same directory, same
   * database). When given, persistence is checked through it rather than through the writer.
   */
  reopen?: () => Promise<BlobStore>;
};

/** Options of {@link describeBlobStoreConformance}. */
export type BlobStoreConformanceOptions = {
  /** Names the `describe` block, e.g. `'fileSystemBlobs'`. */
  name: string;
  /** Builds a fresh, empty store; called once per test, so no test sees another's data. */
  create: () => Promise<BlobStoreConformanceTarget>;
  /** Test titles to skip, e.g. `['binary: a 5 MB blob roundtrips exactly']`. */
  skip?: string[];
};

type Context = { port: BlobStore; reopen: (() => Promise<BlobStore>) | undefined };

/**
 * Registers a vitest suite that checks a {@link BlobStore} against the port's contract:
 * roundtrips, overwrite, absence as `null`, silent deletes, prefix deletes, persistence through a
 * second instance, binary exactness and a 5 MB blob.
 *
 * @example
 * ```ts
 * describeBlobStoreConformance({
 *   name: 'fileSystemBlobs',
 *   create: async () => {
 *     const directory = await mkdtemp(join(tmpdir(), 'blobs-'));
 *     return {
 *       port: fileSystemBlobs({ directory }),
 *       reopen: async () => fileSystemBlobs({ directory }),
 *       cleanup: () => rm(directory, { recursive: true, force: true }),
 *     };
 *   },
 * });
 * ```
 */
export function describeBlobStoreConformance({ name, create, skip = [] }: BlobStoreConformanceOptions): void {
  const test = (title: string, body: (context: Context) => Promise<void>, timeout?: number) =>
    (skip.includes(title) ? it.skip : it)(title, () => withStore(create, body), timeout);

  /** Reads through a second instance when the backend can open one, else through the writer. */
  const reader = async (context: Context, read: (store: BlobStore) => Promise<void>) => {
    if (context.reopen === undefined) return read(context.port);
    const second = await context.reopen();
    await second.init?.();
    try {
      await read(second);
    } finally {
      await second.close?.();
    }
  };

  describe(name, () => {
    test('put/get: roundtrips the bytes and the media type', async ({ port }) => {
      await port.put({ key: 'documents/a1/original', data: bytes('hello blob'), mediaType: 'text/plain' });
      const blob = await port.get({ key: 'documents/a1/original' });
      expect(blob).not.toBeNull();
      expect(blob?.mediaType).toBe('text/plain');
      expect(toArray(blob?.data)).toEqual(toArray(bytes('hello blob')));
    });

    test('get: a missing key resolves null', async ({ port }) => {
      await expect(port.get({ key: 'never/written' })).resolves.toBeNull();
    });

    test('put: writing an existing key again keeps one copy', async ({ port }) => {
      await port.put({ key: 'k', data: bytes('first'), mediaType: 'text/plain' });
      await port.put({ key: 'k', data: bytes('second'), mediaType: 'text/markdown' });
      const blob = await port.get({ key: 'k' });
      expect(blob?.mediaType).toBe('text/markdown');
      expect(toArray(blob?.data)).toEqual(toArray(bytes('second')));
      // One delete must remove it entirely: a second copy would resurface here.
      await port.delete({ key: 'k' });
      await expect(port.get({ key: 'k' })).resolves.toBeNull();
    });

    test('put: parallel writes of the same key leave one readable copy', async ({ port }) => {
      const data = randomBytes(64 * 1024);
      await Promise.all(
        Array.from({ length: 8 }, () => port.put({ key: 'same', data, mediaType: 'image/png' })),
      );
      const blob = await port.get({ key: 'same' });
      expect(blob?.mediaType).toBe('image/png');
      expect(equalBytes(blob?.data, data)).toBe(true);
      await port.delete({ key: 'same' });
      await expect(port.get({ key: 'same' })).resolves.toBeNull();
    });

    test('delete: removes the key and leaves the others', async ({ port }) => {
      await port.put({ key: 'a', data: bytes('a'), mediaType: 'text/plain' });
      await port.put({ key: 'b', data: bytes('b'), mediaType: 'text/plain' });
      await port.delete({ key: 'a' });
      await expect(port.get({ key: 'a' })).resolves.toBeNull();
      expect(toArray((await port.get({ key: 'b' }))?.data)).toEqual(toArray(bytes('b')));
    });

    test('delete: a missing key succeeds silently', async ({ port }) => {
      await expect(port.delete({ key: 'never/written' })).resolves.toBeUndefined();
    });

    test('deletePrefix: removes exactly the keys that start with the prefix', async ({ port }) => {
      const keys = ['agents/a1/x', 'agents/a1/y/z', 'agents/a10/x', 'agents/a2/x', 'agents', 'other/a1/x'];
      for (const key of keys) await port.put({ key, data: bytes(key), mediaType: 'text/plain' });

      await port.deletePrefix({ prefix: 'agents/a1/' });
      expect(await present(port, keys)).toEqual(['agents/a10/x', 'agents/a2/x', 'agents', 'other/a1/x']);

      // A prefix need not end on a `/`: `agents/a` also matches `agents/a10/…` and `agents/a2/…`.
      await port.deletePrefix({ prefix: 'agents/a' });
      expect(await present(port, keys)).toEqual(['agents', 'other/a1/x']);
    });

    test('deletePrefix: a prefix matching nothing succeeds silently', async ({ port }) => {
      await port.put({ key: 'kept', data: bytes('kept'), mediaType: 'text/plain' });
      await expect(port.deletePrefix({ prefix: 'nothing/here/' })).resolves.toBeUndefined();
      expect(await present(port, ['kept'])).toEqual(['kept']);
    });

    test('keys: unusual characters roundtrip without collisions', async ({ port }) => {
      const keys = ['doc/x', 'doc/../x', 'doc/./x', 'doc/%2E%2E/x', 'doc/ü ñ 漢字/x', 'doc/a\\b/x', 'doc/x.bin'];
      for (const key of keys) await port.put({ key, data: bytes(key), mediaType: 'text/plain' });
      for (const key of keys) {
        expect(new TextDecoder().decode((await port.get({ key }))?.data)).toBe(key);
      }
    });

    test('persistence: a second instance on the same backend sees writes and deletes', async (context) => {
      await context.port.put({ key: 'kept', data: bytes('kept'), mediaType: 'application/pdf' });
      await context.port.put({ key: 'gone', data: bytes('gone'), mediaType: 'application/pdf' });
      await context.port.put({ key: 'prefix/gone', data: bytes('gone'), mediaType: 'application/pdf' });
      await context.port.delete({ key: 'gone' });
      await context.port.deletePrefix({ prefix: 'prefix/' });
      await reader(context, async (store) => {
        const blob = await store.get({ key: 'kept' });
        expect(blob?.mediaType).toBe('application/pdf');
        expect(toArray(blob?.data)).toEqual(toArray(bytes('kept')));
        await expect(store.get({ key: 'gone' })).resolves.toBeNull();
        await expect(store.get({ key: 'prefix/gone' })).resolves.toBeNull();
      });
    });

    test('binary: every byte value survives unchanged', async (context) => {
      const data = new Uint8Array(256 * 4).map((_, index) => index % 256);
      await context.port.put({ key: 'bytes', data, mediaType: 'application/octet-stream' });
      await reader(context, async (store) => {
        expect(equalBytes((await store.get({ key: 'bytes' }))?.data, data)).toBe(true);
      });
    });

    test('binary: an empty blob roundtrips', async (context) => {
      await context.port.put({ key: 'empty', data: new Uint8Array(0), mediaType: 'text/plain' });
      await reader(context, async (store) => {
        const blob = await store.get({ key: 'empty' });
        expect(blob).not.toBeNull();
        expect(blob?.data.byteLength).toBe(0);
      });
    });

    test('binary: a 5 MB blob roundtrips exactly', async (context) => {
      const data = randomBytes(5 * 1024 * 1024);
      await context.port.put({ key: 'large', data, mediaType: 'application/pdf' });
      await reader(context, async (store) => {
        const blob = await store.get({ key: 'large' });
        expect(blob?.data.byteLength).toBe(data.byteLength);
        expect(equalBytes(blob?.data, data)).toBe(true);
      });
    }, 60_000);

    // Optional capability: stores without `putStream` get their chunks collected by core.
    test('putStream: chunks written as they come read back as one blob, and it says how many bytes', async (context) => {
      if (!context.port.putStream) return;
      const parts = [bytes('{"a":1}\n'), randomBytes(200_000), new Uint8Array(0), bytes('end\n')];
      async function* chunks() {
        for (const part of parts) yield part;
      }
      const total = parts.reduce((sum, part) => sum + part.length, 0);
      await expect(context.port.putStream({ key: 'exports/x.jsonl', chunks: chunks(), mediaType: 'application/x-ndjson' })).resolves.toEqual({ bytes: total });
      await reader(context, async (store) => {
        const blob = await store.get({ key: 'exports/x.jsonl' });
        expect(blob?.mediaType).toBe('application/x-ndjson');
        expect(equalBytes(blob?.data, Buffer.concat(parts))).toBe(true);
      });
    });

    test('putStream: chunks that fail part-way write nothing, keep the old blob, and reject with their own error', async (context) => {
      if (!context.port.putStream) return;
      await context.port.put({ key: 'kept', data: bytes('old'), mediaType: 'text/plain' });
      const failure = new Error('the export failed while reading');
      async function* failing() {
        yield bytes('new part');
        throw failure;
      }
      await expect(context.port.putStream({ key: 'kept', chunks: failing(), mediaType: 'text/plain' })).rejects.toBe(failure);
      await expect(context.port.putStream({ key: 'fresh', chunks: failing(), mediaType: 'text/plain' })).rejects.toBe(failure);
      await reader(context, async (store) => {
        expect(toArray((await store.get({ key: 'kept' }))?.data)).toEqual(toArray(bytes('old')));
        await expect(store.get({ key: 'fresh' })).resolves.toBeNull();
      });
    });

    test('getStream: a blob read as chunks equals the blob, with its size and type; a missing key is null', async (context) => {
      const data = randomBytes(300_000);
      await context.port.put({ key: 'exports/big', data, mediaType: 'application/x-ndjson' });
      await reader(context, async (store) => {
        if (!store.getStream) return;
        await expect(store.getStream({ key: 'never/written' })).resolves.toBeNull();
        const blob = await store.getStream({ key: 'exports/big' });
        expect(blob).toMatchObject({ mediaType: 'application/x-ndjson', bytes: data.length });
        const parts: Uint8Array[] = [];
        for await (const part of blob!.chunks) parts.push(part);
        expect(parts.length).toBeGreaterThan(1);
        expect(equalBytes(Buffer.concat(parts), data)).toBe(true);
        // Stopping early is allowed (a client that went away): the rest is never read.
        const again = await store.getStream({ key: 'exports/big' });
        for await (const part of again!.chunks) {
          expect(part.length).toBeGreaterThan(0);
          break;
        }
      });
    });

    test('isolation: changing a buffer after put or get leaves the stored blob alone', async ({ port }) => {
      const data = bytes('original');
      await port.put({ key: 'k', data, mediaType: 'text/plain' });
      data.fill(0);
      const first = await port.get({ key: 'k' });
      first?.data.fill(0);
      expect(toArray((await port.get({ key: 'k' }))?.data)).toEqual(toArray(bytes('original')));
    });
  });
}

async function withStore(
  create: BlobStoreConformanceOptions['create'],
  body: (context: Context) => Promise<void>,
): Promise<void> {
  const { port, cleanup, reopen } = await create();
  try {
    await port.init?.();
    await body({ port, reopen });
  } finally {
    try {
      await port.close?.();
    } finally {
      await cleanup?.();
    }
  }
}

async function present(port: BlobStore, keys: string[]): Promise<string[]> {
  const found = await Promise.all(keys.map(async (key) => ((await port.get({ key })) === null ? null : key)));
  return found.filter((key): key is string => key !== null);
}

function bytes(text: string): Uint8Array {
  return new TextEncoder().encode(text);
}

/** Compares contents only, so a `Buffer` equals a plain `Uint8Array` with the same bytes. */
function toArray(data: Uint8Array | undefined): number[] | undefined {
  return data === undefined ? undefined : Array.from(data);
}

function equalBytes(actual: Uint8Array | undefined, expected: Uint8Array): boolean {
  return actual !== undefined && Buffer.compare(Buffer.from(actual.buffer, actual.byteOffset, actual.byteLength), expected) === 0;
}
