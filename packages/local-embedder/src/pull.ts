import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, open, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { hasManifestFiles, isModelName, modelDirFor, readModelManifest, type ModelFile, type ModelManifest } from './model-cache.js';
import { MANIFEST } from './model-files.js';
import { chunksOf, discard } from './response-body.js';

// Downloads a sentence-transformers model exported to ONNX from the Hugging Face hub (or a mirror
// with the same layout) into the model cache. The hub serves each file at
// `{endpoint}/{repo}/resolve/{revision}/{path}`: a small (git) file directly, with its git blob sha1
// as ETag; a large (LFS) file as a redirect to a CDN, the redirect carrying the content's sha256
// (X-Linked-Etag) and size (X-Linked-Size). Both kinds are checked before a file is kept.

/** The hub used when neither `endpoint` nor `HF_ENDPOINT` says otherwise. */
export const DEFAULT_HUB_ENDPOINT = 'https://huggingface.co';

/** The ONNX file pulled when `file` is not given: where sentence-transformers' ONNX export puts it. */
export const DEFAULT_ONNX_FILE = 'onnx/model.onnx';

/** Files a model cannot be loaded without (the ONNX file is added to them). */
const REQUIRED_FILES = ['config.json', 'tokenizer.json'];

/** Files pulled when the repository has them; a 404 skips them. */
const OPTIONAL_FILES = ['tokenizer_config.json', 'special_tokens_map.json', 'modules.json', 'sentence_bert_config.json', '1_Pooling/config.json'];

/** How far the download of one file is: a last call has `received === total` when it is complete. */
export type PullProgress = { file: string; received: number; total: number | null };

/** What {@link pullModel} pulls, from where, and how it reports. */
export type PullModelOptions = {
  /** The hub repository id, `owner/name`, like `sentence-transformers/all-MiniLM-L6-v2`. */
  name: string;
  /**
   * The hub (or a mirror with the hub's layout).
   * @default process.env.HF_ENDPOINT, else 'https://huggingface.co'
   */
  endpoint?: string;
  /**
   * The branch, tag or commit to pull.
   * @default 'main'
   */
  revision?: string;
  /**
   * The ONNX file's path in the repository.
   * @default 'onnx/model.onnx'
   */
  file?: string;
  /** Download again even when the cache already holds this revision's commit. */
  force?: boolean;
  /**
   * The environment read for HF_ENDPOINT, HF_TOKEN and the models dir.
   * @default process.env
   */
  env?: NodeJS.ProcessEnv;
  /**
   * The fetch used for every request.
   * @default globalThis.fetch
   */
  fetch?: typeof fetch;
  /** Stops the pull; what was received is kept and a later pull resumes it. */
  signal?: AbortSignal;
  /** Called as each file arrives (often: once per chunk received). */
  onProgress?: (progress: PullProgress) => void;
  /**
   * A Hugging Face access token, sent as `Authorization: Bearer` to the hub (never to the CDN), for
   * gated and private models.
   * @default process.env.HF_TOKEN
   */
  token?: string;
};

/** What {@link pullModel} leaves: the model's directory and its files. */
export type PullModelResult = {
  /** The model's directory in the cache (holds `memory-agents-model.json`). */
  dir: string;
  /** The files pulled, as the manifest lists them. */
  files: ModelFile[];
  /** The commit pulled, or null when the hub did not say. */
  commit: string | null;
  /** True when the cache already held this commit and nothing was downloaded. */
  upToDate: boolean;
};

/** Why a pull failed, as a stable code beside the sentence. */
export type PullErrorCode = 'invalid_request' | 'unauthorized' | 'not_found' | 'checksum_mismatch' | 'network_error' | 'hub_error';

/** A pull that failed: one sentence saying what went wrong and what to do, and a stable `code`. */
export class PullError extends Error {
  constructor(
    readonly code: PullErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'PullError';
  }
}

/** Whether `error` is a {@link PullError}. */
export function isPullError(error: unknown): error is PullError {
  return error instanceof Error && error.name === 'PullError' && typeof (error as PullError).code === 'string';
}

