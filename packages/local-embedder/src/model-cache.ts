import { existsSync, readFileSync, statSync } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { MANIFEST } from './model-files.js';

// Where pulled models live: one directory per hub repository under the models dir, holding the
// repository's files at their relative paths and, once a pull has finished, the manifest
// (`memory-agents-model.json`, written last by `pullModel`).

/** One file of a pulled model, as the manifest lists it. */
export type ModelFile = {
  /** Its path relative to the model's directory (and in the hub repository), like `onnx/model.onnx`. */
  path: string;
  /** Its size in bytes. */
  size: number;
  /** The sha256 of its content, lowercase hex. */
  sha256: string;
};

/** What the manifest holds: what was pulled, from where, and when. */
export type ModelManifest = {
  /** The hub repository id, `owner/name`. */
  name: string;
  /** The revision asked for (a branch, tag or commit), like `main`. */
  revision: string;
  /** The commit the revision pointed at (the hub's `X-Repo-Commit`), or null when the hub did not say. */
  commit: string | null;
  /** The ONNX file's path in the directory, like `onnx/model.onnx`. */
  onnx: string;
  /** Every file pulled (optional files the repository lacks are not listed). */
  files: ModelFile[];
  /** When the pull finished, ISO 8601. */
  pulledAt: string;
};

const HUB_ID = /^[A-Za-z0-9][A-Za-z0-9._-]*\/[A-Za-z0-9][A-Za-z0-9._-]*$/;

/**
 * Whether `name` is a hub repository id the cache accepts: `owner/name`, each part starting with a
 * letter or digit and made of letters, digits, `.`, `_` and `-`, with no `..` anywhere.
 */
export function isModelName(name: string): boolean {
  return HUB_ID.test(name) && !name.includes('..');
}

/**
 * Where pulled models live: `MEMORY_AGENTS_MODELS_DIR`, else `$XDG_CACHE_HOME/memory-agents/models`
 * (when XDG_CACHE_HOME is an absolute path: the XDG spec says to ignore a relative one), else
 * `~/.cache/memory-agents/models`. Always an absolute path.
 */
export function modelsDir(env: NodeJS.ProcessEnv = process.env): string {
  const explicit = env.MEMORY_AGENTS_MODELS_DIR?.trim();
  if (explicit) return resolve(explicit);
  const xdg = env.XDG_CACHE_HOME?.trim();
  if (xdg && isAbsolute(xdg)) return join(xdg, 'memory-agents', 'models');
  return join(env.HOME?.trim() || homedir(), '.cache', 'memory-agents', 'models');
}

/**
 * The cache directory of a hub model id `owner/name`: `<modelsDir>/owner--name`.
 * @throws Error when `name` is not of that form (see {@link isModelName})
 */
export function modelDirFor(name: string, env: NodeJS.ProcessEnv = process.env): string {
  if (!isModelName(name)) throw new Error(`${JSON.stringify(name)} is not a model name of the form owner/name (e.g. sentence-transformers/all-MiniLM-L6-v2)`);
  return join(modelsDir(env), name.replace('/', '--'));
}

/**
 * The directory of a model given as a path (absolute, or starting with `.` or `~`) or as a hub id
 * whose pull into the cache has finished (its manifest is there and lists files that are); throws a
 * sentence saying how to get it when it is not there.
 */
export function resolveModel(nameOrPath: string, env: NodeJS.ProcessEnv = process.env): string {
  const isPath = isAbsolute(nameOrPath) || nameOrPath.startsWith('.') || nameOrPath.startsWith('~');
  if (isPath) {
    const path = nameOrPath.startsWith('~') ? join(homedir(), nameOrPath.slice(1)) : resolve(nameOrPath);
    if (!existsSync(path) || !statSync(path).isDirectory()) throw new Error(`The model directory ${path} does not exist.`);
    return path;
  }
  const isHubId = isModelName(nameOrPath);
  const dir = isHubId ? modelDirFor(nameOrPath, env) : join(modelsDir(env), nameOrPath);
  if (!isCompleteSync(dir)) throw new Error(`The model ${nameOrPath} is not in ${modelsDir(env)}; run: memory-agents models pull ${isHubId ? nameOrPath : 'owner/name'}`);
  return dir;
}

/** Whether `dir` holds a finished pull: a manifest whose files are all there at their sizes. */
function isCompleteSync(dir: string): boolean {
  if (!existsSync(join(dir, MANIFEST))) return false;
  // A directory a model was copied into by hand may carry a manifest of another shape: it counts.
  let manifest: unknown;
  try {
    manifest = JSON.parse(readFileSync(join(dir, MANIFEST), 'utf8'));
  } catch {
    return true;
  }
  if (!isManifest(manifest)) return true;
  return manifest.files.every((file) => {
    const path = join(dir, file.path);
    return existsSync(path) && statSync(path).size === file.size;
  });
}

/**
 * Reads a model directory's manifest, or returns null when there is none (no pull, or one that has
 * not finished). A manifest that is not valid JSON of the right shape counts as none.
 */
export async function readModelManifest(dir: string): Promise<ModelManifest | null> {
  const text = await readFile(join(dir, MANIFEST), 'utf8').catch(() => null);
  if (text === null) return null;
  try {
    const value: unknown = JSON.parse(text);
    return isManifest(value) ? value : null;
  } catch {
    return null;
  }
}

/**
 * Whether every file the manifest lists is in `dir` with the listed size (a cheap check that nobody
 * deleted or truncated a file since the pull; the content was checked when it was pulled).
 */
export async function hasManifestFiles(dir: string, manifest: ModelManifest): Promise<boolean> {
  for (const file of manifest.files) {
    const found = await stat(join(dir, file.path)).catch(() => null);
    if (found === null || !found.isFile() || found.size !== file.size) return false;
  }
  return true;
}

/** A model directory under the models dir, as {@link listModels} reports it. */
export type CachedModel = { dir: string; complete: true; manifest: ModelManifest; size: number } | { dir: string; complete: false; name: string };

/**
 * The models in the models dir: each directory with a finished pull (its manifest and total size),
 * and each one a pull started but did not finish (`complete: false`, named from its folder).
 */
export async function listModels(env: NodeJS.ProcessEnv = process.env): Promise<CachedModel[]> {
  const root = modelsDir(env);
  const entries = await readdir(root, { withFileTypes: true }).catch(() => []);
  const models: CachedModel[] = [];
  for (const entry of entries.filter((item) => item.isDirectory()).sort((a, b) => a.name.localeCompare(b.name))) {
    const dir = join(root, entry.name);
    const manifest = await readModelManifest(dir);
    if (manifest !== null && (await hasManifestFiles(dir, manifest))) {
      models.push({ dir, complete: true, manifest, size: manifest.files.reduce((sum, file) => sum + file.size, 0) });
    } else {
      models.push({ dir, complete: false, name: entry.name.replace('--', '/') });
    }
  }
  return models;
}

function isManifest(value: unknown): value is ModelManifest {
  if (typeof value !== 'object' || value === null) return false;
  const record = value as Record<string, unknown>;
  return (
    typeof record.name === 'string' &&
    typeof record.revision === 'string' &&
    (record.commit === null || typeof record.commit === 'string') &&
    typeof record.onnx === 'string' &&
    typeof record.pulledAt === 'string' &&
    Array.isArray(record.files) &&
    record.files.every((file: unknown) => {
      const entry = file as Record<string, unknown> | null;
      return typeof entry === 'object' && entry !== null && typeof entry.path === 'string' && typeof entry.size === 'number' && typeof entry.sha256 === 'string';
    })
  );
}
