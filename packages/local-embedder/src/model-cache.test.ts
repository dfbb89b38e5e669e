import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isModelName, listModels, modelDirFor, modelsDir, resolveModel, type ModelManifest } from './model-cache.js';
import { MANIFEST } from './model-files.js';

describe('modelsDir', () => {
  it('takes MEMORY_AGENTS_MODELS_DIR first, then $XDG_CACHE_HOME/memory-agents/models, then ~/.cache/memory-agents/models', () => {
    const all = { MEMORY_AGENTS_MODELS_DIR: '/srv/models', XDG_CACHE_HOME: '/xdg', HOME: '/home/ada' };
    expect(modelsDir(all)).toBe('/srv/models');
    expect(modelsDir({ ...all, MEMORY_AGENTS_MODELS_DIR: '' })).toBe('/xdg/memory-agents/models');
    expect(modelsDir({ HOME: '/home/ada' })).toBe('/home/ada/.cache/memory-agents/models');
    expect(modelsDir({})).toBe(join(homedir(), '.cache', 'memory-agents', 'models'));
    // The XDG spec says a relative XDG_CACHE_HOME is to be ignored; a relative models dir is taken from the working directory.
    expect(modelsDir({ XDG_CACHE_HOME: 'relative', HOME: '/home/ada' })).toBe('/home/ada/.cache/memory-agents/models');
    expect(modelsDir({ MEMORY_AGENTS_MODELS_DIR: 'models' })).toBe(resolve('models'));
  });
});

describe('modelDirFor', () => {
  it('maps owner/name to <models dir>/<owner>--<name>', () => {
    expect(modelDirFor('sentence-transformers/all-MiniLM-L6-v2', { MEMORY_AGENTS_MODELS_DIR: '/m' })).toBe('/m/sentence-transformers--all-MiniLM-L6-v2');
    expect(modelDirFor('BAAI/bge-small-en-v1.5', { MEMORY_AGENTS_MODELS_DIR: '/m' })).toBe('/m/BAAI--bge-small-en-v1.5');
  });

  it('refuses anything but owner/name, and any ".."', () => {
    for (const name of ['a', 'a/b/c', '../a', 'a/..', 'a/b..c', '.a/b', 'a/_b', '/a/b', 'a\\b/c', 'a/b ', '']) {
      expect(isModelName(name), name).toBe(false);
      expect(() => modelDirFor(name, {}), name).toThrow('is not a model name of the form owner/name');
    }
    expect(isModelName('a_b.c-d/E9._-x')).toBe(true);
  });
});

describe('resolveModel and listModels', () => {
  let root: string;
  let env: Record<string, string>;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'ma-cache-'));
    env = { MEMORY_AGENTS_MODELS_DIR: join(root, 'models') };
  });
  afterEach(() => rm(root, { recursive: true, force: true }));

  const pulled = async (name: string, files: Record<string, string>) => {
    const dir = modelDirFor(name, env);
    for (const [path, text] of Object.entries(files)) {
      await mkdir(join(dir, path, '..'), { recursive: true });
      await writeFile(join(dir, path), text);
    }
    const manifest: ModelManifest = { name, revision: 'main', commit: null, onnx: 'onnx/model.onnx', files: Object.entries(files).map(([path, text]) => ({ path, size: text.length, sha256: 'x' })), pulledAt: '2025-01-01T00:00:00.000Z' };
    await writeFile(join(dir, MANIFEST), JSON.stringify(manifest));
    return dir;
  };

  it('returns a directory path (absolute), and a hub id’s cache dir once its pull has finished', async () => {
    expect(resolveModel(root, env)).toBe(root);
    expect(() => resolveModel('./no/such/dir', env)).toThrow(`The model directory ${resolve('./no/such/dir')} does not exist.`);
    expect(() => resolveModel('acme/embed', env)).toThrow(`The model acme/embed is not in ${join(root, 'models')}; run: memory-agents models pull acme/embed`);

    const dir = await pulled('acme/embed', { 'config.json': '{}', 'onnx/model.onnx': 'onnx' });
    expect(resolveModel('acme/embed', env)).toBe(dir);
    // A file gone or truncated since the pull: not complete any more.
    await writeFile(join(dir, 'onnx/model.onnx'), 'on');
    expect(() => resolveModel('acme/embed', env)).toThrow('run: memory-agents models pull acme/embed');
  });

  it('lists finished pulls with their size, and unfinished ones by name', async () => {
    expect(await listModels(env)).toEqual([]);
    await pulled('acme/embed', { 'config.json': '{}', 'onnx/model.onnx': 'onnx' });
    await mkdir(join(env.MEMORY_AGENTS_MODELS_DIR!, 'acme--half'), { recursive: true });
    expect(await listModels(env)).toEqual([
      { dir: modelDirFor('acme/embed', env), complete: true, size: 6, manifest: expect.objectContaining({ name: 'acme/embed', onnx: 'onnx/model.onnx' }) },
      { dir: modelDirFor('acme/half', env), complete: false, name: 'acme/half' },
    ]);
  });
});