/**
 * Pulls a model from the Hugging Face hub into the model cache (`modelDirFor(name)`): its
 * `config.json`, `tokenizer.json` and ONNX file, and the sentence-transformers files it has
 * (`tokenizer_config.json`, `special_tokens_map.json`, `modules.json`, `sentence_bert_config.json`,
 * `1_Pooling/config.json`). Every file is downloaded into `<path>.incomplete`, resumed with a Range
 * request when a previous pull was cut, checked (sha256 for LFS files, the git blob sha1 for the
 * others) and then renamed into place. `memory-agents-model.json` is written last, so a directory
 * with a manifest always holds a whole model; a pull of the commit already there downloads nothing.
 * @throws PullError with a one-sentence message: a bad name, a refusal (401/403: set HF_TOKEN), a
 * missing required file, a checksum mismatch or an unreachable hub (HF_ENDPOINT can name a mirror)
 * @example
 * const { dir } = await pullModel({ name: 'sentence-transformers/all-MiniLM-L6-v2' });
 */
export async function pullModel(options: PullModelOptions): Promise<PullModelResult> {
  const env = options.env ?? process.env;
  if (!isModelName(options.name)) {
    throw new PullError('invalid_request', `"${options.name}" is not a Hugging Face model id: expected owner/name (letters, digits, ".", "_" and "-"), like sentence-transformers/all-MiniLM-L6-v2`);
  }
  const onnx = repositoryPath(options.file ?? DEFAULT_ONNX_FILE);
  const revision = (options.revision ?? 'main').trim();
  if (revision === '' || /[\s\0]/.test(revision)) throw new PullError('invalid_request', `the revision must be a branch, tag or commit, not "${options.revision}"`);
  const hub: Hub = {
    endpoint: hubEndpoint(options.endpoint ?? (env.HF_ENDPOINT?.trim() || DEFAULT_HUB_ENDPOINT)),
    name: options.name,
    revision,
    askedRevision: revision,
    token: options.token ?? (env.HF_TOKEN?.trim() || undefined),
    fetch: options.fetch ?? globalThis.fetch,
    signal: options.signal,
  };
  const dir = modelDirFor(options.name, env);

  const previous = options.force ? null : await readModelManifest(dir);
  const isSame = async (commit: string | null) => previous !== null && previous.revision === revision && previous.commit === commit && previous.onnx === onnx && (await hasManifestFiles(dir, previous));
  // A commit id names fixed content: when the cache holds it, the hub need not be asked.
  if (/^[0-9a-f]{40}$/.test(revision) && (await isSame(revision))) return { dir, files: previous!.files, commit: revision, upToDate: true };
  const commit = await resolveCommit(hub);
  if (await isSame(commit)) return { dir, files: previous!.files, commit, upToDate: true };

  // From here on the directory is being changed: it must not look complete until it is again.
  await rm(join(dir, MANIFEST), { force: true });
  await mkdir(dir, { recursive: true });
  // Every file comes from the same commit, even if the branch moves during the pull.
  const pinned = { ...hub, revision: commit ?? revision };
  const files: ModelFile[] = [];
  const wanted = [...new Set([...REQUIRED_FILES, onnx])].map((path) => ({ path, required: true }));
  const extra = OPTIONAL_FILES.filter((path) => !wanted.some((file) => file.path === path)).map((path) => ({ path, required: false }));
  for (const { path, required } of [...wanted, ...extra]) {
    const pulled = await pullFile(pinned, dir, path, required, options.onProgress);
    if (pulled !== null) files.push(pulled);
  }
  const manifest: ModelManifest = { name: options.name, revision, commit, onnx, files, pulledAt: new Date().toISOString() };
  const temporary = join(dir, `${MANIFEST}.${process.pid}.tmp`);
  await writeFile(temporary, `${JSON.stringify(manifest, null, 2)}\n`);
  await rename(temporary, join(dir, MANIFEST));
  return { dir, files, commit, upToDate: false };
}

/** The repository a pull talks to, and how. */
type Hub = {
  endpoint: URL;
  name: string;
  /** The revision in the URLs: the commit once known. */
  revision: string;
  /** The revision the caller asked for, as messages name it. */
  askedRevision: string;
  token: string | undefined;
  fetch: typeof fetch;
  signal: AbortSignal | undefined;
};

/** What the hub said a file must be, before its bytes arrive. */
type Expected = { size?: number; sha256?: string; gitSha1?: string };

/** Asks for config.json's headers (HEAD): the commit the revision points at, and whether the repository can be read. */
async function resolveCommit(hub: Hub): Promise<string | null> {
  const { response } = await requestHubFile(hub, 'config.json', 'HEAD', undefined);
  discard(response);
  throwOnRefusal(hub, response, 'config.json', true);
  return response.headers.get('x-repo-commit')?.trim() || null;
}

