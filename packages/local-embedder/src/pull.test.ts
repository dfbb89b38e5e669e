import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { gitBlobSha1, sha256, startFakeHub, type FakeHub, type FakeHubFile } from './__fixtures__/fake-hub.js';
import { modelDirFor, resolveModel, type ModelManifest } from './model-cache.js';
import { MANIFEST } from './model-files.js';
import { isPullError, pullModel, type PullError, type PullModelOptions } from './pull.js';

const NAME = 'acme/mini-embed';
const COMMIT = '0123456789abcdef0123456789abcdef01234567';
const ONNX = randomBytes(400_000);

/** A small sentence-transformers repository: two git files, two LFS files, two optional files missing. */
function repoFiles(): Record<string, FakeHubFile> {
  return {
    'config.json': { content: Buffer.from('{"model_type":"bert","hidden_size":8}\n') },
    'tokenizer.json': { content: Buffer.from(`{"version":"1.0","padding":null,"filler":"${'x'.repeat(5_000)}"}`), lfs: true },
    'onnx/model.onnx': { content: ONNX, lfs: true },
    'modules.json': { content: Buffer.from('[{"idx":0,"type":"sentence_transformers.models.Transformer"}]') },
    'sentence_bert_config.json': { content: Buffer.from('{"max_seq_length":256}') },
    '1_Pooling/config.json': { content: Buffer.from('{"pooling_mode_mean_tokens":true}') },
  };
}

let hub: FakeHub;
let cache: string;
let env: Record<string, string | undefined>;

beforeEach(async () => {
  cache = await mkdtemp(join(tmpdir(), 'ma-pull-'));
  env = { MEMORY_AGENTS_MODELS_DIR: cache };
  hub = await startFakeHub({
    repos: { [NAME]: { commit: COMMIT, files: repoFiles() }, 'acme/gated': { commit: COMMIT, files: repoFiles(), gated: true } },
    token: 'hf_secret',
    renamed: { 'acme/old-name': NAME },
  });
});

afterEach(async () => {
  await hub.close();
  await rm(cache, { recursive: true, force: true });
});

const pull = (options: Partial<PullModelOptions> = {}) => pullModel({ name: NAME, endpoint: hub.url, env, ...options });
const dir = () => modelDirFor(NAME, env);
const failure = async (promise: Promise<unknown>): Promise<PullError> => {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  if (!isPullError(error)) throw new Error(`expected a PullError, got ${String(error)}`);
  return error;
};
const filesUnder = async (root: string): Promise<string[]> => ((await readdir(root, { recursive: true, withFileTypes: true }).catch(() => [])) as { isFile(): boolean; name: string; parentPath: string }[]).filter((entry) => entry.isFile()).map((entry) => join(entry.parentPath, entry.name).slice(root.length + 1)).sort();

