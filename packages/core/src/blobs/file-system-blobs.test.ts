import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { isServiceError } from '../errors/service-error.js';
import { describeBlobStoreConformance } from '../testing/conformance/blob-store/index.js';
import { fileSystemBlobs } from './file-system-blobs.js';

describeBlobStoreConformance({
  name: 'fileSystemBlobs',
  create: async () => {
    const directory = await mkdtemp(path.join(tmpdir(), 'file-system-blobs-'));
    return {
      port: fileSystemBlobs({ directory }),
      reopen: async () => fileSystemBlobs({ directory }),
      cleanup: () => rm(directory, { recursive: true, force: true }),
    };
  },
});

describe('fileSystemBlobs', () => {
  const withDirectory = async (body: (directory: string) => Promise<void>) => {
    const parent = await mkdtemp(path.join(tmpdir(), 'file-system-blobs-'));
    try {
      await body(parent);
    } finally {
      await rm(parent, { recursive: true, force: true });
    }
  };

  const listFiles = async (directory: string) =>
    (await readdir(directory, { recursive: true, withFileTypes: true }))
      .filter((entry) => entry.isFile())
      .map((entry) => path.relative(directory, path.join(entry.parentPath, entry.name)));

  it('keeps every file inside the directory whatever the key', async () => {
    await withDirectory(async (parent) => {
      const directory = path.join(parent, 'blobs');
      const blobs = fileSystemBlobs({ directory });
      for (const key of ['../escape', '../../escape', '..', '.', 'a/../../escape', 'a\\..\\b']) {
        await blobs.put({ key, data: new Uint8Array([1]), mediaType: 'text/plain' });
      }
      expect(await readdir(parent)).toEqual(['blobs']);
      for (const file of await listFiles(directory)) {
        expect(file.split(path.sep).every((segment) => segment !== '..' && segment !== '.')).toBe(true);
      }
    });
  });

  it('rejects keys with an empty segment', async () => {
    await withDirectory(async (directory) => {
      const blobs = fileSystemBlobs({ directory });
      for (const key of ['', '/abs', 'a//b', 'trailing/']) {
        await expect(blobs.put({ key, data: new Uint8Array([1]), mediaType: 'text/plain' })).rejects.toThrow(TypeError);
        await expect(blobs.get({ key })).rejects.toThrow(TypeError);
      }
    });
  });

  it('leaves no temp files behind and writes one file per key', async () => {
    await withDirectory(async (directory) => {
      const blobs = fileSystemBlobs({ directory });
      await blobs.put({ key: 'sha256/ab', data: new Uint8Array([1, 2]), mediaType: 'image/png' });
      await blobs.put({ key: 'sha256/ab', data: new Uint8Array([1, 2]), mediaType: 'image/png' });
      expect(await listFiles(directory)).toEqual([path.join('sha256', 'ab.blob')]);
    });
  });

  it('a stream that fails part-way leaves no temp file behind', async () => {
    await withDirectory(async (directory) => {
      const blobs = fileSystemBlobs({ directory });
      async function* failing() {
        yield new TextEncoder().encode('part');
        throw new Error('cut off');
      }
      await expect(blobs.putStream!({ key: 'exports/a', chunks: failing(), mediaType: 'text/plain' })).rejects.toThrow('cut off');
      expect(await listFiles(directory)).toEqual([]);
    });
  });

  it('rejects with service_unavailable when a stored file is damaged', async () => {
    await withDirectory(async (directory) => {
      const blobs = fileSystemBlobs({ directory });
      await blobs.put({ key: 'k', data: new Uint8Array([1]), mediaType: 'text/plain' });
      await writeFile(path.join(directory, 'k.blob'), 'not a blob file');
      const error = await blobs.get({ key: 'k' }).catch((caught: unknown) => caught);
      expect(isServiceError(error) && error.code).toBe('service_unavailable');
    });
  });

  it('does no I/O until used', async () => {
    await withDirectory(async (parent) => {
      const directory = path.join(parent, 'later');
      const blobs = fileSystemBlobs({ directory });
      expect(await readdir(parent)).toEqual([]);
      await blobs.init?.();
      expect(await readdir(parent)).toEqual(['later']);
    });
  });

  it('validates its options', () => {
    expect(() => fileSystemBlobs({ directory: '' })).toThrow();
  });
});