/** Downloads one file into place (or finds it there already); null when an optional file is not in the repository. */
async function pullFile(hub: Hub, dir: string, path: string, required: boolean, onProgress: PullModelOptions['onProgress']): Promise<ModelFile | null> {
  const target = join(dir, path);
  const partial = `${target}.incomplete`;
  await mkdir(dirname(target), { recursive: true });
  let expected: Expected = {};
  // One restart at most: when the server refuses the Range of a partial file that is not a prefix of this file.
  for (let attempt = 0; ; attempt++) {
    const offset = (await stat(partial).catch(() => null))?.size ?? 0;
    const { response: first, location } = await requestHubFile(hub, path, 'GET', offset);
    if (first.status === 404 && !required) {
      discard(first);
      // A file an older commit had, and this one has not, must not stay beside the new files.
      await Promise.all([rm(target, { force: true }), rm(partial, { force: true })]);
      return null;
    }
    throwOnRefusal(hub, first, path, required);
    expected = expectedOf(first);
    let content = first;
    if (location !== undefined) {
      discard(first);
      // A finished file from a pull that stopped before its manifest: no need to download it again.
      const kept = expected.sha256 === undefined ? null : await digestOf(target).catch(() => null);
      if (kept !== null && kept.size === expected.size && kept.sha256 === expected.sha256) {
        await rm(partial, { force: true });
        onProgress?.({ file: path, received: kept.size, total: kept.size });
        return { path, size: kept.size, sha256: kept.sha256 };
      }
      content = await request(hub, location, { method: 'GET', redirect: 'follow', headers: headers(hub, location, offset) });
      if (content.status >= 400 && content.status !== 416) {
        discard(content);
        throw new PullError('hub_error', `the download of ${path} from ${location.origin} (where ${hub.endpoint.origin} sent it) failed with HTTP ${content.status}; run the pull again`);
      }
    }
    const outcome = await receive(hub, content, partial, offset, expected, path, onProgress);
    if (outcome === 'done') break;
    if (attempt > 0) throw new PullError('hub_error', `${hub.endpoint.origin} did not serve ${path} of ${hub.name} from its start after a refused resume; run the pull again`);
  }
  const digest = await digestOf(partial);
  const mismatch = checksumMismatch(digest, expected);
  if (mismatch !== null) {
    await rm(partial, { force: true });
    throw new PullError('checksum_mismatch', `${path} of ${hub.name} failed its check: expected ${mismatch.what} ${mismatch.expected}, got ${mismatch.actual}; the download was deleted, run the pull again (a mirror serving altered files fails the same way)`);
  }
  await rename(partial, target);
  onProgress?.({ file: path, received: digest.size, total: digest.size });
  return { path, size: digest.size, sha256: digest.sha256 };
}

/**
 * Writes a response's body into the partial file: appended after `offset` on a 206 that starts
 * there, from the start on a 200. 'restart' when the partial file cannot be continued (it is deleted).
 */
async function receive(hub: Hub, response: Response, partial: string, offset: number, expected: Expected, path: string, onProgress: PullModelOptions['onProgress']): Promise<'done' | 'restart'> {
  if (response.status === 416) {
    discard(response);
    // The partial file may already be whole (a pull stopped between the last byte and the rename).
    if (offset > 0 && offset === (contentRange(response)?.total ?? expected.size)) return 'done';
    await rm(partial, { force: true });
    return 'restart';
  }
  const range = response.status === 206 ? contentRange(response) : null;
  if (response.status === 206 && range?.start !== offset) {
    discard(response);
    await rm(partial, { force: true });
    return 'restart';
  }
  const append = response.status === 206;
  const length = Number(response.headers.get('content-length') ?? NaN);
  const total = (append ? range?.total : undefined) ?? expected.size ?? (Number.isFinite(length) ? length : null);
  let received = append ? offset : 0;
  onProgress?.({ file: path, received, total });
  // Each chunk is written before the next is read, so after a cut or an abort the partial file
  // holds exactly what was received, and the next pull resumes right after it.
  const output = await open(partial, append ? 'a' : 'w');
  try {
    if (response.body !== null) {
      for await (const chunk of chunksOf(response.body, hub.signal)) {
        await output.write(chunk);
        received += chunk.length;
        onProgress?.({ file: path, received, total });
      }
    }
  } catch (error) {
    if (hub.signal?.aborted) throw error;
    throw cutError(hub, path, received, total, error);
  } finally {
    await output.close();
  }
  if (total !== null && received < total) throw cutError(hub, path, received, total, undefined);
  return 'done';
}