describe('pullModel', () => {
  it('pulls the required and present optional files into <models dir>/<owner>--<name> and writes the manifest last', async () => {
    const progress: { file: string; received: number; total: number | null }[] = [];
    const result = await pull({ onProgress: (item) => progress.push(item) });

    expect(result.dir).toBe(join(cache, 'acme--mini-embed'));
    expect(result).toMatchObject({ commit: COMMIT, upToDate: false });
    const files = repoFiles();
    for (const [path, file] of Object.entries(files)) expect((await readFile(join(result.dir, path))).equals(file.content), path).toBe(true);
    expect(await filesUnder(result.dir)).toEqual([...Object.keys(files), MANIFEST].sort());

    const manifest = JSON.parse(await readFile(join(result.dir, MANIFEST), 'utf8')) as ModelManifest;
    expect(manifest).toEqual({
      name: NAME,
      revision: 'main',
      commit: COMMIT,
      onnx: 'onnx/model.onnx',
      files: ['config.json', 'tokenizer.json', 'onnx/model.onnx', 'modules.json', 'sentence_bert_config.json', '1_Pooling/config.json'].map((path) => ({ path, size: files[path]!.content.length, sha256: sha256(files[path]!.content) })),
      pulledAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    expect(result.files).toEqual(manifest.files);
    expect(resolveModel(NAME, env)).toBe(result.dir);

    // Every file was asked for at the commit the revision pointed at, once; the token is not sent unasked.
    expect(hub.requests[0]).toMatchObject({ method: 'HEAD', path: `/${NAME}/resolve/main/config.json` });
    expect(hub.requests.slice(1).filter((request) => !request.path.startsWith('/cdn/')).every((request) => request.path.startsWith(`/${NAME}/resolve/${COMMIT}/`))).toBe(true);
    expect(hub.contentRequests('onnx/model.onnx')).toHaveLength(1);
    expect(hub.requests.every((request) => request.authorization === null)).toBe(true);
    // The last report of a file says it is whole.
    expect(progress.filter((item) => item.file === 'onnx/model.onnx').at(-1)).toEqual({ file: 'onnx/model.onnx', received: ONNX.length, total: ONNX.length });
  });

  it('resumes a download cut half-way with a Range request, without fetching the received bytes again', async () => {
    hub.cutNext('onnx/model.onnx', 150_000);
    const cut = await failure(pull());
    expect(cut.code).toBe('network_error');
    expect(cut.message).toMatch(/^the download of onnx\/model\.onnx from http:\/\/127\.0\.0\.1:\d+ stopped after \d+ of 400000 bytes; run the pull again to resume it/);
    expect(existsSync(join(dir(), MANIFEST))).toBe(false);
    const kept = (await stat(join(dir(), 'onnx/model.onnx.incomplete'))).size;
    expect(kept).toBeGreaterThan(0);
    expect(() => resolveModel(NAME, env)).toThrow(`run: memory-agents models pull ${NAME}`);

    const result = await pull();
    const [first, second] = hub.contentRequests('onnx/model.onnx');
    expect(first).toMatchObject({ range: null, bytes: 150_000 });
    expect(second).toMatchObject({ range: `bytes=${kept}-`, status: 206, bytes: ONNX.length - kept });
    expect(sha256(await readFile(join(result.dir, 'onnx/model.onnx')))).toBe(sha256(ONNX));
    expect(existsSync(join(result.dir, 'onnx/model.onnx.incomplete'))).toBe(false);
    expect(existsSync(join(result.dir, MANIFEST))).toBe(true);
  });

  it('keeps what arrived when the pull is aborted (a kill), and the next pull resumes from there', async () => {
    const controller = new AbortController();
    const stopped = await pull({ signal: controller.signal, onProgress: ({ file, received }) => file === 'onnx/model.onnx' && received > 100_000 && controller.abort() }).catch((error: unknown) => error);
    expect((stopped as Error).name).toBe('AbortError');
    const kept = (await stat(join(dir(), 'onnx/model.onnx.incomplete'))).size;
    expect(kept).toBeGreaterThan(100_000);
    expect(kept).toBeLessThan(ONNX.length);

    await pull();
    const resumed = hub.contentRequests('onnx/model.onnx').at(-1)!;
    expect(resumed).toMatchObject({ range: `bytes=${kept}-`, bytes: ONNX.length - kept });
    expect((await readFile(join(dir(), 'onnx/model.onnx'))).equals(ONNX)).toBe(true);
  });

  it('stops at once when aborted while the hub sends nothing more, keeping the bytes that arrived', async () => {
    hub.stallNext('onnx/model.onnx', 120_000);
    const controller = new AbortController();
    const started = pull({ signal: controller.signal, onProgress: ({ file, received }) => file === 'onnx/model.onnx' && received === 120_000 && setTimeout(() => controller.abort(), 50) });
    const stopped = await started.catch((error: unknown) => error);
    expect((stopped as Error).name).toBe('AbortError');
    expect((await stat(join(dir(), 'onnx/model.onnx.incomplete'))).size).toBe(120_000);
    expect(existsSync(join(dir(), MANIFEST))).toBe(false);
  });

  it('does not download again a file a stopped pull had already finished, nor a whole partial file', async () => {
    // The pull stops after the ONNX file is in place, at a later (git) file.
    hub.cutNext('sentence_bert_config.json', 5);
    expect((await failure(pull())).code).toBe('network_error');
    expect((await readFile(join(dir(), 'onnx/model.onnx'))).equals(ONNX)).toBe(true);
    await pull();
    expect(hub.contentRequests('onnx/model.onnx')).toHaveLength(1);

    // A partial file that is already whole: the server refuses its Range (416) and it is checked and kept.
    await rm(join(dir(), MANIFEST));
    await writeFile(join(dir(), 'tokenizer.json.incomplete'), repoFiles()['tokenizer.json']!.content);
    await rm(join(dir(), 'tokenizer.json'));
    await pull();
    expect(hub.requests.filter((request) => request.file === 'tokenizer.json' && request.status === 416)).toEqual([expect.objectContaining({ range: `bytes=${repoFiles()['tokenizer.json']!.content.length}-` })]);
    expect(hub.contentRequests('tokenizer.json')).toHaveLength(1);
    expect(existsSync(join(dir(), 'tokenizer.json'))).toBe(true);
  });

  it('refuses a file whose bytes do not match the hub’s checksum, deleting it and writing no manifest', async () => {
    hub.corrupt.add('onnx/model.onnx');
    const lfs = await failure(pull());
    expect(lfs.code).toBe('checksum_mismatch');
    expect(lfs.message).toContain('onnx/model.onnx');
    expect(lfs.message).toContain(`expected sha256 ${sha256(ONNX)}, got `);
    expect(lfs.message).toMatch(/got [0-9a-f]{64}; the download was deleted, run the pull again/);
    expect(existsSync(join(dir(), 'onnx/model.onnx'))).toBe(false);
    expect(existsSync(join(dir(), 'onnx/model.onnx.incomplete'))).toBe(false);
    expect(existsSync(join(dir(), MANIFEST))).toBe(false);

    // A git file is checked against its blob sha1 (the ETag).
    hub.corrupt.clear();
    hub.corrupt.add('config.json');
    env = { MEMORY_AGENTS_MODELS_DIR: join(cache, 'second') };
    const git = await failure(pull());
    expect(git.code).toBe('checksum_mismatch');
    expect(git.message).toContain(`config.json of ${NAME} failed its check: expected git blob sha1 ${gitBlobSha1(repoFiles()['config.json']!.content)}, got `);
    expect(await filesUnder(dir())).toEqual([]);
  });

  it('names a missing required file (404), and skips missing optional ones', async () => {
    delete hub.repos[NAME]!.files['tokenizer.json'];
    const missing = await failure(pull());
    expect(missing.code).toBe('not_found');
    expect(missing.message).toMatch(new RegExp(`^${NAME} on http://127\\.0\\.0\\.1:\\d+ has no file tokenizer\\.json at revision main \\(HTTP 404\\)`));
    expect(existsSync(join(dir(), MANIFEST))).toBe(false);

    const onnx = await failure(pull({ file: 'onnx/model_quantized.onnx' }));
    expect(onnx.message).toContain('no file tokenizer.json');
    hub.repos[NAME]!.files['tokenizer.json'] = repoFiles()['tokenizer.json']!;
    const quantized = await failure(pull({ file: 'onnx/model_quantized.onnx' }));
    expect(quantized.message).toContain('has no file onnx/model_quantized.onnx');
    expect(quantized.message).toContain('pass that path as the ONNX file (--file)');

    const unknown = await failure(pull({ revision: 'v9' }));
    expect(unknown.message).toMatch(/has no revision "v9" \(HTTP 404\)$/);
  });

  it('says to set HF_TOKEN for a gated model (401), and sends the token as a bearer when given', async () => {
    const refused = await failure(pull({ name: 'acme/gated' }));
    expect(refused.code).toBe('unauthorized');
    expect(refused.message).toMatch(/^acme\/gated on http:\/\/127\.0\.0\.1:\d+ refused access \(HTTP 401\): the model is gated or private, or does not exist; set HF_TOKEN to a Hugging Face access token/);
    expect(existsSync(modelDirFor('acme/gated', env))).toBe(false);

    const wrong = await failure(pull({ name: 'acme/gated', token: 'hf_wrong' }));
    expect(wrong.message).toContain('refused access with the token given (HTTP 401): check that HF_TOKEN can read this model');

    const result = await pull({ name: 'acme/gated', env: { ...env, HF_TOKEN: 'hf_secret' } });
    expect(result.files).toHaveLength(6);
    expect(hub.requests.filter((request) => request.authorization === 'Bearer hf_secret').length).toBeGreaterThan(6);
  });

  it('does nothing when the cache holds the commit the revision points at, unless forced', async () => {
    await pull();
    const before = hub.requests.length;
    const again = await pull();
    expect(again).toMatchObject({ upToDate: true, commit: COMMIT, dir: dir() });
    expect(hub.requests.slice(before)).toEqual([expect.objectContaining({ method: 'HEAD', path: `/${NAME}/resolve/main/config.json` })]);
    // Pinned to a commit id, which names fixed content: once cached, no request at all. (The first
    // pinned pull finds the LFS files in place by their checksum and downloads only the git files.)
    expect((await pull({ revision: COMMIT })).upToDate).toBe(false);
    expect(hub.contentRequests('onnx/model.onnx')).toHaveLength(1);
    const pinned = hub.requests.length;
    expect((await pull({ revision: COMMIT })).upToDate).toBe(true);
    expect(hub.requests.length).toBe(pinned);
  });

  it('fetches everything again when the branch moved to a new commit, or when forced', async () => {
    await pull();
    const newer = 'fedcba9876543210fedcba9876543210fedcba98';
    hub.repos[NAME]!.commit = newer;
    hub.repos[NAME]!.files['config.json'] = { content: Buffer.from('{"model_type":"bert","hidden_size":16}\n') };
    const updated = await pull();
    expect(updated).toMatchObject({ upToDate: false, commit: newer });
    expect(await readFile(join(dir(), 'config.json'), 'utf8')).toContain('"hidden_size":16');
    expect(hub.contentRequests('onnx/model.onnx')).toHaveLength(1);
    const forced = await pull({ force: true });
    expect(forced.upToDate).toBe(false);
    expect(hub.contentRequests('config.json')).toHaveLength(3);
  });

  it('refuses a bad model name, ONNX path, revision or endpoint before any request', async () => {
    for (const name of ['mini-embed', 'acme/mini/embed', '../acme', 'acme/..', 'acme/a..b', '/etc/passwd', 'acme/.hidden', 'ac me/x', '']) {
      const error = await failure(pull({ name }));
      expect(error.code, name).toBe('invalid_request');
      expect(error.message, name).toContain('is not a Hugging Face model id: expected owner/name');
    }
    for (const file of ['../model.onnx', '/model.onnx', 'onnx//model.onnx', 'onnx/./model.onnx', '']) {
      expect((await failure(pull({ file }))).message, file).toContain('the ONNX file must be a relative path in the repository');
    }
    expect((await failure(pull({ revision: ' ' }))).code).toBe('invalid_request');
    expect((await failure(pull({ endpoint: 'ftp://mirror' }))).message).toContain('the hub endpoint (HF_ENDPOINT) must be an http(s) URL');
    expect(hub.requests).toEqual([]);
    expect(await readdir(cache)).toEqual([]);
  });

  it('says which endpoint it could not reach and that HF_ENDPOINT can name a mirror', async () => {
    const closed = await startFakeHub({ repos: {} });
    await closed.close();
    const error = await failure(pull({ endpoint: undefined, env: { ...env, HF_ENDPOINT: closed.url } }));
    expect(error.code).toBe('network_error');
    expect(error.message).toBe(`could not reach ${closed.url} (ECONNREFUSED); check the network, or set HF_ENDPOINT to a mirror of the Hugging Face hub`);
    expect(existsSync(dir())).toBe(false);
  });

  it('follows the hub’s own redirect of a renamed repository', async () => {
    const result = await pull({ name: 'acme/old-name' });
    expect(result.dir).toBe(modelDirFor('acme/old-name', env));
    expect((await readFile(join(result.dir, 'onnx/model.onnx'))).equals(ONNX)).toBe(true);
    expect(hub.requests[0]).toMatchObject({ method: 'HEAD', path: '/acme/old-name/resolve/main/config.json', status: 307 });
  });
});