function cutError(hub: Hub, path: string, received: number, total: number | null, cause: unknown): PullError {
  return new PullError(
    'network_error',
    `the download of ${path} from ${hub.endpoint.origin} stopped after ${received} of ${total ?? 'an unknown number of'} bytes; run the pull again to resume it from there (or set HF_ENDPOINT to a mirror)`,
    { cause },
  );
}

/**
 * GETs or HEADs `{endpoint}/{name}/resolve/{revision}/{path}`, following the hub's own redirects
 * (a renamed repository) but not the one to the content: a redirect that leaves the hub, or
 * carries X-Linked-Etag, is returned with its `location`, so its checksum headers can be read.
 */
async function requestHubFile(hub: Hub, path: string, method: 'GET' | 'HEAD', offset: number | undefined): Promise<{ response: Response; location?: URL }> {
  const encodedPath = path.split('/').map(encodeURIComponent).join('/');
  let url = new URL(`${hub.endpoint.pathname.replace(/\/$/, '')}/${hub.name}/resolve/${encodeURIComponent(hub.revision)}/${encodedPath}`, hub.endpoint);
  for (let hop = 0; hop < 5; hop++) {
    const response = await request(hub, url, { method, redirect: 'manual', headers: headers(hub, url, offset) });
    if (response.status < 300 || response.status > 399) return { response };
    const target = response.headers.get('location');
    if (target === null) throw new PullError('hub_error', `${hub.endpoint.origin} answered ${path} of ${hub.name} with a redirect (HTTP ${response.status}) but no Location`);
    const next = new URL(target, url);
    if (next.origin !== hub.endpoint.origin || response.headers.has('x-linked-etag')) return { response, location: next };
    discard(response);
    url = next;
  }
  throw new PullError('hub_error', `${hub.endpoint.origin} redirected ${path} of ${hub.name} more than 5 times`);
}

/** The request headers: the token only for the hub itself, and no compression (Range counts raw bytes). */
function headers(hub: Hub, url: URL, offset: number | undefined): Record<string, string> {
  return {
    'accept-encoding': 'identity',
    'user-agent': 'memory-agents-local-embedder',
    ...(hub.token !== undefined && url.origin === hub.endpoint.origin ? { authorization: `Bearer ${hub.token}` } : {}),
    ...(offset !== undefined && offset > 0 ? { range: `bytes=${offset}-` } : {}),
  };
}

/** fetch, with a failure to connect said as one sentence naming the endpoint. */
async function request(hub: Hub, url: URL, init: RequestInit): Promise<Response> {
  try {
    return await hub.fetch(url, { ...init, ...(hub.signal ? { signal: hub.signal } : {}) });
  } catch (error) {
    if (hub.signal?.aborted) throw error;
    // fetch says "fetch failed"; the reason (ECONNREFUSED, ENOTFOUND, a TLS error) is its cause.
    const cause: { code?: unknown; message?: unknown } | undefined = error instanceof Error ? ((error.cause as { code?: unknown; message?: unknown } | undefined) ?? error) : undefined;
    const reason = typeof cause?.code === 'string' ? cause.code : typeof cause?.message === 'string' ? cause.message : String(error);
    const where = url.origin === hub.endpoint.origin ? hub.endpoint.origin : `${url.origin} (where ${hub.endpoint.origin} sent the download)`;
    throw new PullError('network_error', `could not reach ${where} (${reason}); check the network, or set HF_ENDPOINT to a mirror of the Hugging Face hub`, { cause: error });
  }
}

/** Throws the PullError a refusal or failure status means; returns on 2xx, 3xx and 416. */
function throwOnRefusal(hub: Hub, response: Response, path: string, required: boolean): void {
  const { status } = response;
  if (status < 400 || status === 416) return;
  discard(response);
  const where = `${hub.name} on ${hub.endpoint.origin}`;
  if (status === 401 || status === 403) {
    throw new PullError(
      'unauthorized',
      hub.token === undefined
        ? `${where} refused access (HTTP ${status}): the model is gated or private, or does not exist; set HF_TOKEN to a Hugging Face access token that can read it (for a gated model, accept its terms on its page first)`
        : `${where} refused access with the token given (HTTP ${status}): check that HF_TOKEN can read this model (for a gated model, accept its terms on its page first)`,
    );
  }
  if (status === 404 && required) {
    const code = response.headers.get('x-error-code');
    if (code === 'RepoNotFound') throw new PullError('not_found', `there is no model ${where} (HTTP 404)`);
    if (code === 'RevisionNotFound') throw new PullError('not_found', `${where} has no revision "${hub.askedRevision}" (HTTP 404)`);
    const hint = /\.onnx$/.test(path) ? '; if the repository keeps its ONNX export elsewhere, pass that path as the ONNX file (--file)' : '; is it a sentence-transformers model?';
    throw new PullError('not_found', `${where} has no file ${path} at revision ${hub.askedRevision} (HTTP 404)${hint}`);
  }
  throw new PullError('hub_error', `${hub.endpoint.origin} answered HTTP ${status} for ${path} of ${hub.name}; try again later, or set HF_ENDPOINT to a mirror`);
}

/** The checks the first response promises: X-Linked-Etag/X-Linked-Size for LFS files, ETag and the length for the others. */
function expectedOf(response: Response): Expected {
  const linked = normalizeEtag(response.headers.get('x-linked-etag'));
  const etag = linked ?? normalizeEtag(response.headers.get('etag'));
  const isRedirect = response.status >= 300 && response.status <= 399;
  const linkedSize = Number(response.headers.get('x-linked-size') ?? NaN);
  const length = response.status === 200 ? Number(response.headers.get('content-length') ?? NaN) : (contentRange(response)?.total ?? NaN);
  const size = isRedirect ? linkedSize : length;
  return {
    ...(Number.isSafeInteger(size) && size >= 0 ? { size } : {}),
    ...(etag !== null && /^[0-9a-f]{64}$/.test(etag) ? { sha256: etag } : {}),
    ...(etag !== null && /^[0-9a-f]{40}$/.test(etag) ? { gitSha1: etag } : {}),
  };
}

/** An ETag's value without `W/` and quotes, lowercased; null when absent. */
function normalizeEtag(value: string | null): string | null {
  if (value === null) return null;
  return value.trim().replace(/^W\//, '').replace(/^"|"$/g, '').toLowerCase();
}

/** `Content-Range: bytes START-END/TOTAL` (or `bytes * /TOTAL`), parsed. */
function contentRange(response: Response): { start: number | undefined; total: number | undefined } | null {
  const found = /^bytes (?:(\d+)-\d+|\*)\/(\d+|\*)$/.exec(response.headers.get('content-range')?.trim() ?? '');
  if (found === null) return null;
  return { start: found[1] === undefined ? undefined : Number(found[1]), total: found[2] === '*' ? undefined : Number(found[2]) };
}

/** A file's size, sha256 and git blob sha1 (sha1 of `blob <size>\0` + content), read once. */
async function digestOf(file: string): Promise<{ size: number; sha256: string; gitSha1: string }> {
  const { size } = await stat(file);
  const sha256 = createHash('sha256');
  const gitSha1 = createHash('sha1').update(`blob ${size}\0`);
  for await (const chunk of createReadStream(file)) {
    sha256.update(chunk as Buffer);
    gitSha1.update(chunk as Buffer);
  }
  return { size, sha256: sha256.digest('hex'), gitSha1: gitSha1.digest('hex') };
}

function checksumMismatch(digest: { size: number; sha256: string; gitSha1: string }, expected: Expected): { what: string; expected: string; actual: string } | null {
  if (expected.size !== undefined && digest.size !== expected.size) return { what: 'size', expected: `${expected.size} bytes`, actual: `${digest.size} bytes` };
  if (expected.sha256 !== undefined && digest.sha256 !== expected.sha256) return { what: 'sha256', expected: expected.sha256, actual: digest.sha256 };
  if (expected.gitSha1 !== undefined && digest.gitSha1 !== expected.gitSha1) return { what: 'git blob sha1', expected: expected.gitSha1, actual: digest.gitSha1 };
  return null;
}

/** A relative path inside the repository (no `..`, no absolute path), as given. */
function repositoryPath(path: string): string {
  const parts = path.split('/');
  if (path === '' || parts.some((part) => part === '' || part === '.' || part === '..' || !/^[A-Za-z0-9._-]+$/.test(part))) {
    throw new PullError('invalid_request', `the ONNX file must be a relative path in the repository, like onnx/model.onnx, not "${path}"`);
  }
  return path;
}

/** The hub's base URL, checked. */
function hubEndpoint(value: string): URL {
  let url: URL | null = null;
  try {
    url = new URL(value.replace(/\/+$/, ''));
  } catch {
    url = null;
  }
  if (url === null || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    throw new PullError('invalid_request', `the hub endpoint (HF_ENDPOINT) must be an http(s) URL like https://huggingface.co, not "${value}"`);
  }
  return url;
}
